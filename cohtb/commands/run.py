"""`cohtb run`: the main job."""

from __future__ import annotations

import argparse
from pathlib import Path

from cohtb import mainjob
from cohtb.commands._shared import add_local_limits


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="results", help="where gem5's runs and the report go (the report cohtb wrote there before is replaced; files "
                   "it did not write are kept); counters go to the analysis cache ($COHTB_CACHE, else ~/.cache/cohtb)")
    p.add_argument("--matrix", default="default", help="the run plan to launch when gem5 is found")
    add_local_limits(p, "parallel gem5 runs, and replays, on this machine (default: its cores)",
                     dirty_when="when gem5 is found: ")
    p.add_argument("--verbose", action="store_true", help="print every configuration's row and every comparison's "
                   "summary too (the report always has them)")


def run(args: argparse.Namespace) -> int:
    return mainjob.run(Path(args.out), args.matrix, args.jobs, args.timeout, args.allow_dirty, args.verbose)
