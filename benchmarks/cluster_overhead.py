#!/usr/bin/env python3
"""What sending runs to a Dask cluster costs, and what a cluster would give the seed program.

1. A matrix (smoke by default) recorded on this machine's slots, then on a loopback cluster of as many one-thread
   worker processes: wall time of each and the cluster's cost per run. gem5 is GEM5 / gem5.opt when found, else
   the tests' stand-in (then the runs take about a second each and the cost per run is what is measured).
2. A projection of the seed program (every run the current declarations want) on 1, 8 and 32 workers, from the
   host times the bundled runs recorded (each spec by the runs of its configuration, full-system boots by their
   checkpoints), scheduled longest first.

    .venv/bin/python benchmarks/cluster_overhead.py [--matrix smoke] [--slots 2]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from distributed import LocalCluster

from cohtb import launch
from cohtb.experiments.plans import plan
from cohtb.experiments.seeds import EXPERIMENTS
from cohtb.places import REFERENCE_RUNS, ROOT
from cohtb.run import executors, gem5
from cohtb.run.runs import discover

STAND_IN = ROOT / "tests" / "fake_gem5.py"


def timed_launch(specs, runs: Path, executor) -> float:
    t0 = time.monotonic()
    outcomes = launch.launch(specs, runs, timeout=3600, executor=executor)
    bad = [o for o in outcomes if o.status != "done"]
    if bad:
        raise SystemExit(f"{bad[0].spec.id}: {bad[0].status} {bad[0].error}")
    return time.monotonic() - t0


def overhead(matrix: str, slots: int) -> None:
    if gem5.find() is None:
        os.environ["GEM5"] = str(STAND_IN)
        print(f"gem5 not found: the stand-in ({STAND_IN.name}) records the runs")
    specs = plan(matrix)
    with tempfile.TemporaryDirectory(prefix="cohtb-cluster-bench-") as tmp:
        local = timed_launch(specs, Path(tmp) / "local", executors.LocalPool(slots))
        with LocalCluster(n_workers=slots, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address="127.0.0.1:0") as cluster:
            dask = executors.DaskCluster(cluster.scheduler_address)
            try:
                remote = timed_launch(specs, Path(tmp) / "dask", dask)
            finally:
                dask.close()
    print(f"{matrix}: {len(specs)} runs; {slots} local slots {local:.1f} s, a loopback cluster of {slots} workers "
          f"{remote:.1f} s: {(remote - local) / len(specs) * slots:+.2f} s per run on the cluster")


def projection(workers: tuple[int, ...]) -> None:
    """Makespan of the seed program on N workers, from the bundled runs' host times."""
    by_config: dict[str, list[float]] = {}
    boots: dict[tuple, float] = {}
    for r in discover([REFERENCE_RUNS]):
        by_config.setdefault(_config(r.spec), []).append(r.manifest.gem5.host_seconds)
        if r.manifest.checkpoint:
            boots[(r.spec.kernel, r.spec.sockets, r.spec.cores_per_socket)] = r.manifest.checkpoint.host_seconds
    seconds, guessed = [], 0
    for e in EXPERIMENTS.values():
        for s in e.specs():
            known = by_config.get(_config(s))
            if known is None:   # a configuration no bundled run has: the median of its workload's
                known = [t for k, ts in by_config.items() if k.startswith(s.workload) for t in ts] or [60.0]
                guessed += 1
            seconds.append(statistics.mean(known))
    kernels = {(s.kernel, s.sockets, s.cores_per_socket) for e in EXPERIMENTS.values() for s in e.specs() if s.kernel}
    boot = sum(boots.get(k, max(boots.values(), default=700.0)) for k in kernels)
    print(f"seed program: {len(seconds)} runs, {sum(seconds) / 3600:.1f} h of gem5 in all "
          f"({guessed} runs' times from their workload's), {len(kernels)} boots ({boot:.0f} s, on the client first)")
    for n in workers:
        finish = [0.0] * n
        for t in sorted(seconds, reverse=True):   # longest first, each to the worker free soonest
            i = finish.index(min(finish))
            finish[i] += t
        print(f"  {n:3d} workers: {(boot + max(finish)) / 3600:.2f} h")


def _config(spec) -> str:
    """A run's configuration whatever its repetition and declaration: what its host time depends on."""
    return replace(spec, declaration="").repetition_of


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matrix", default="smoke")
    ap.add_argument("--slots", type=int, default=2)
    args = ap.parse_args()
    overhead(args.matrix, args.slots)
    projection((1, 8, 32))


if __name__ == "__main__":
    main()
