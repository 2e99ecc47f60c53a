"""The hottest line's chain of owners: where the time between one core's turn with a line and the next one went.

A line that every operation must hold, in turn, in every core (a lock word, a reference count), passes from owner
to owner. Its READ and WRITE events (each the moment a core obtained the line, shared or unique) form one chain,
and the gaps between consecutive events add up to the line's span in the trace. Each gap is put under who had
the line before and who got it: a core of another socket, another core of the same socket, or the same core again
(a read, then its own write to the line: an upgrade, or a silent one from E). Count times mean gap splits the
line's span exactly by where the line went, which the cost-per-transfer estimate of cohtb/analysis/compare.py
cannot: it weighs a transfer by the links' round trip alone, while a gap holds all of a turn, the transfer and
the new owner's time with the line before the next one took it (a lock's critical section and its hand-over,
for one). What a gap is made of, or whether anyone was waiting during it, is not in the trace; the split is
measured, its reading is not. Events at one tick are taken in the stream's order (gem5's), which decides the
kind of the gap of 0 between them and of the one after."""

from __future__ import annotations

import numpy as np
from pydantic import BaseModel

from cohtb.contract import Kind

OWNER_KINDS = (Kind.READ, Kind.WRITE)   # a core obtains the line; EVICT and gem5's evidence hand nothing on


class Gaps(BaseModel):
    """The gaps of one kind of turn: how many, and their sum (ticks: ps)."""

    count: int
    ticks: int


class LineChain(BaseModel):
    line: int
    span_ticks: int      # from the line's first READ or WRITE in the trace to its last: the sum of all the gaps
    other_socket: Gaps   # the line went to a core of another socket
    same_socket: Gaps    # to another core of the same socket
    same_core: Gaps      # the same core again


def gaps(ticks: np.ndarray) -> Gaps:
    return Gaps(count=len(ticks), ticks=int(ticks.sum()))


def chain(recs: np.ndarray, line: int) -> LineChain | None:
    """The line's chain of owners (None: fewer than two READ or WRITE events on it)."""
    owned = recs[(recs["line"] == line) & np.isin(recs["kind"], OWNER_KINDS)]
    if len(owned) < 2:
        return None
    owned = owned[np.argsort(owned["tick"], kind="stable")]
    tick = owned["tick"].astype(np.int64)
    gap = np.diff(tick)
    same_core = owned["core"][1:] == owned["core"][:-1]
    same_socket = owned["socket"][1:] == owned["socket"][:-1]
    return LineChain(line=line, span_ticks=int(tick[-1] - tick[0]), other_socket=gaps(gap[~same_socket]),
                     same_socket=gaps(gap[same_socket & ~same_core]), same_core=gaps(gap[same_core]))
