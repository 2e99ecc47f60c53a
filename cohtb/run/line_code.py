"""Which instructions made a line's misses, and which bytes they wanted. gem5's PcProfile logs each retirement
that took long enough to have waited for a line (pc-slow.tsv: tick, core, address, and the physical address of
its data access where the core reports it; gem5-configs/build/patches/pc-profile.patch); each load's and store's
event of the trace on the hottest lines is given to its core's next slow retirement, so the run's profile says,
per line, which instructions missed on it and on which bytes: perf c2c's code addresses and data offsets."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from cohtb.contract import Kind
from cohtb.errors import CohtbError
from cohtb.run.code_names import Namer

SLOW_HEADER = "# cohtb pc-slow 1"
# A load's or store's event (the trace's READ or WRITE: the line arrived) belongs to the core's next slow
# retirement when that comes within this many ticks: the instruction that waited for the line retires a few
# cycles after it arrives; one that never retired in the window has no instruction to name.
JOIN_TICKS = 100_000
SLOW = np.dtype([("tick", np.uint64), ("core", np.uint16), ("pc", np.uint64), ("data", np.uint64)])   # a slow retirement
HOT_LINES = 5   # the lines, most events first, whose events are named by their instructions


def read_slow(path: Path) -> tuple[int, np.ndarray]:
    """gem5's log of slow retirements: the least ticks a logged one took, and (tick, core, pc, data) records in
    retirement order (data: the physical address of the instruction's data access, 0 when none is known)."""
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise CohtbError(f"{path}: cannot read the slow retirements: {e}") from None
    if not lines or lines[0] != SLOW_HEADER:
        raise CohtbError(f"{path}: line 1: not a cohtb pc-slow 1 file (want '{SLOW_HEADER}')")
    m = re.fullmatch(r"# window (\d+) (\d+) slow (\d+)", lines[1] if len(lines) > 1 else "")
    if not m:
        raise CohtbError(f"{path}: line 2: want '# window BEGIN END slow TICKS'")
    rows = []
    for n, line in enumerate(lines, 1):
        if line.startswith("#"):
            continue
        f = line.split("\t")
        try:
            if len(f) != 5:
                raise ValueError("want 5 tab-separated fields")
            rows.append((int(f[0]), int(f[1]), int(f[2], 16), int(f[4], 16)))
        except ValueError as e:
            raise CohtbError(f"{path}: line {n}: {e}") from None
    return int(m.group(3)), np.array(rows, dtype=SLOW).reshape(-1)



def _joined(ev: np.ndarray, by_core: dict[int, np.ndarray]) -> tuple[list[tuple[int, int, int, int]], int]:
    """One line's load and store events, each with its core's next slow retirement within JOIN_TICKS: (core, pc,
    data, kind) of those that have one, and how many have none."""
    joined, unmatched = [], 0
    for core in np.unique(ev["core"]):
        mine, retired = ev[ev["core"] == core], by_core.get(int(core))
        if retired is None or not len(retired):
            unmatched += len(mine)
            continue
        at = np.searchsorted(retired["tick"], mine["tick"], side="left")
        ok = at < len(retired)
        ok[ok] &= retired["tick"][at[ok]] - mine["tick"][ok] <= JOIN_TICKS
        unmatched += int((~ok).sum())
        joined += [(int(core), int(pc), int(data), int(kind))
                   for pc, data, kind in zip(retired["pc"][at[ok]], retired["data"][at[ok]], mine["kind"][ok])]
    return joined, unmatched


def code_per_line(recs: np.ndarray, slow: np.ndarray, namer: Namer, line_size: int,
                  top: int = HOT_LINES) -> list[dict]:
    """For the `top` lines with the most loads' and stores' events: each instruction that waited for the line (its
    core's next slow retirement within JOIN_TICKS of the event), with its loads and stores, most first, and the
    bytes of the line it accessed (data_offsets: the instruction's data address in the line -> its events); and
    per byte accessed, its loads and stores and how many cores made them (bytes). An access to another line, or
    none known, names no byte."""
    misses = recs[(recs["kind"] == Kind.READ) | (recs["kind"] == Kind.WRITE)]
    lines, counts = np.unique(misses["line"], return_counts=True)
    hottest = lines[np.argsort(-counts, kind="stable")[:top]]
    by_core = {int(c): slow[slow["core"] == c] for c in np.unique(slow["core"])}
    out = []
    for line in hottest:
        ev = misses[misses["line"] == line]
        joined, unmatched = _joined(ev, by_core)
        rows: dict[int, list[int]] = {}
        offsets: dict[int, dict[int, int]] = {}
        per_byte: dict[int, list] = {}   # offset -> [loads, stores, cores loading, cores storing]
        for core, pc, data, kind in joined:
            store = kind == Kind.WRITE
            rows.setdefault(pc, [0, 0])[store] += 1
            if data and data // line_size == int(line):
                at_pc = offsets.setdefault(pc, {})
                at_pc[data % line_size] = at_pc.get(data % line_size, 0) + 1
                b = per_byte.setdefault(data % line_size, [0, 0, set(), set()])
                b[store] += 1
                b[2 + store].add(core)
        code = []
        for pc, (loads, stores) in sorted(rows.items(), key=lambda kv: -sum(kv[1])):
            obj, symbol, offset = namer.name(pc)
            code.append({"address": f"{pc:#x}", "object": obj, "symbol": symbol, "offset": offset,
                         "loads": loads, "stores": stores,
                         "data_offsets": {str(k): v for k, v in sorted(offsets.get(pc, {}).items())}})
        out.append({"line": int(line), "loads": int((ev["kind"] == Kind.READ).sum()),
                    "stores": int((ev["kind"] == Kind.WRITE).sum()), "unmatched": unmatched, "code": code,
                    "bytes": {str(k): {"loads": b[0], "stores": b[1], "load_cores": len(b[2]), "store_cores": len(b[3])}
                              for k, b in sorted(per_byte.items())}})
    return out
