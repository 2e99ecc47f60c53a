"""What runs cost before they run: each run's gem5 CPU seconds predicted from the kept runs' measured ones, and the
wall time of a set of runs on a number of slots.

A run's cost depends most on what it simulates (machine, full system or not, workload, kernel) and then on its size
(CPUs times the simulated span, or times the operations of a fixed-work run). So a run is predicted from the kept
runs nearest to it: the mean of those of its very configuration (every field but what only varies between
repetitions), else of its configuration with another lock or layout (the other arm of its comparison: the same
machine, workload and size, another kernel variant or policy), else a fixed cost per run plus a cost per unit of size fitted over the kept runs of its workload and
kernel, of its workload, of its machine and mode, or of its cache hierarchy, core and mode, the first of these that has
any. Each prediction says which it used. A kept run's cost is gem5's CPU seconds (the host's measure of gem5 alone, which a loaded host does not
stretch); a run recorded before they were kept gives its host seconds."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, replace

import numpy as np

from cohtb.run.machines import core_of, hierarchy_of
from cohtb.run.runs import Run
from cohtb.run.spec import RunSpec

# What varies between a configuration's repetitions and not the work asked of gem5.
REPETITION_FIELDS = {"seed": 0, "home_socket": 0, "placement": 0, "declaration": ""}


def simulated_work(spec: RunSpec) -> float:
    """What a run asks of gem5, to weigh runs' costs by: its CPUs times its simulated span (a timed run's warm-up
    and window) or times its operations per thread (fixed work)."""
    return spec.cores * (spec.ops or spec.warmup_us + spec.window_us)


def cost_per_run(sized: list[tuple[float, float]]) -> tuple[float, float]:
    """(fixed seconds per run, seconds per unit of work) from runs done: (size, seconds). Each run also pays a
    cost its size does not set (a restore, the set-up), which a small run feels most, so once runs of two sizes are
    done the line through them is fitted (least squares); until then, or where the fit would give a negative part,
    the cost is taken as proportional to the size."""
    sizes, seconds = np.array(sized).T
    proportional = (0.0, float(seconds.sum() / sizes.sum()))
    if np.ptp(sizes) == 0:
        return proportional
    per_work, fixed = np.polyfit(sizes, seconds, 1)
    return (float(fixed), float(per_work)) if fixed >= 0 and per_work >= 0 else proportional


@dataclass(frozen=True)
class KeptCost:
    spec: RunSpec
    seconds: float   # gem5's CPU seconds, else the run's host seconds


@dataclass(frozen=True)
class Prediction:
    seconds: float | None   # None: no kept run to predict from
    basis: str


def kept_costs(runs: list[Run]) -> list[KeptCost]:
    """Each run's measured cost, once per run id (a run kept both where it was recorded and in the bundle is one)."""
    out, seen = [], set()
    for run in runs:
        if run.id in seen:
            continue
        seen.add(run.id)
        gem5 = run.manifest.gem5
        seconds = gem5.cpu_seconds if gem5.cpu_seconds is not None else gem5.host_seconds
        if seconds:
            out.append(KeptCost(run.spec, float(seconds)))
    return out


def configuration(spec: RunSpec) -> RunSpec:
    return replace(spec, **REPETITION_FIELDS)


# The groups a run is predicted from when its configuration was never kept, nearest first: each a name and the
# fields its runs share with the one predicted. Timed and fixed-work runs never share a group (their sizes are in
# different units).
GROUPS = (("its workload and kernel", lambda s: (s.machine, s.cpu, s.traced, bool(s.ops), s.workload, s.kernel)),
          ("its workload", lambda s: (s.machine, s.cpu, s.traced, bool(s.ops), s.workload, bool(s.kernel))),
          ("its machine and mode", lambda s: (s.machine, s.cpu, s.traced, bool(s.ops), bool(s.kernel))),
          ("its hierarchy, core and mode", lambda s: (hierarchy_of(s.machine), core_of(s.machine), s.cpu, s.traced,
                                                      bool(s.ops), bool(s.kernel))))


def another_lock(spec: RunSpec) -> RunSpec:
    """Its configuration with the lock and layout left out: the kernel variant, or an SE run's policy and layout."""
    return replace(configuration(spec), kernel="", policy="", layout="")


def predict(spec: RunSpec, kept: list[KeptCost]) -> Prediction:
    for name, key in (("its configuration", configuration), ("its configuration with another lock or layout",
                                                             another_lock)):
        same = [k.seconds for k in kept if key(k.spec) == key(spec)]
        if same:
            return Prediction(float(np.mean(same)), f"mean of {len(same)} kept run{'s' if len(same) > 1 else ''} "
                                                    f"of {name}")
    for name, key in GROUPS:
        members = [k for k in kept if key(k.spec) == key(spec)]
        if members:
            fixed, per_work = cost_per_run([(simulated_work(k.spec), k.seconds) for k in members])
            return Prediction(fixed + per_work * simulated_work(spec),
                              f"fitted over {len(members)} kept run{'s' if len(members) > 1 else ''} of {name}"
                              + beyond(spec, [k.spec for k in members]))
    return Prediction(None, "no kept run of its cache hierarchy and core in its mode")


def beyond(spec: RunSpec, fitted: list[RunSpec]) -> str:
    """What of a run the runs its cost is fitted over never ran, said with the prediction (the fit carries their cost
    per unit of work over to it): its kernel, or its shape (sockets x cores). A cost per CPU and simulated µs carries over between sizes and kernels only where the work per
    CPU is alike: a spinning lock on more CPUs, or an out-of-order core spinning, does far more work per simulated
    µs than a run that waits on one line."""
    missing = ([f"kernel {spec.kernel}"] if spec.kernel and all(f.kernel != spec.kernel for f in fitted) else []) + \
              ([f"{spec.sockets}x{spec.cores_per_socket}"]
               if all((f.sockets, f.cores_per_socket) != (spec.sockets, spec.cores_per_socket) for f in fitted) else [])
    return f"; none of them ran {' or '.join(missing)}" if missing else ""


def wall_seconds(costs: list[float], slots: int) -> float:
    """The time `costs` take on `slots` parallel slots, longest first, each to the slot free soonest."""
    free = [0.0] * max(1, slots)
    for c in sorted(costs, reverse=True):
        heapq.heapreplace(free, free[0] + c)
    return max(free)
