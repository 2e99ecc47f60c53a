#!/usr/bin/env python3
"""How well `--dry-run` predicts a run's cost (cohtb/run/cost.py), on the kept runs: each run predicted from the
others, two ways, and set beside its measured gem5 CPU seconds (host seconds for runs recorded before those were
kept):

  a repetition      from every other kept run (its configuration's other repetitions among them): what a dry run
                    says of a declaration's missing repetitions
  a new config.     from the kept runs of other configurations only: what a dry run says of a new declaration

Prints, per machine, mode and core, the runs predicted, the median error and the share within 25%.

    .venv/bin/python benchmarks/cost_accuracy.py [RUN_DIRS...]   (default: reference-runs/ and results/runs/)
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from cohtb.places import REFERENCE_RUNS, RUNS
from cohtb.run import cost
from cohtb.run.runs import discover


def errors(kept: list[cost.KeptCost], leave_out) -> dict[str, list[float]]:
    """Per machine, mode and core: each kept run's prediction error from the runs leave_out(run, other) keeps."""
    out: dict[str, list[float]] = {}
    for k in kept:
        p = cost.predict(k.spec, [o for o in kept if o is not k and not leave_out(k, o)])
        if p.seconds is not None:
            key = f"{k.spec.machine} {'full system' if k.spec.kernel else 'SE'} {k.spec.cpu}"
            out.setdefault(key, []).append(p.seconds / k.seconds - 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*", type=Path, default=[REFERENCE_RUNS, RUNS])
    args = ap.parse_args()
    kept = cost.kept_costs(discover([d for d in args.dirs if d.is_dir()]))
    print(f"{len(kept)} kept runs with a measured cost")
    ways = {"a repetition": errors(kept, lambda k, o: False),
            "a new config.": errors(kept, lambda k, o: cost.configuration(o.spec) == cost.configuration(k.spec))}
    print(f"{'machine, mode, core':<42} {'predicting':<14} {'runs':>5} {'median |error|':>15} {'within 25%':>11}")
    for key in sorted({k for e in ways.values() for k in e}):
        for way, by in ways.items():
            e = by.get(key)
            if e:
                within = sum(abs(x) <= 0.25 for x in e) / len(e)
                print(f"{key:<42} {way:<14} {len(e):>5} {statistics.median(map(abs, e)):>14.0%} {within:>11.0%}")


if __name__ == "__main__":
    main()
