"""`cohtb compare`: base vs new, % change tables and an attribution to lines and fields."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cohtb.analysis.compare import (attribution, chain_table, check_comparable, configuration_tables, pair_by_key,
                                    pair_table, parse_by, tell_apart)
from cohtb.analysis.pipeline import metrics_for
from cohtb.analysis.profile import of
from cohtb.commands._shared import wrap
from cohtb.errors import CohtbError
from cohtb.report.profile import side_by_side
from cohtb.run.runs import discover



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("base", help="the base run (or, with --by, a directory of runs)")
    p.add_argument("new", nargs="*", help="runs to compare against the base")
    p.add_argument("--by", dest="key", help="KEY=BASE,NEW: pair runs differing only in KEY (e.g. layout=shared,split)")
    p.add_argument("--analysis", help="where RUN_ID/counters.json are kept (default: the analysis cache)")
    p.add_argument("--allow-mismatch", action="store_true", help="compare runs of different machines or workloads")


def run(args: argparse.Namespace) -> int:
    analysis = Path(args.analysis) if args.analysis else None
    if args.key:
        key, base_v, new_v = parse_by(args.key)
        ms = metrics_for(discover([Path(args.base), *map(Path, args.new)]), analysis)
        pairs = pair_by_key(ms, key, base_v, new_v)
        for t in configuration_tables(pairs, f"{key}={base_v}", f"{key}={new_v}"):
            print(t.text())
    else:
        if not args.new:
            raise CohtbError("compare needs BASE and at least one NEW run (or --by KEY=BASE,NEW over directories of runs)")
        base, *news = metrics_for(discover([Path(args.base)]) + discover([Path(n) for n in args.new]), analysis)
        pairs = [(base, n) for n in news]
    for b, n in pairs:
        b, n = tell_apart(b, n)
        note = check_comparable(b, n, args.allow_mismatch)
        if note:
            print(note, file=sys.stderr)
        print(pair_table(b, n).text())
        table, text = attribution(b, n)
        print(table.text())
        print(wrap(text) + "\n")
        chain = chain_table(b, n)
        if chain:
            print(chain.text())
        profiles = of(b.run), of(n.run)
        if None not in profiles:   # both recorded with a profile: where each spent its window
            print(side_by_side(b.run, profiles[0], n.run, profiles[1]).text() + "\n")
    return 0
