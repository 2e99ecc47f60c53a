"""Reference models of the coherence monitor: the counting rules of docs/counting-rules.md.

`BoundedModel` mirrors the RTL bit for bit: the same set-associative line table (indexing, first-invalid
allocation, round-robin or LRU victim), the same Space-Saving hot-line table with the same tie-break, the
same saturation. `IdealModel` applies the same rules to every line without bounds and keeps per-line
statistics for reports (`cohtb.analysis.reconcile` holds its counts against gem5's own evidence).

Both apply the rules through `apply_rules`, so the rule table is implemented once in Python; comments name
the table's rules (W, R, E, X).
"""

from __future__ import annotations

from collections import Counter as Tally
from collections import deque
from dataclasses import dataclass, fields
from typing import Iterable

import numpy as np

from cohtb.contract import KIND_COUNTERS, STATE_KINDS, Kind
from cohtb.monitor.config import MonitorParams
from cohtb.monitor.counters import Counters

READ, WRITE, EVICT = Kind.READ, Kind.WRITE, Kind.EVICT
_CHANGES_STATE = frozenset(int(k) for k in STATE_KINDS)   # rule X: the other kinds change no state
_ALLOCATES = frozenset((int(READ), int(WRITE)))             # the kinds that bring an untracked line into the table
_COPY_GONE = frozenset((int(EVICT),))                       # rule E: the core's copy is gone
assert _ALLOCATES | _COPY_GONE == _CHANGES_STATE, "apply_rules implements exactly the contract's state-changing kinds"

# Structural coverage bins, beside kind x line state: what stresses the table, the hot-line table and the counters.
# same-set-D-apart: a READ/WRITE/EVICT on the set one of the D-th event before it changed (D = 1..5: the writes the
# RTL forwards, to S4 and to S3 from its four registers of recent writes, D = 5 being the RAM write in the clock of
# the read; D = 6: the first its RAM read sees).
FORWARD_DISTANCES = (1, 2, 3, 4, 5, 6)
# hot-same-D-apart: a ping-pong item on the line of the item D events before (D = 1, 2: the hot-line table's update
# sees its two last writes only through its own forwarding); hot-replaces-recent: a miss replaces the entry one of
# those two items wrote; hot-after-eviction: an item on the line one of those two items' misses evicted (the
# table's compare still saw it).
HOT_FORWARD_DISTANCES = (1, 2)
STRUCTURAL_BINS = ("state-eviction", "hot-replacement", *(f"same-set-{d}-apart" for d in FORWARD_DISTANCES),
                   *(f"hot-same-{d}-apart" for d in HOT_FORWARD_DISTANCES), "hot-replaces-recent", "hot-after-eviction",
                   "saturation", "tap-drop", "rejected")

# Line state seen by the requesting core before its event (docs/counting-rules.md; coverage bins).
LINE_STATES = (
    "untracked", "shared-not-holder", "shared-holder", "mine-dirty", "mine-clean",
    "other-dirty", "other-clean-holder", "other-clean-not-holder",
)


@dataclass(slots=True)
class LineState:
    """What the monitor remembers of one line: the last writer (owner), whether its copy is dirty, the holders."""

    owner_valid: bool = False
    owner: int = 0
    owner_socket: int = 0
    dirty: bool = False
    holders: int = 0       # bit c: core c holds a copy

    @property
    def free(self) -> bool:
        return not self.holders and not self.owner_valid


def line_state(entry: LineState | None, core: int) -> str:
    """The state's name in the rule table, as `core` sees it."""
    if entry is None or entry.free:
        return "untracked"
    holder = bool(entry.holders >> core & 1)
    if not entry.owner_valid:
        return "shared-holder" if holder else "shared-not-holder"
    if entry.owner == core:
        return "mine-dirty" if entry.dirty else "mine-clean"
    if entry.dirty:
        return "other-dirty"
    return "other-clean-holder" if holder else "other-clean-not-holder"


@dataclass(slots=True)
class Effects:
    """What one event adds to the counters (the table's effect columns)."""

    transfer: bool = False
    cross_socket: bool = False
    dirty_read_local: bool = False
    dirty_read_remote: bool = False
    invalidations: int = 0
    from_socket: int = 0     # the old owner's socket (the matrix row of a transfer)


