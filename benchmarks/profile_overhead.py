#!/usr/bin/env python3
"""What the window's profile costs the host: one SE run's gem5 CPU seconds with and without PcProfile (the
pc-profile patch's profile and slow-retirement log; docs/gem5.md, "The profile of the window"), untraced so that
the profile's own cost is not hidden under ProtocolTrace's. Needs a gem5 built with the patch (GEM5_CHI for a
socket machine, GEM5 for the flat one).

    .venv/bin/python benchmarks/profile_overhead.py [--machine westmere-ex-8s-c4] [--sockets 1
        --cores-per-socket 8] [--window-us 200] [--repeat 3]

gem5 is deterministic: the profiled run must end on the same tick, with the same window, as the bare one (the
profile only counts); the benchmark exits 1 if not. It prints each repetition's CPU seconds and the median
ratio; no goal is tested here.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from cohtb.experiments.plans import workload_runs
from cohtb.run import gem5 as gem5_tool
from cohtb.run.spec import RunSpec
from cohtb.se import runner as se_runner
from cohtb.se.workloads import WORKLOADS


def cpu_seconds(spec: RunSpec, gem5: Path, tmp: Path, profile: bool) -> tuple[float, dict]:
    """gem5's CPU seconds for the run, untraced, and its roi.json."""
    cmd = se_runner.command(spec, tmp, gem5, trace=None, config_args=("--no-trace",), profile=profile)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    while (cpu := gem5_tool.reap(proc)) is None:
        time.sleep(0.2)
    if proc.returncode != 0:
        raise SystemExit(f"gem5 exited {proc.returncode} ({'with' if profile else 'without'} the profile): {tmp}/gem5")
    return cpu, json.loads((tmp / "roi.json").read_text())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--machine", default="westmere-ex-8s-c4")
    ap.add_argument("--sockets", type=int, default=1)
    ap.add_argument("--cores-per-socket", type=int, default=8)
    ap.add_argument("--workload", default="lockref", help="an SE workload; its first policy and layout")
    ap.add_argument("--window-us", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    gem5 = gem5_tool.require(args.machine)
    if not gem5_tool.has_profile(gem5):
        raise SystemExit(f"{gem5}: built without the pc-profile patch (docs/gem5.md)")
    w = WORKLOADS[args.workload]
    [spec] = workload_runs(args.workload, [w.policies[0]], [w.layouts[0]], args.sockets, args.cores_per_socket,
                           window_us=args.window_us)
    spec = replace(spec, machine=args.machine)
    ratios = []
    for k in range(1, args.repeat + 1):
        with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
            bare, roi_bare = cpu_seconds(spec, gem5, Path(a), profile=False)
            profiled, roi_prof = cpu_seconds(spec, gem5, Path(b), profile=True)
            same = [roi_bare.get(key) == roi_prof.get(key) for key in ("begin_tick", "end_tick", "final_tick")]
            if not all(same):
                raise SystemExit(f"repetition {k}: the profiled run's ticks differ from the bare run's: "
                                 f"{[roi_bare.get(x) for x in ('begin_tick', 'end_tick', 'final_tick')]} vs "
                                 f"{[roi_prof.get(x) for x in ('begin_tick', 'end_tick', 'final_tick')]}")
            ratios.append(profiled / bare)
            print(f"repetition {k}: {spec.id}: {bare:.1f} s of gem5 CPU without the profile, {profiled:.1f} s with "
                  f"({profiled / bare:.3f}x); the same ticks", flush=True)
    print(f"median: the profile costs {statistics.median(ratios):.3f}x the bare run's gem5 CPU "
          f"({min(ratios):.3f}-{max(ratios):.3f} over {len(ratios)} repetitions)")


if __name__ == "__main__":
    main()
