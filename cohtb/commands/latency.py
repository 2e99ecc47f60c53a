"""`cohtb latency`: the calibration table of cclat runs beside a published part's figures."""

from __future__ import annotations

import argparse
from pathlib import Path

from cohtb.analysis.latency import cells
from cohtb.commands._shared import RUNS_HELP
from cohtb.errors import CohtbError
from cohtb.experiments.calibration import parts
from cohtb.report.latency import table
from cohtb.run.runs import discover


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", help=f"cclat runs: {RUNS_HELP}")
    p.add_argument("--part", help="the published part to compare with (experiments/hardware_latency.toml; "
                                  "default: none)")


def run(args: argparse.Namespace) -> int:
    known = parts()
    if args.part and args.part not in known:
        raise CohtbError(f"--part {args.part}: not a published part (known: {', '.join(known)})")
    measured = [c for r in discover([Path(p) for p in args.runs]) for c in cells(r)]
    print(table(measured, known.get(args.part)).text())
    return 0