def apply_rules(old: LineState, core: int, socket: int, kind: int) -> tuple[LineState, Effects]:
    """One event on a line in state `old`: its effects and the line's new state."""
    bit = 1 << core
    owner_other = old.owner_valid and old.owner != core
    remote = old.owner_socket != socket
    fx = Effects(from_socket=old.owner_socket)
    new = LineState(old.owner_valid, old.owner, old.owner_socket, old.dirty, old.holders)
    if kind == WRITE:
        # Rule W: a transfer when another core was the last writer; every other holder is invalidated.
        fx.transfer = owner_other
        fx.cross_socket = owner_other and remote
        fx.invalidations = (old.holders & ~bit).bit_count()
        new.owner_valid, new.owner, new.owner_socket, new.dirty, new.holders = True, core, socket, True, bit
    elif kind == READ:
        # Rule R: a dirty read when another core's copy is dirty; the line is clean afterwards.
        dirty_read = old.dirty and owner_other
        fx.dirty_read_remote = dirty_read and remote
        fx.dirty_read_local = dirty_read and not remote
        new.dirty = old.dirty and not dirty_read
        new.holders = old.holders | bit
    elif kind in _COPY_GONE:
        # Rule E: the core leaves the holders; an owner that leaves takes its ownership with it.
        new.holders = old.holders & ~bit
        if old.owner_valid and old.owner == core:
            new.owner_valid = new.dirty = False
    # Rule X (FWD_GETS, FWD_GETX, INV): no effect, no change.
    return new, fx


