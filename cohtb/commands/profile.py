"""`cohtb profile`: where each run's simulated time went, in perf report's shape (cohtb/analysis/profile.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cohtb.analysis.profile import hot_instructions, of
from cohtb.commands._shared import RUNS_HELP, non_negative
from cohtb.errors import CohtbError
from cohtb.report.profile import TOP, instructions_table, lines_table, table
from cohtb.run.runs import discover


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", help=RUNS_HELP)
    p.add_argument("--top", type=non_negative, default=TOP, help="functions shown per run; the rest in one row")


def run(args: argparse.Namespace) -> int:
    runs = discover([Path(p) for p in args.runs])
    profiled = [(r, of(r)) for r in runs]
    missing = [r.id for r, rows in profiled if rows is None]
    if len(missing) == len(runs):
        raise CohtbError(f"no profile in {', '.join(missing)}: a run has one when its gem5 was built with the "
                         "pc-profile patch (docs/gem5.md)")
    for n, (r, rows) in enumerate(profiled):
        if n:
            print()
        print(f"{r.id}: no profile (recorded without one)" if rows is None else table(r, rows, args.top).text())
        doc = r.profile() if rows is not None else None
        if doc and doc.get("addresses"):
            print()
            print(instructions_table(r, hot_instructions(doc, r.region_ops), args.top).text())
        if doc and doc.get("lines"):
            print()
            print(lines_table(r, doc).text())
    return 0
