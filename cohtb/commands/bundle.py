"""`cohtb bundle`: finished runs copied into reference-runs/."""

from __future__ import annotations

import argparse
from pathlib import Path

from cohtb.commands._shared import RUNS_HELP
from cohtb.places import REFERENCE_RUNS
from cohtb.run.bundle import bundle
from cohtb.run.runs import discover
from cohtb.tables import count



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", help=RUNS_HELP)
    p.add_argument("--into", default=str(REFERENCE_RUNS.name), help="the directory of bundled runs")


def run(args: argparse.Namespace) -> int:
    runs = discover([Path(r) for r in args.runs])
    size = bundle(runs, Path(args.into))
    print(f"bundled {count(len(runs), 'run')} into {args.into}: {size / 1e6:.2f} MB")
    return 0
