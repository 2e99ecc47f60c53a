"""The hottest line's chain of owners: where the time between one core's turn with a line and the next one went.

A line that every operation must hold, in turn, in every core (a lock word, a reference count), passes from owner
to owner, and nothing else happens to it meanwhile. Its READ and WRITE events (each the moment a core obtained
the line, shared or unique) then form one chain, and the gaps between consecutive events add up to the trace's
span. Each gap is put under who had the line before and who got it: a core of another socket, another core of the
same socket, or the same core again (a read, then its own write to the line: an upgrade, or a silent one from E).
Count times mean gap, per operation, splits the time per operation exactly by where the line went, which is what
the cost-per-transfer estimate of cohtb/analysis/compare.py cannot: it weighs a transfer by the links' round trip
alone, and a gap holds all of a turn, the transfer and the new owner's time with the line before the next one
took it (a lock's critical section and its hand-over, for one). What a gap is made of, or whether anyone was
waiting during it, is not in the trace; the split is measured, its reading is not."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

from cohtb.contract import Kind

OWNER_KINDS = (Kind.READ, Kind.WRITE)   # a core obtains the line; EVICT and gem5's evidence hand nothing on


class Gaps(BaseModel):
    """The gaps of one kind of turn: how many, and their sum and median (ticks)."""

    count: int
    ticks: int
    median_ticks: int


class LineChain(BaseModel):
    line: int
    span_ticks: int      # from the line's first READ or WRITE in the trace to its last: the sum of all the gaps
    other_socket: Gaps   # the line went to a core of another socket
    same_socket: Gaps    # to another core of the same socket
    same_core: Gaps      # the same core again


def gaps(ticks: np.ndarray) -> Gaps:
    return Gaps(count=len(ticks), ticks=int(ticks.sum()), median_ticks=int(np.median(ticks)) if len(ticks) else 0)


def hottest_chain(recs: np.ndarray) -> LineChain | None:
    """The chain of the line with the most READ and WRITE events (None: the trace has none)."""
    owned = recs[np.isin(recs["kind"], OWNER_KINDS)]
    if len(owned) < 2:
        return None
    lines, counts = np.unique(owned["line"], return_counts=True)
    line = int(lines[np.argmax(counts)])
    chain = owned[owned["line"] == line]
    chain = chain[np.argsort(chain["tick"], kind="stable")]
    tick = chain["tick"].astype(np.int64)
    gap = np.diff(tick)
    same_core = chain["core"][1:] == chain["core"][:-1]
    same_socket = chain["socket"][1:] == chain["socket"][:-1]
    return LineChain(line=line, span_ticks=int(tick[-1] - tick[0]), other_socket=gaps(gap[~same_socket]),
                     same_socket=gaps(gap[same_socket & ~same_core]), same_core=gaps(gap[same_core]))
