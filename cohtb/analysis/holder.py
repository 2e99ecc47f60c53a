"""A transient lock holder's visits to the contended line, as the trace shows them: when seed 004's lister
took the file dentry's `d_lock`, and how long the line was its to hold.

The lister's CPU touches the dentry's lockref line only while it lists the directory (6.12's offset_readdir:
`find_positive_dentry` locks the dentry, takes a reference with `dget_dlock` and unlocks; the reference is
put after the next entry is found). Its own reads and writes of that line therefore come in bursts, one per
listing, separated by the listing period. Within a burst the first WRITE is the lock's acquisition when the
lock was free (nobody queued for it); a stat's cmpxchg that takes the line away in between makes the
reference's increment a second WRITE, and the unlock follows it as a hit. The span from the first WRITE to
the last WRITE before the lister's next READ of the line (the next sibling pointer, `d_sib`, which shares the
line, or the put's read of the count) is therefore how long the lister held the lock, to within the
unlock's few cycles; no second WRITE means the line stayed with the lister throughout, and the hold was
shorter than a transfer. Once other CPUs queue for the lock, the lister's first WRITE is its own entry into
the queue: only a visit with no queued acquisition just before it reads as a hold
(cohtb/analysis/lock_queue.py counts them)."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

from cohtb.analysis import lock_queue
from cohtb.contract import Kind

GAP_TICKS = 50_000_000        # 50 µs without the lister's access to the line ends a visit (listings: 100s of µs)
LOOKBACK_TICKS = 100_000_000  # "nobody queued": no queued acquisition in the 100 µs before the lister's first write
HELD_FIELD = "file.d_lockref"   # the layout map's name for the lock word's field (cohtb/fs/runner.py)


class Visit(BaseModel):
    first_tick: int             # the holder's first read or write of the line in this visit
    first_write_tick: int | None
    hold_ticks: int | None      # first WRITE to the last WRITE before its next READ; 0: one WRITE only
    last_tick: int              # its last read or write of the line in this visit
    events: int                 # its reads and writes in the visit
    queued_before: int | None = None   # queued acquisitions (any CPU) in LOOKBACK_TICKS before its first write


def visits(recs: np.ndarray, line: int, core: int, gap_ticks: int = GAP_TICKS) -> list[Visit]:
    """The holder's (`core`) bursts of reads and writes of `line` (the gem5 evidence logged at it when others
    take the line is not its access), each a Visit."""
    mine = recs[(recs["line"] == line) & (recs["core"] == core) & np.isin(recs["kind"], (Kind.READ, Kind.WRITE))]
    if not len(mine):
        return []
    ticks = mine["tick"].astype(np.int64)
    starts = [0, *(np.flatnonzero(np.diff(ticks) > gap_ticks) + 1).tolist(), len(mine)]
    out = []
    for a, b in zip(starts, starts[1:]):
        kinds, t = mine["kind"][a:b], ticks[a:b]
        writes = np.flatnonzero(kinds == Kind.WRITE)
        reads = np.flatnonzero(kinds == Kind.READ)
        first_w = int(writes[0]) if len(writes) else None
        hold = None
        if first_w is not None:
            later_reads = reads[reads > first_w]
            until = int(later_reads[0]) if len(later_reads) else len(t)
            held = writes[writes < until]
            hold = int(t[held[-1]] - t[first_w])
        out.append(Visit(first_tick=int(t[0]), first_write_tick=int(t[first_w]) if first_w is not None else None,
                         hold_ticks=hold, last_tick=int(t[-1]), events=b - a))
    return out


def lister_visits(recs: np.ndarray, fields: list, holder_cpu: int, nodes: dict[int, int] | None) -> list[Visit] | None:
    """The lister's visits to the file dentry's lockref line (the layout map's HELD_FIELD), each with the queued
    acquisitions just before it (`nodes`: cohtb/analysis/lock_queue.py; empty: no CPU's node line in the trace,
    so none queued; None: not counted); None if the run's layout has no such field."""
    line = next((f.lines[0] for f in fields if f.label == HELD_FIELD), None)
    if line is None:
        return None
    queued = np.sort(lock_queue.queued(recs, nodes)["tick"].astype(np.int64)) if nodes is not None else None
    out = []
    for v in visits(recs, line, holder_cpu):
        if queued is not None and v.first_write_tick is not None:
            lo, hi = np.searchsorted(queued, [v.first_write_tick - LOOKBACK_TICKS, v.first_write_tick])
            v = v.model_copy(update={"queued_before": int(hi - lo)})
        out.append(v)
    return out
