"""Holding the monitor's counts against gem5's own evidence, transfer by transfer (docs/gem5.md, "Reconciling").

A transfer the monitor counts (core C obtains M while O != C was the last writer) must show up at O in gem5 as
`Fwd_GETX` (O still held it modified) or `Inv` (a dirty read had downgraded O to S first); a dirty read from
O must show up at O as `Fwd_GETS`. Events are completion-time, so O's evidence comes before C's completion.
The pairing rule: each event of evidence at core X waits, on its line, until it is claimed by a transfer or
dirty read *from X*; when X obtains the line again (its own READ or WRITE completes) or the trace ends,
whatever is left of X's evidence is gem5's alone. Left-over `Inv`s are not transfer evidence (every sharer
gets one); left-over `Fwd_GETX`s and dirty `Fwd_GETS`s are gem5-only, each in a named class when the trace
explains it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cohtb.contract import Kind, L1State
from cohtb.monitor.models import FieldCounts, IdealModel

READ, WRITE, FWD_GETS, FWD_GETX, INV = Kind.READ, Kind.WRITE, Kind.FWD_GETS, Kind.FWD_GETX, Kind.INV
TOLERANCE = 0.01            # unexplained remainder allowed, as a share of the matched items of a line or run
CONTENDED = 10              # a line with at least this many matched items is held to the tolerance


@dataclass(slots=True)
class LineCheck(FieldCounts):
    """One line's (or a run's) pairing of monitor counts and gem5 evidence."""

    transfersMatched: int = 0
    transfersMonitorOnly: int = 0        # no Fwd_GETX or Inv at the previous owner
    transfersGem5Only: int = 0           # a Fwd_GETX no transfer claimed, not explained below
    dirtyReadsMatched: int = 0
    dirtyReadsMonitorOnly: int = 0       # no Fwd_GETS at the dirty owner
    dirtyReadsGem5Only: int = 0          # a Fwd_GETS in M no dirty read claimed, not explained below
    ownerBeforeTrace: int = 0            # forwarded by a core with no WRITE of the line in the trace (written before it)
    requesterAfterTrace: int = 0         # forwarded, but the trace ended before a requester's completion
    writebackForwards: int = 0           # Fwd_GETS from a writeback buffer (M_I) whose WB_Ack (the EVICT) came first
    dirtyHandedUp: int = 0               # Fwd_GETS in M at a core whose last obtain of the line was a read
    cleanForwards: int = 0               # Fwd_GETX/Fwd_GETS at a core in E: it never wrote the line (rules W, R)

    @property
    def matched(self) -> int:
        return self.transfersMatched + self.dirtyReadsMatched

    @property
    def unexplained(self) -> int:
        return (self.transfersMonitorOnly + self.transfersGem5Only + self.dirtyReadsMonitorOnly
                + self.dirtyReadsGem5Only)

    @property
    def explained(self) -> int:
        return self.ownerBeforeTrace + self.requesterAfterTrace + self.writebackForwards + self.dirtyHandedUp

    def within_tolerance(self) -> bool:
        return self.unexplained <= TOLERANCE * self.matched





class Reconciler:
    """Runs the ideal model over a stream and pairs its transfers and dirty reads with gem5's evidence."""

    def __init__(self, sockets: int, dirty_up: bool = False):
        """dirty_up: the protocol may answer a read with the line unique and dirty (CHI does; MESI_Two_Level's L1
        reaches M only through a WRITE event, so there the same forward is a lost event, left unexplained)."""
        self.ideal = IdealModel(sockets)
        self.dirty_up = dirty_up
        self.lines: dict[int, LineCheck] = {}
        self._evidence: dict[tuple[int, int], list[tuple[int, int]]] = {}   # (line, core) -> [(kind, l1_state)]
        self._wrote: set[tuple[int, int]] = set()                             # (line, core) with a WRITE so far
        self._got_by_read: set[tuple[int, int]] = set()                       # (line, core) last obtained by a READ
        self._finished = False

    def apply_array(self, recs: np.ndarray) -> None:
        for line, core, socket, kind, state in zip(recs["line"].tolist(), recs["core"].tolist(),
                                                   recs["socket"].tolist(), recs["kind"].tolist(),
                                                   recs["l1_state"].tolist()):
            self.apply(line, core, socket, kind, state)
        self.finish()

    def apply(self, line: int, core: int, socket: int, kind: int, l1_state: int) -> None:
        applied = self.ideal.apply(line, core, socket, kind)
        if kind in (FWD_GETS, FWD_GETX, INV):
            self._evidence.setdefault((line, core), []).append((kind, l1_state))
        if kind not in (READ, WRITE):
            return
        old, fx = applied
        chk = self.lines.get(line)
        if chk is None:
            chk = self.lines[line] = LineCheck()
        if fx.transfer:
            if self._claim(line, old.owner, (FWD_GETX, INV)):
                chk.transfersMatched += 1
            else:
                chk.transfersMonitorOnly += 1
        if fx.dirty_read_local or fx.dirty_read_remote:
            if self._claim(line, old.owner, (FWD_GETS,)):
                chk.dirtyReadsMatched += 1
            else:
                chk.dirtyReadsMonitorOnly += 1
        # The core obtains the line again: its evidence of the previous time it held it is settled.
        self._settle(line, core, chk, at_end=False)
        if kind == WRITE:
            self._wrote.add((line, core))
            self._got_by_read.discard((line, core))
        else:
            self._got_by_read.add((line, core))

    def finish(self) -> None:
        """Settles the evidence no completion claimed before the trace ended."""
        if self._finished:
            return
        for line, core in list(self._evidence):
            chk = self.lines.get(line)
            if chk is None:
                chk = self.lines[line] = LineCheck()
            self._settle(line, core, chk, at_end=True)
        self._finished = True

    def totals(self) -> LineCheck:
        out = LineCheck()
        for chk in self.lines.values():
            out.add(chk)
        return out

    def _claim(self, line: int, owner: int, kinds: tuple[int, ...]) -> bool:
        waiting = self._evidence.get((line, owner))
        if waiting:
            for i, (kind, _) in enumerate(waiting):
                if kind in kinds:
                    del waiting[i]
                    return True
        return False

    def _settle(self, line: int, core: int, chk: LineCheck, at_end: bool) -> None:
        for kind, state in self._evidence.pop((line, core), ()):
            if kind == INV:
                continue                      # an Inv at a sharer, or a recall: not transfer evidence
            if state == L1State.E:
                chk.cleanForwards += 1
            elif kind == FWD_GETS and state == L1State.M_I:
                # The L2 acks a writeback at once in MT_SB (it stalls only in MT_MB/SS_MB), so the evicting owner's
                # WB_Ack, its EVICT, can complete before the reader's data: the monitor saw no dirty owner.
                chk.writebackForwards += 1
            elif (line, core) not in self._wrote:
                chk.ownerBeforeTrace += 1
            elif self.dirty_up and kind == FWD_GETS and state == L1State.M and (line, core) in self._got_by_read:
                # A CHI socket cache that holds a written-back line dirty may answer a read with it unique and
                # dirty (UD): the reader holds dirty data without a store, and a later reader's data comes from
                # it. The counting rules make only a writer a dirty owner, so the monitor counts no dirty read.
                chk.dirtyHandedUp += 1
            elif at_end:
                chk.requesterAfterTrace += 1
            elif kind == FWD_GETX:
                chk.transfersGem5Only += 1
            else:
                chk.dirtyReadsGem5Only += 1


def reconcile(recs: np.ndarray, sockets: int, dirty_up: bool = False) -> Reconciler:
    r = Reconciler(sockets, dirty_up)
    r.apply_array(recs)
    return r
