"""`cohtb results`: docs/results.md, its figures and the generated results blocks, from the bundled runs."""

from __future__ import annotations

import argparse
import sys

from cohtb.report import pages



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--check", action="store_true", help="only say whether they are current (exit 1 if not)")


def run(args: argparse.Namespace) -> int:
    built = pages.build()   # of this checkout, from its bundled runs
    if built.missing:
        print(f"cohtb results: {built.runs:,} runs kept; {built.missing:,} more are declared (by every version of every "
              "seed's declaration) but not kept: each declaration says which on the page", file=sys.stderr)
    if args.check:
        stale = built.stale()
        if stale:
            print(f"not what the kept runs give: {', '.join(map(str, stale))} (run `cohtb results`)", file=sys.stderr)
            return 1
        print(f"{pages.RESULTS}, its seed pages and the results blocks of {blocks(built)} match the kept runs")
        return 0
    built.write()
    print(f"{built.root / pages.RESULTS}: written from {built.runs} runs; seed pages and figures in {pages.FIGURES}/; the results "
          f"blocks of {blocks(built)} updated")
    return 0


def blocks(built: pages.Pages) -> str:
    """The pages whose generated blocks the results write, by their path in the checkout."""
    names = [str(p.relative_to(built.root)) for p, _ in built.blocks]
    return ", ".join(names[:-1]) + " and " + names[-1]
