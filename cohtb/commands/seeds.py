"""`cohtb seeds`: the experiment of each seed: list them, record one's runs, print published vs simulated."""

from __future__ import annotations

import argparse
from pathlib import Path

from cohtb.commands._shared import add_recording_arguments, print_cost, record, wrap
from cohtb.errors import CohtbError
from cohtb.experiments import power
from cohtb.experiments.judging import history_in, latest_complete
from cohtb.experiments.seeds import EXPERIMENTS
from cohtb.places import CALIBRATION_RUNS, REFERENCE_RUNS, RUNS
from cohtb.report.results import seed_text
from cohtb.run.runs import kept
from cohtb.tables import count



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", help=f"the seed: {', '.join(EXPERIMENTS)} or all (each in turn); without: list the "
                   "experiments")
    p.add_argument("--launch", action="store_true", help="first record the runs that are missing (needs gem5)")
    add_recording_arguments(p, "where --launch puts run directories", "with --launch: print the missing runs, each "
                            "with its predicted gem5 CPU time, and their CPU hours and wall time on --jobs slots, and "
                            "stop")


def run(args: argparse.Namespace) -> int:
    dirs = list(dict.fromkeys([Path(args.runs), RUNS, REFERENCE_RUNS]))
    if args.seed is None:
        for e in EXPERIMENTS.values():
            runs, _ = kept(e.specs(), dirs)
            print(f"seed {e.seed}: {e.title} — {e.base_name} vs {e.new_name}; declaration {e.declaration.id}; "
                  f"{len(runs)}/{len(e.specs())} runs kept")
        return 0
    if args.dry_run and not args.launch:
        raise CohtbError("--dry-run goes with --launch: it prints what the launch would record and cost")
    if args.seed == "all":   # every seed in turn, the full-system one last (its boots are the longest)
        return max(one_seed(k, args, dirs) for k in EXPERIMENTS)
    if args.seed not in EXPERIMENTS:
        raise CohtbError(f"--seed {args.seed}: no such experiment (known: {', '.join(EXPERIMENTS)}, all)")
    return one_seed(args.seed, args, dirs)


def one_seed(seed: str, args: argparse.Namespace, dirs: list[Path]) -> int:
    e = EXPERIMENTS[seed]
    if args.launch:
        power.refuse_without_power(e.specs())   # runs under it could not change its verdict
        _, missing = kept(e.specs(), dirs)
        if e.declaration.rejudges and missing:   # its runs were seen before it was written: none may be added now
            raise CohtbError(f"--launch: declaration {e.declaration.id} judges {e.declaration.runs_id}'s runs again "
                             f"and records none; {len(missing)} of them are missing")
        if args.dry_run:
            print(f"cohtb seeds: seed {e.seed}, declaration {e.declaration.id}: {len(missing)} of {len(e.specs())} "
                  "runs to record")
            print_cost([s for s in e.specs() if s.id in missing], [Path(args.runs), *dirs, CALIBRATION_RUNS], args.jobs)
            return 0
        todo = [s for s in e.specs() if s.id in missing]
        print(f"cohtb seeds: seed {e.seed}, declaration {e.declaration.id}: {len(todo)} of {len(e.specs())} runs to "
              f"record", flush=True)
        if todo and record(todo, args, "cohtb seeds"):
            return 1
    print(wrap(f"seed {e.seed}, declaration {e.declaration.id}: what its rule can say, found before any run "
               "(cohtb/experiments/power.py):"))
    for p in power.powers(e):
        print("\n".join(wrap("  " + line) for line in p.lines()))
    history = history_in(seed, dirs)
    res = history[-1]
    if not res.complete:
        print(wrap(f"seed {e.seed}: {count(len(res.missing), 'run')} of declaration {e.declaration.id} are not recorded (first: "
                   f"{res.missing[0]}); `cohtb seeds --seed {e.seed} --launch` records them with gem5"))
        res = latest_complete(history[:-1])
        if res is None:   # a new experiment: nothing to print yet, and nothing wrong
            print(wrap(f"seed {e.seed}: no declaration of it has all its runs kept yet"))
            return 0
        print(wrap(f"Under the earlier declaration {res.declaration.id}, whose runs are kept:"))
    print(seed_text(res))
    return 0
