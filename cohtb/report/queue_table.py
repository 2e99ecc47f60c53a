"""Per arm of a point experiment in the real kernel: its queued spinlock acquisitions per operation, read from the
kernel's own cache traffic (cohtb/analysis/lock_queue.py). A lock policy's speed-up is explained from the kernel's
side when its arms differ in how often a CPU waited in a spinlock's queue: lockref-off queues on d_lock for a get
or a put that stock-6.12's cmpxchg does without it."""

from __future__ import annotations

from cohtb.analysis import lock_queue
from cohtb.analysis.metrics import RunMetrics
from cohtb.experiments.reproduce import Spread
from cohtb.tables import Table


def queued_per_op(m: RunMetrics) -> float | None:
    """The run's queued acquisitions in its traced region per operation of it; None where not counted."""
    queue = m.analysis.lock_queue
    return sum(queue) / m.run.region_ops if queue is not None and m.run.region_ops else None


def queue_table(title: str, arms: list[tuple[str, list[RunMetrics]]]) -> Table | None:
    """One row per arm whose runs were counted; None when none was (SE runs), or when no run's trace shows a CPU's
    MCS-node line: then either none queued in any run or their lines were named before cohtb/fs/symbols.py named
    per-CPU copies, which a run's names cannot tell apart, so nothing is said."""
    if not any(lock_queue.node_lines(m.run.manifest.kernel_symbols) for _, runs in arms for m in runs):
        return None
    rows = []
    for name, runs in arms:
        values = [v for v in map(queued_per_op, runs) if v is not None]
        if values:
            rows.append([name, Spread(tuple(values)).text(digits=3), str(len(values))])
    if not rows:
        return None
    return Table(title, ["arm", "queued acquisitions per operation (range over repetitions)", "runs"], rows,
                 "From the kernel's side, without running anything in the guest (docs/fs.md, 'The locked share from "
                 "the kernel's side'): each CPU's write to its own qspinlock MCS-node line in the trace marks one "
                 "acquisition that queued with a neighbour in the queue. Not counted: a waiter on the pending bit, and "
                 "one that queued alone; counted besides: a nested slow path or an evicted node line. It covers every "
                 "spinlock, so it is d_lock's where d_lock is the one contended lock (the lockref experiments), not "
                 "in the rwsem ones, whose runs contend on several (the rwsem's, futex buckets, run queues). Over the "
                 "whole window (a collapse's arm includes the time before its first listing), per operation as the "
                 "workload counts them: stat_file one stat(2) (a lockref get and put) or one open and close, rwsem "
                 "one lock/unlock pair, kernel_rwsem one system call of its lock/unlock pairs.")