class BoundedModel:
    """Bit-exact model of CoherenceMonitor for one parameter set."""

    def __init__(self, p: MonitorParams, coverage: Tally | None = None):
        self.p = p
        self.max = p.counter_max
        self.coverage = coverage
        self.region_enable = 0
        self.region_base = [0] * p.regions
        self.region_mask = [0] * p.regions
        self.clear_state()
        self.clear_counters()

    # ------------------------------------------------------------------ commands
    def clear_state(self) -> None:
        p = self.p
        self._recent_sets: deque[int | None] = deque([None] * len(FORWARD_DISTANCES), maxlen=len(FORWARD_DISTANCES))
        self.tags: list[list[int | None]] = [[None] * p.ways for _ in range(p.sets)]
        self.lines: list[list[LineState | None]] = [[None] * p.ways for _ in range(p.sets)]
        self.ages = [list(range(p.ways)) for _ in range(p.sets)]
        self.ptrs = [0] * p.sets

    def clear_counters(self) -> None:
        self.c = Counters.zero(self.p)
        # (line, entry, line evicted or None) of the ping-pong item of each of the last events, None for an event
        # without one.
        n = len(HOT_FORWARD_DISTANCES) + 1
        self._recent_hot: deque[tuple[int, int, int | None] | None] = deque([None] * n, maxlen=n)

    def set_region(self, r: int, base: int, mask: int, enabled: bool = True) -> None:
        self.region_base[r] = base & self.p.line_mask
        self.region_mask[r] = mask & self.p.line_mask
        self.region_enable = self.region_enable | (1 << r) if enabled else self.region_enable & ~(1 << r)

    def drop(self, n: int = 1) -> None:
        """Events that arrived in tap mode while the monitor could not take them."""
        if n:
            self._add(self.c.totals, "dropped", n)
            self.c.dropped = True
            self._cover("tap-drop")

    def _cover(self, what: str) -> None:
        """A structural coverage bin (STRUCTURAL_BINS), counted when a coverage counter was given."""
        if self.coverage is not None:
            self.coverage[("EVENT", what)] += 1

    def snapshot(self) -> Counters:
        """The counters as the CSR snapshot shows them."""
        return self.c.model_copy(deep=True)

    def tracked(self, line: int) -> LineState | None:
        """The state the table holds for `line` (None when untracked)."""
        idx = self.p.set_index(line)
        for tag, st in zip(self.tags[idx], self.lines[idx]):
            if tag == line:
                return st
        return None

    # ------------------------------------------------------------------ events
    def _add(self, d: dict | list, key, n: int) -> None:
        v = d[key] + n
        if v > self.max:
            v = self.max
            self.c.saturated = True
            self._cover("saturation")
        d[key] = v

    def apply_array(self, recs: np.ndarray) -> None:
        for line, core, socket, kind in zip(recs["line"].tolist(), recs["core"].tolist(),
                                            recs["socket"].tolist(), recs["kind"].tolist()):
            self.apply(line, core, socket, kind)

    def apply(self, line: int, core: int, socket: int, kind: int) -> None:
        p, g = self.p, self.c.totals
        self._recent_hot.append(None)
        self._add(g, "accepted", 1)
        if kind >= len(Kind) or core >= p.cores or socket >= p.sockets:
            self._add(g, "rejected", 1)
            self._cover("rejected")
            self._recent_sets.append(None)
            return
        self._add(g, KIND_COUNTERS[kind], 1)
        if kind not in _CHANGES_STATE:
            self._recent_sets.append(None)
        fx = Effects()
        if kind in _CHANGES_STATE:
            idx = p.set_index(line)
            for d in FORWARD_DISTANCES:
                if self._recent_sets[-d] == idx:
                    self._cover(f"same-set-{d}-apart")
            self._recent_sets.append(idx)
            tags, row = self.tags[idx], self.lines[idx]
            way = next((i for i, t in enumerate(tags) if t == line), None)
            hit = way is not None
            if self.coverage is not None:
                self.coverage[(Kind(kind).name, line_state(row[way] if hit else None, core))] += 1
            if hit or kind in _ALLOCATES:
                if hit:
                    old = row[way]
                else:
                    free = next((i for i, t in enumerate(tags) if t is None), None)
                    if free is None:
                        # The set is full: the victim's state is forgotten (stateEvictions).
                        way = self.ptrs[idx] if p.replacement == "roundrobin" else self.ages[idx].index(p.ways - 1)
                        self._add(g, "stateEvictions", 1)
                        self._cover("state-eviction")
                        if p.replacement == "roundrobin":
                            self.ptrs[idx] = (self.ptrs[idx] + 1) % p.ways
                    else:
                        way = free
                    old = LineState()
                new, fx = apply_rules(old, core, socket, kind)
                keep = not new.free   # rule E: a line with no owner and no holders frees its way
                tags[way], row[way] = (line, new) if keep else (None, None)
                if p.replacement == "lru" and kind in _ALLOCATES:
                    ages = self.ages[idx]
                    mine = ages[way]
                    self.ages[idx] = [0 if i == way else (a + 1 if a < mine else a) for i, a in enumerate(ages)]
        self._count_effects(line, kind, fx, socket)

    def _count_effects(self, line: int, kind: int, fx: Effects, socket: int) -> None:
        """docs/counting-rules.md, "Where an event's effects are counted"."""
        g = self.c.totals
        if fx.transfer:
            self._add(g, "transfers", 1)
            self._add(self.c.matrix[fx.from_socket], socket, 1)
        if fx.cross_socket:
            self._add(g, "crossSocketTransfers", 1)
        if fx.invalidations:
            self._add(g, "invalidations", fx.invalidations)
        if fx.dirty_read_local:
            self._add(g, "dirtyReadsLocal", 1)
        if fx.dirty_read_remote:
            self._add(g, "dirtyReadsRemote", 1)
        if self.region_enable:
            for r in range(self.p.regions):
                if self.region_enable >> r & 1 and line & self.region_mask[r] == self.region_base[r]:
                    rc = self.c.regions[r]
                    for name, inc in (("reads", kind == READ), ("writes", kind == WRITE), ("evicts", kind == EVICT),
                                      ("transfers", fx.transfer), ("crossSocketTransfers", fx.cross_socket),
                                      ("invalidations", fx.invalidations), ("dirtyReadsLocal", fx.dirty_read_local),
                                      ("dirtyReadsRemote", fx.dirty_read_remote)):
                        if inc:
                            self._add(rc, name, int(inc))
        if fx.transfer or fx.dirty_read_local or fx.dirty_read_remote:
            self._hot_item(line)

    def _hot_item(self, line: int) -> None:
        """Space-Saving update; the RTL picks the lowest index among equal minimum counts."""
        hot = self.c.hot
        recent = [self._recent_hot[-1 - d] for d in HOT_FORWARD_DISTANCES]
        for d, r in zip(HOT_FORWARD_DISTANCES, recent):
            if r is not None and r[0] == line:
                self._cover(f"hot-same-{d}-apart")
        if any(r is not None and r[2] == line for r in recent):
            self._cover("hot-after-eviction")
        slot = next((k for k, h in enumerate(hot) if h.valid and h.line == line), None)
        hit = slot is not None
        if hit:
            base = hot[slot].count
        else:
            slot = next((k for k, h in enumerate(hot) if not h.valid), None)
            if slot is not None:
                base = 0
            else:
                slot = min(range(len(hot)), key=lambda k: hot[k].count)
                base = hot[slot].count
                self._cover("hot-replacement")
        nxt = base + 1
        if nxt > self.max:
            nxt = self.max
            self.c.saturated = True
        h = hot[slot]
        evicted = h.line if not hit and h.valid else None
        h.valid, h.line, h.count = 1, line, nxt
        if not hit:
            h.error = base
            if any(r is not None and r[1] == slot for r in recent):
                self._cover("hot-replaces-recent")
        self._recent_hot[-1] = (line, slot, evicted)


