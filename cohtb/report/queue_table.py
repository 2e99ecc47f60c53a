"""Per arm of a point experiment in the real kernel: its queued spinlock acquisitions per operation, read from the
kernel's own cache traffic (cohtb/analysis/lock_queue.py). A lock policy's speed-up is explained from the kernel's
side when its arms differ in how often a CPU waited in a spinlock's queue: lockref-off queues on d_lock for a get
or a put that stock-6.12's cmpxchg does without it."""

from __future__ import annotations

from cohtb.analysis.metrics import RunMetrics
from cohtb.experiments.reproduce import Spread
from cohtb.tables import Table


def queued_per_op(m: RunMetrics) -> float | None:
    """The run's queued acquisitions in its traced window over its window's operations; None where not counted."""
    queue = m.analysis.lock_queue
    return sum(queue) / m.run.ops if queue is not None and m.run.ops else None


def queue_table(title: str, arms: list[tuple[str, list[RunMetrics]]]) -> Table | None:
    """One row per arm whose runs were counted; None when none was (SE runs, kernels without named MCS-node
    lines)."""
    rows = []
    for name, runs in arms:
        values = [v for v in map(queued_per_op, runs) if v is not None]
        if values:
            rows.append([name, Spread(tuple(values)).text(digits=3), str(len(values))])
    if not rows:
        return None
    return Table(title, ["arm", "queued acquisitions per operation (range over repetitions)", "runs"], rows,
                 "From the kernel's side, without running anything in the guest: each CPU's writes to its own qspinlock "
                 "MCS-node line in the trace, one per acquisition that waited in a spinlock's queue behind another "
                 "waiter (docs/fs.md, 'The locked share from the kernel's side'). Close, not exact: a CPU that waited "
                 "alone, on the pending bit, is not counted, and every spinlock is, so it reads as the contended "
                 "lock's where that is the one contended lock. Per operation of the window.")
