"""Reference models of the coherence monitor (DESIGN.md, "What the monitor counts").

`BoundedModel` mirrors the RTL bit for bit: the same set-associative line table (indexing, first-invalid
allocation, round-robin or LRU victim), the same Space-Saving hot-line table with the same tie-break,
the same saturation. `IdealModel` applies the same definitions to every line without bounds, keeps
per-line statistics for reports, and reconciles against gem5's own transfer evidence.
"""

from __future__ import annotations

from collections import Counter as Tally
from typing import Iterable

import numpy as np

from .events import Kind
from .monitor_config import GLOBAL_COUNTERS, HOT_FIELDS, REGION_COUNTERS, MonitorParams

READ, WRITE, EVICT = int(Kind.READ), int(Kind.WRITE), int(Kind.EVICT)
NUM_KINDS = len(Kind)
_KIND_COUNTERS = GLOBAL_COUNTERS[:NUM_KINDS]

# Line state seen by the requesting core before its event (functional-coverage bins).
LINE_STATES = (
    "untracked", "shared-not-holder", "shared-holder", "mine-dirty", "mine-clean",
    "other-dirty", "other-clean-holder", "other-clean-not-holder",
)

# A tracked line: [line, owner_valid, owner, owner_socket, dirty, holders]
_LINE, _OV, _OWNER, _OSOCK, _DIRTY, _HOLDERS = range(6)


def line_state(entry: list | None, core: int) -> str:
    if entry is None:
        return "untracked"
    holder = bool(entry[_HOLDERS] >> core & 1)
    if not entry[_OV]:
        return "shared-holder" if holder else "shared-not-holder"
    if entry[_OWNER] == core:
        return "mine-dirty" if entry[_DIRTY] else "mine-clean"
    if entry[_DIRTY]:
        return "other-dirty"
    return "other-clean-holder" if holder else "other-clean-not-holder"


