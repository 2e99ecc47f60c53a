"""Synthetic event streams (seeded), for benchmarks and tests when no gem5 trace is at hand."""

from __future__ import annotations

import numpy as np

from cohtb.contract import DEFAULT_LINE_SIZE, Kind, contiguous_socket_map
from cohtb.trace import events as ev


def random_stream(n: int, cores: int = 32, sockets: int = 8, hot_lines: int = 8, cold_lines: int = 4096,
                  seed: int = 1) -> tuple[ev.Header, np.ndarray]:
    """A contended mix: most events on a few hot lines, the rest spread over many (table pressure)."""
    rng = np.random.default_rng(seed)
    smap = np.array(contiguous_socket_map(cores, sockets), dtype=np.uint8)
    recs = np.zeros(n, dtype=ev.RECORD)
    recs["tick"] = np.arange(n, dtype=np.uint64) * 500
    hot = rng.random(n) < 0.7
    recs["line"] = np.where(hot, 0x40000 + rng.integers(0, hot_lines, n), 0x80000 + rng.integers(0, cold_lines, n))
    recs["core"] = rng.integers(0, cores, n)
    recs["socket"] = smap[recs["core"]]
    recs["kind"] = rng.choice([Kind.READ, Kind.WRITE, Kind.EVICT], size=n, p=[0.45, 0.45, 0.10])
    header = ev.Header(DEFAULT_LINE_SIZE, cores, smap.tolist(), {"generator": "cohtb.trace.random_events", "seed": seed})
    return header, recs
