"""The lister's takes of the file dentry's lock, listing by listing, over the repetitions of each kernel that
lists: when it came, whether stats were already queued for the lock, how long it held the lock when none
were, and how long its visit to the line lasted (cohtb/analysis/holder.py reads them from the trace)."""

from __future__ import annotations

from cohtb.experiments.reproduce import SeriesResult, Spread
from cohtb.tables import Table

NOTE = ("From each run's trace (cohtb/analysis/holder.py): the lister's reads and writes of the file dentry's "
        "lockref line come in one burst per listing. 'At': its first, from the window's start. 'Queued before': "
        "queued spinlock acquisitions, by any CPU, in the 100 µs before its first write (each CPU's writes to its "
        "own qspinlock MCS-node line: cohtb/analysis/lock_queue.py). 'Held': from the lister's first write of the "
        "line, the lock's acquisition, to its last write before it read the line again, within the unlock's few "
        "cycles of how long it held the lock; 0 means the line never left it, so the hold was shorter than one "
        "transfer. It is read only where nobody had queued (n: how many repetitions): behind a queue, the "
        "lister's first write is its own place in the queue. 'Visit': its first to its last access of the line, "
        "the put included.")


def _spread(values: list[float], scale: float, digits: int) -> str:
    return Spread(tuple(values)).text(scale, digits) if values else "-"


def lister_table(sr: SeriesResult, title: str) -> Table | None:
    """One row per (kernel, listing): mean (min-max) over the repetitions; None if no run has visits."""
    rows = []
    for label, runs in sr.runs.items():
        per_run = [(m, m.analysis.lister_visits or []) for m in runs]
        for k in range(max((len(v) for _, v in per_run), default=0)):
            at, queued, held, visit = [], [], [], []
            for m, vs in per_run:
                if k >= len(vs):
                    continue
                v, begin = vs[k], m.run.manifest.roi.begin_tick
                at.append((v.first_tick - begin) / 1e6)
                visit.append((v.last_tick - v.first_tick) / 1e6)
                if v.queued_before is not None:
                    queued.append(v.queued_before)
                if v.queued_before == 0 and v.hold_ticks is not None:
                    held.append(v.hold_ticks / 1e3)
            rows.append([label, str(k + 1), _spread(at, 1, 1), _spread(queued, 1, 0),
                         f"{_spread(held, 1, 0)} (n={len(held)})", _spread(visit, 1, 1)])
    if not rows:
        return None
    return Table(title, ["kernel", "listing", "at (µs into the window)", "queued before", "held (ns)", "visit (µs)"],
                 rows, NOTE)
