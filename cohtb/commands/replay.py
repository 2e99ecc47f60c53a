"""`cohtb replay`: runs' (or bare event files') events through the Verilated monitor."""

from __future__ import annotations

import argparse
from pathlib import Path

from cohtb.analysis.analyse import analyse, analyse_event_file
from cohtb.analysis.pipeline import counters_path
from cohtb.atomic import writable_dir
from cohtb.commands._shared import RUNS_HELP, non_negative, wrap
from cohtb.report.lines import line_table
from cohtb.run.runs import discover



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", help=RUNS_HELP + ", or bare event files")
    p.add_argument("--check", action="store_true", help="also run the bit-exact model and fail on any difference")
    p.add_argument("--out", help="write RUN_ID/counters.json here (default: the analysis cache, never the run; a bare "
                   "event file's counters are written only here)")
    p.add_argument("--lines", type=non_negative, default=10, help="print the N lines with the most transfers and dirty reads (0: none)")


def run(args: argparse.Namespace) -> int:
    analysis_dir = writable_dir(args.out) if args.out else None
    files = [Path(r) for r in args.runs if Path(r).is_file()]
    runs = discover([Path(r) for r in args.runs if not Path(r).is_file()]) if len(files) < len(args.runs) else []
    done = []
    for f in files:
        path = analysis_dir / f.name / "counters.json" if analysis_dir else None
        done.append((f.name, analyse_event_file(f, path, check_model=args.check), path))
    for r in runs:
        path = counters_path(r, analysis_dir)
        done.append((r.id, analyse(r, path, check_model=args.check), path))
    for name, doc, path in done:
        g, perf, ideal = doc.rtl.totals, doc.replay, doc.ideal.totals
        print(wrap(f"{name}: {perf.events:,} events through the Verilated monitor ({doc.variant}, "
                   f"{perf.eventsPerSecond / 1e6:.1f} M events/s)"))
        print(f"  RTL vs model: {doc.model_check}")
        if path:
            print(f"  counters: {path}")
        print(f"  monitor RTL (bounded line table): transfers {g['transfers']:,}, cross-socket "
              f"{g['crossSocketTransfers']:,}, dirty reads (HITM) {doc.rtl.dirty_reads:,}")
        print(f"  ideal model (every line, as below): transfers {ideal.transfers:,}, "
              f"cross-socket {ideal.crossSocketTransfers:,}, dirty reads (HITM) {ideal.dirty_reads:,}")
        print(f"  against gem5: {doc.gem5.verdict}")
        t = doc.gem5.totals
        print(f"  explained (docs/gem5.md, 'Reconciling'): owner before the trace {t.ownerBeforeTrace:,}, requester "
              f"after it {t.requesterAfterTrace:,}, writeback forwards {t.writebackForwards:,}, dirty handed up "
              f"{t.dirtyHandedUp:,}; clean forwards {t.cleanForwards:,}")
        if args.lines:
            print(line_table(doc, args.lines).text())
    return 0
