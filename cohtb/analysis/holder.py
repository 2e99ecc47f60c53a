"""A transient lock holder's visits to the contended line, as the trace shows them: when seed 004's lister
took the file dentry's `d_lock`, and how long the line was its to hold.

The lister's CPU touches the dentry's lockref line only while it lists the directory (6.12's offset_readdir:
`find_positive_dentry` locks the dentry, takes a reference with `dget_dlock` and unlocks; the reference is
put after the next entry is found). Its events on that line therefore come in bursts, one per listing,
separated by the listing period. Within a burst the first WRITE is the lock's acquisition when the lock was
free (the first listing, before anyone queued); a stat's cmpxchg that takes the line away in between makes
the reference's increment a second WRITE, and the unlock follows it as a hit. The span from the first WRITE
to the last WRITE before the lister's first READ of the burst (its put reads the count first) is therefore
how long the lister held the lock, to within the unlock's few cycles; no second WRITE means the line stayed
with the lister throughout, and the hold is shorter than a transfer. Once other CPUs queue for the lock, the
lister's first WRITE is its own entry into the queue, so only a burst that starts with no queue reads as a
hold (`cohtb/analysis/lock_queue.py` says whether anyone was queued)."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

from cohtb.contract import Kind

GAP_TICKS = 50_000_000   # 50 µs of silence on the line ends a visit: listings are hundreds of µs apart
HELD_FIELD = "file.d_lockref"   # the layout map's name for the lock word's field (cohtb/fs/runner.py)


class Visit(BaseModel):
    first_tick: int             # the holder's first event on the line in this visit
    first_write_tick: int | None
    hold_ticks: int | None      # first WRITE to the last WRITE before its first READ; 0: one WRITE only
    last_tick: int              # its last event on the line in this visit
    events: int


def visits(recs: np.ndarray, line: int, core: int, gap_ticks: int = GAP_TICKS) -> list[Visit]:
    """The holder's (`core`) bursts of events on `line`, each a Visit."""
    mine = recs[(recs["line"] == line) & (recs["core"] == core)]
    if not len(mine):
        return []
    ticks = mine["tick"].astype(np.int64)
    starts = [0, *(np.flatnonzero(np.diff(ticks) > gap_ticks) + 1).tolist(), len(mine)]
    out = []
    for a, b in zip(starts, starts[1:]):
        burst = mine[a:b]
        kinds, t = burst["kind"], burst["tick"].astype(np.int64)
        writes = np.flatnonzero(kinds == Kind.WRITE)
        reads = np.flatnonzero(kinds == Kind.READ)
        first_w = int(writes[0]) if len(writes) else None
        hold = None
        if first_w is not None:
            until = int(reads[reads > first_w][0]) if (reads > first_w).any() else len(burst)
            held = writes[(writes >= first_w) & (writes < until)]
            hold = int(t[held[-1]] - t[first_w])
        out.append(Visit(first_tick=int(t[0]), first_write_tick=int(t[first_w]) if first_w is not None else None,
                         hold_ticks=hold, last_tick=int(t[-1]), events=len(burst)))
    return out


def lister_visits(recs: np.ndarray, fields: list, holder_cpu: int) -> list[Visit] | None:
    """The lister's visits to the file dentry's lockref line (the layout map's HELD_FIELD); None if the run's
    layout has no such field."""
    line = next((f.lines[0] for f in fields if f.label == HELD_FIELD), None)
    return None if line is None else visits(recs, line, holder_cpu)
