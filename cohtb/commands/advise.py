"""`cohtb advise`: the first step of layout advice, per run: its objects' fields on the hottest lines classified by
the misses their bytes took, and the false-sharing pairs (cohtb/analysis/advice.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from cohtb.analysis.advice import false_sharing, fields_on_hot_lines
from cohtb.commands._shared import RUNS_HELP
from cohtb.report.advice import fields_table, pairs_text
from cohtb.run.runs import discover


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", help=f"runs recorded with a profile: {RUNS_HELP}")


def run(args: argparse.Namespace) -> int:
    for n, r in enumerate(discover([Path(p) for p in args.runs])):
        fields = fields_on_hot_lines(r)
        print(("\n" if n else "") + fields_table(r, fields).text())
        print(pairs_text(r, false_sharing(fields)))
    return 0