def empty_counters(p: MonitorParams) -> dict:
    return {
        "global": {n: 0 for n in GLOBAL_COUNTERS},
        "regions": [{n: 0 for n in REGION_COUNTERS} for _ in range(p.regions)],
        "matrix": [[0] * p.sockets for _ in range(p.sockets)],
        "hot": [{f: 0 for f in HOT_FIELDS} for _ in range(p.hotEntries)],
        "status": {"saturated": False, "dropped": False},
    }


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
        self.rows: list[list[list | None]] = [[None] * p.ways for _ in range(p.sets)]
        self.ages = [list(range(p.ways)) for _ in range(p.sets)]
        self.ptrs = [0] * p.sets

    def clear_counters(self) -> None:
        self.c = empty_counters(self.p)
        self.hot: list[list[int]] = [[0, 0, 0, 0] for _ in range(self.p.hotEntries)]  # valid, line, count, error

    def set_region(self, r: int, base: int, mask: int, enabled: bool = True) -> None:
        lmask = (1 << self.p.lineAddrBits) - 1
        self.region_base[r] = base & lmask
        self.region_mask[r] = mask & lmask
        self.region_enable = self.region_enable | (1 << r) if enabled else self.region_enable & ~(1 << r)

    def drop(self, n: int = 1) -> None:
        """Events that arrived in tap mode while the monitor could not take them."""
        if n:
            self._add(self.c["global"], "dropped", n)
            self.c["status"]["dropped"] = True

    def snapshot(self) -> dict:
        """The counters as the CSR snapshot shows them."""
        import copy

        out = copy.deepcopy(self.c)
        out["hot"] = [{"line": h[1], "count": h[2], "error": h[3], "valid": h[0]} for h in self.hot]
        return out

    # ------------------------------------------------------------------ events
    def _add(self, d: dict | list, key, n: int) -> None:
        v = d[key] + n
        if v > self.max:
            v = self.max
            self.c["status"]["saturated"] = True
        d[key] = v

    def apply_array(self, recs: np.ndarray) -> None:
        for line, core, socket, kind in zip(recs["line"].tolist(), recs["core"].tolist(),
                                            recs["socket"].tolist(), recs["kind"].tolist()):
            self.apply(line, core, socket, kind)

    def apply(self, line: int, core: int, socket: int, kind: int) -> None:
        p, g = self.p, self.c["global"]
        self._add(g, "accepted", 1)
        if kind >= NUM_KINDS or core >= p.cores or socket >= p.sockets:
            self._add(g, "rejected", 1)
            return
        self._add(g, _KIND_COUNTERS[kind], 1)
        transfer = cross = dr_local = dr_remote = False
        invalidations = 0
        from_socket = 0
        if kind <= EVICT:
            idx = p.set_index(line)
            row = self.rows[idx]
            way = next((i for i, e in enumerate(row) if e is not None and e[_LINE] == line), None)
            hit = way is not None
            if self.coverage is not None:
                self.coverage[(Kind(kind).name, line_state(row[way] if hit else None, core))] += 1
            if hit or kind != EVICT:
                if hit:
                    old = row[way]
                else:
                    free = next((i for i, e in enumerate(row) if e is None), None)
                    if free is None:
                        way = self.ptrs[idx] if p.replacement == "roundrobin" else self.ages[idx].index(p.ways - 1)
                        self._add(g, "stateEvictions", 1)
                        if p.replacement == "roundrobin":
                            self.ptrs[idx] = (self.ptrs[idx] + 1) % p.ways
                    else:
                        way = free
                    old = [line, 0, 0, 0, 0, 0]
                bit = 1 << core
                owner_other = old[_OV] and old[_OWNER] != core
                remote = old[_OSOCK] != socket
                from_socket = old[_OSOCK]
                new = list(old)
                if kind == WRITE:
                    transfer = bool(owner_other)
                    cross = transfer and remote
                    invalidations = bin(old[_HOLDERS] & ~bit).count("1")
                    new[_OV], new[_OWNER], new[_OSOCK], new[_DIRTY], new[_HOLDERS] = 1, core, socket, 1, bit
                elif kind == READ:
                    dirty_read = bool(old[_DIRTY] and owner_other)
                    dr_remote = dirty_read and remote
                    dr_local = dirty_read and not remote
                    new[_DIRTY] = old[_DIRTY] and not dirty_read
                    new[_HOLDERS] = old[_HOLDERS] | bit
                else:
                    owner_leaves = old[_OV] and old[_OWNER] == core
                    new[_HOLDERS] = old[_HOLDERS] & ~bit
                    if owner_leaves:
                        new[_OV] = new[_DIRTY] = 0
                row[way] = new if (kind != EVICT or new[_HOLDERS] or new[_OV]) else None
                if p.replacement == "lru" and kind != EVICT:
                    ages = self.ages[idx]
                    mine = ages[way]
                    self.ages[idx] = [0 if i == way else (a + 1 if a < mine else a) for i, a in enumerate(ages)]
        self._count_effects(line, kind, transfer, cross, invalidations, dr_local, dr_remote, from_socket, socket)

    def _count_effects(self, line, kind, transfer, cross, invalidations, dr_local, dr_remote, src, dst) -> None:
        g = self.c["global"]
        if transfer:
            self._add(g, "transfers", 1)
            self._add(self.c["matrix"][src], dst, 1)
        if cross:
            self._add(g, "crossSocketTransfers", 1)
        if invalidations:
            self._add(g, "invalidations", invalidations)
        if dr_local:
            self._add(g, "dirtyReadsLocal", 1)
        if dr_remote:
            self._add(g, "dirtyReadsRemote", 1)
        if self.region_enable:
            for r in range(self.p.regions):
                if self.region_enable >> r & 1 and line & self.region_mask[r] == self.region_base[r]:
                    rc = self.c["regions"][r]
                    for name, inc in (("reads", kind == READ), ("writes", kind == WRITE), ("evicts", kind == EVICT),
                                      ("transfers", transfer), ("crossSocketTransfers", cross),
                                      ("invalidations", invalidations), ("dirtyReadsLocal", dr_local),
                                      ("dirtyReadsRemote", dr_remote)):
                        if inc:
                            self._add(rc, name, int(inc))
        if transfer or dr_local or dr_remote:
            self._hot_item(line)

    def _hot_item(self, line: int) -> None:
        """Space-Saving update; the RTL picks the lowest index among equal minimum counts."""
        hot = self.hot
        slot = next((k for k, h in enumerate(hot) if h[0] and h[1] == line), None)
        hit = slot is not None
        if hit:
            base = hot[slot][2]
        else:
            slot = next((k for k, h in enumerate(hot) if not h[0]), None)
            if slot is not None:
                base = 0
            else:
                slot = min(range(len(hot)), key=lambda k: hot[k][2])
                base = hot[slot][2]
        nxt = base + 1
        if nxt > self.max:
            nxt = self.max
            self.c["status"]["saturated"] = True
        h = hot[slot]
        h[0], h[1], h[2] = 1, line, nxt
        if not hit:
            h[3] = base


