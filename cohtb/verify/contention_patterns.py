"""Seeded event streams with the contention patterns of the workloads (docs/workloads.md), for the soak: what
the monitor meets in real runs, at volumes no gem5 run reaches. Each pattern returns records for `n` events
of a machine with `cores` cores, `cores_per_socket` to a socket."""

from __future__ import annotations

from typing import Callable

import numpy as np

from cohtb.contract import Kind, block_socket_map
from cohtb.trace import events as ev

R, W, E, FGS, FGX, INV = (int(k) for k in (Kind.READ, Kind.WRITE, Kind.EVICT, Kind.FWD_GETS, Kind.FWD_GETX, Kind.INV))
HOT = 0x40000          # the contended lines live here; cold lines well away
COLD = 0x80000


def _records(lines: np.ndarray, cores: np.ndarray, kinds: np.ndarray, cores_per_socket: int, t0: int) -> np.ndarray:
    recs = np.zeros(len(kinds), dtype=ev.RECORD)
    recs["tick"] = t0 + np.arange(len(kinds), dtype=np.uint64) * 500
    recs["line"] = lines
    recs["core"] = cores
    recs["socket"] = np.asarray(block_socket_map(cores_per_socket, int(cores.max(initial=0)) + 1))[cores]
    recs["kind"] = kinds
    return recs


def lockref(rng: np.random.Generator, n: int, cores: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """lockref get/put: a core reads the dentry line (lookup fields, the lockref word), then cmpxchg-writes it;
    the old owner's evidence (Fwd_GETS, then Fwd_GETX or Inv) comes first, as in a gem5 trace."""
    ops = n // 4
    who = rng.integers(0, cores, ops)
    prev = np.roll(who, 1)
    line = HOT + rng.integers(0, 2, ops)            # two layouts' worth: the shared line and its neighbour
    kinds = np.tile(np.array([FGS, R, FGX, W]), ops)
    return np.repeat(line, 4), np.stack([prev, who, prev, who], 1).ravel(), kinds


def read_mostly(rng: np.random.Generator, n: int, cores: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Many readers of a few lines (d_name, d_inode), a rare writer, evictions of copies."""
    lines = HOT + 8 + rng.integers(0, 4, n)
    kinds = rng.choice([R, W, E, INV], size=n, p=[0.85, 0.03, 0.08, 0.04])
    return lines, rng.integers(0, cores, n), kinds


def per_core_counters(rng: np.random.Generator, n: int, cores: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """stat_counter's per-CPU batch: each core writes its own line, a summing reader reads them all now and then."""
    cores_ = rng.integers(0, cores, n)
    reader = rng.random(n) < 0.1
    lines = COLD + np.where(reader, rng.integers(0, cores, n), cores_) * 1
    kinds = np.where(reader, R, W)
    return lines, cores_, kinds


def table_pressure(rng: np.random.Generator, n: int, cores: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Many lines at once (a list walk, a hash table): the bounded table forgets lines; sets collide."""
    lines = COLD + 0x10000 + rng.integers(0, 1 << 14, n)
    kinds = rng.choice([R, W, E, FGS, FGX, INV], size=n, p=[0.45, 0.35, 0.1, 0.04, 0.03, 0.03])
    return lines, rng.integers(0, cores, n), kinds


PATTERNS: dict[str, Callable[[np.random.Generator, int, int], tuple[np.ndarray, np.ndarray, np.ndarray]]] = {
    "lockref": lockref, "read_mostly": read_mostly, "per_core_counters": per_core_counters, "table_pressure": table_pressure}


def mixed_chunk(seed: int, index: int, n: int, cores: int, cores_per_socket: int) -> np.ndarray:
    """Chunk `index` of a soak: a few hundred slices of the patterns, shuffled in order, reproducible from (seed, index)."""
    rng = np.random.default_rng([seed, index])
    parts, left = [], n
    while left > 0:
        size = int(min(left, rng.integers(256, 8192)))
        name = list(PATTERNS)[int(rng.integers(0, len(PATTERNS)))]
        lines, who, kinds = PATTERNS[name](rng, size, cores)
        size = len(kinds)
        if size == 0:
            continue
        parts.append((lines[:size], who[:size], kinds[:size]))
        left -= size
    lines, who, kinds = (np.concatenate(x)[:n] for x in zip(*parts))
    return _records(lines, who, kinds, cores_per_socket, index * n * 500)