class FieldCounts:
    """Adding and listing the integer fields of a counts dataclass (per-line stats, per-line checks)."""

    __slots__ = ()

    def add(self, other) -> None:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))

    def to_json(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(slots=True)
class LineStats(FieldCounts):
    """Exact per-line counts of the ideal model, and gem5's evidence kinds seen on the line."""

    reads: int = 0
    writes: int = 0
    evicts: int = 0
    transfers: int = 0
    crossSocketTransfers: int = 0
    invalidations: int = 0
    dirtyReadsLocal: int = 0
    dirtyReadsRemote: int = 0
    fwdGets: int = 0
    fwdGetx: int = 0
    inv: int = 0

    @property
    def dirty_reads(self) -> int:
        return self.dirtyReadsLocal + self.dirtyReadsRemote

    @property
    def pingpong(self) -> int:
        """Transfers and dirty reads: the items the hot-line table counts."""
        return self.transfers + self.dirty_reads


_EVIDENCE_STAT = {Kind.FWD_GETS: "fwdGets", Kind.FWD_GETX: "fwdGetx", Kind.INV: "inv"}


class IdealModel:
    """The same counting rules over every line, unbounded and unsaturated, with per-line statistics."""

    def __init__(self, sockets: int):
        self.sockets = sockets
        self.lines: dict[int, LineState] = {}
        self.stats: dict[int, LineStats] = {}
        self.matrix = [[0] * sockets for _ in range(sockets)]
        self.kinds = [0] * len(Kind)

    def apply_array(self, recs: np.ndarray) -> None:
        for line, core, socket, kind in zip(recs["line"].tolist(), recs["core"].tolist(),
                                            recs["socket"].tolist(), recs["kind"].tolist()):
            self.apply(line, core, socket, kind)

    def apply(self, line: int, core: int, socket: int, kind: int) -> tuple[LineState, Effects] | None:
        """Applies one event; for a kind that changes state, returns the line's state before it and the effects."""
        self.kinds[kind] += 1
        st = self.stats.get(line)
        if st is None:
            st = self.stats[line] = LineStats()
        evidence = _EVIDENCE_STAT.get(kind)
        if evidence:
            setattr(st, evidence, getattr(st, evidence) + 1)
        if kind not in _CHANGES_STATE:
            return None
        old = self.lines.get(line) or LineState()
        new, fx = apply_rules(old, core, socket, kind)
        if kind == READ:
            st.reads += 1
        elif kind == WRITE:
            st.writes += 1
        elif kind == EVICT:
            st.evicts += 1
        st.transfers += fx.transfer
        st.crossSocketTransfers += fx.cross_socket
        st.invalidations += fx.invalidations
        st.dirtyReadsLocal += fx.dirty_read_local
        st.dirtyReadsRemote += fx.dirty_read_remote
        if fx.transfer:
            self.matrix[fx.from_socket][socket] += 1
        if new.free:
            self.lines.pop(line, None)
        else:
            self.lines[line] = new
        return old, fx

    def totals(self) -> LineStats:
        return self.field_totals(self.stats)

    def field_totals(self, lines: Iterable[int]) -> LineStats:
        out = LineStats()
        for line in lines:
            st = self.stats.get(line)
            if st:
                out.add(st)
        return out