LINE_STATS = ("reads", "writes", "evicts", "transfers", "crossSocketTransfers", "invalidations",
              "dirtyReadsLocal", "dirtyReadsRemote", "fwdGets", "fwdGetx", "inv", "gem5Transfers")


class IdealModel:
    """The same counting rules over every line, unbounded and unsaturated, with per-line statistics.

    gem5's transfer evidence: a WRITE that takes a line from its last writer O is seen at O either as
    Fwd_GETX (O still held it modified) or as Inv (O had been downgraded to shared by a dirty read first).
    So a transfer is confirmed by gem5 when the next Fwd_GETX or Inv recorded at O for that line follows it;
    `gem5Transfers` counts Fwd_GETX events plus Inv events at the line's pending previous owner."""

    def __init__(self, sockets: int):
        self.sockets = sockets
        self.lines: dict[int, list[int]] = {}   # line -> [owner_valid, owner, owner_socket, dirty, holders, pending_from]
        self.stats: dict[int, list[int]] = {}
        self.matrix = [[0] * sockets for _ in range(sockets)]
        self.kinds = [0] * NUM_KINDS

    def apply_array(self, recs: np.ndarray) -> None:
        for line, core, socket, kind in zip(recs["line"].tolist(), recs["core"].tolist(),
                                            recs["socket"].tolist(), recs["kind"].tolist()):
            self.apply(line, core, socket, kind)

    def apply(self, line: int, core: int, socket: int, kind: int) -> None:
        self.kinds[kind] += 1
        st = self.stats.get(line)
        if st is None:
            st = self.stats[line] = [0] * len(LINE_STATS)
        e = self.lines.get(line)
        if e is None:
            if kind == EVICT:
                st[2] += 1
                return
            e = self.lines[line] = [0, 0, 0, 0, 0, -1]
        bit = 1 << core
        if kind == WRITE:
            st[1] += 1
            if e[0] and e[1] != core:
                st[3] += 1
                self.matrix[e[2]][socket] += 1
                if e[2] != socket:
                    st[4] += 1
                e[5] = e[1]
            else:
                e[5] = -1
            st[5] += bin(e[4] & ~bit).count("1")
            e[0], e[1], e[2], e[3], e[4] = 1, core, socket, 1, bit
        elif kind == READ:
            st[0] += 1
            if e[3] and e[0] and e[1] != core:
                st[7 if e[2] != socket else 6] += 1
                e[3] = 0
            e[4] |= bit
        elif kind == EVICT:
            st[2] += 1
            e[4] &= ~bit
            if e[0] and e[1] == core:
                e[0] = e[3] = 0
            if not e[4] and not e[0]:
                pending = e[5]
                self.lines[line] = [0, 0, 0, 0, 0, pending]
        elif kind == Kind.FWD_GETS:
            st[8] += 1
        elif kind == Kind.FWD_GETX:
            st[9] += 1
            st[11] += 1
            if e[5] == core:
                e[5] = -1
        elif kind == Kind.INV:
            st[10] += 1
            if e[5] == core:
                st[11] += 1
                e[5] = -1

    def totals(self) -> dict[str, int]:
        sums = np.sum(np.array(list(self.stats.values()), dtype=np.int64), axis=0) if self.stats else np.zeros(len(LINE_STATS), dtype=np.int64)
        return {n: int(v) for n, v in zip(LINE_STATS, sums)}

    def field_totals(self, lines: Iterable[int]) -> dict[str, int]:
        out = dict.fromkeys(LINE_STATS, 0)
        for line in lines:
            st = self.stats.get(line)
            if st:
                for n, v in zip(LINE_STATS, st):
                    out[n] += v
        return out
