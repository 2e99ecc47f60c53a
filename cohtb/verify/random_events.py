"""Synthetic event streams (seeded), for benchmarks and tests when no gem5 trace is at hand."""

from __future__ import annotations

from typing import Iterable

import numpy as np

from cohtb.contract import DEFAULT_LINE_SIZE, Kind, L1State, contiguous_socket_map
from cohtb.trace import events as ev


# Kinds in the proportions of a contended run: READ, WRITE and EVICT, and gem5's evidence (rule X) beside
# them, so that every kind meets every line state.
_MIX = [(Kind.READ, 0.40), (Kind.WRITE, 0.40), (Kind.EVICT, 0.08), (Kind.INV, 0.08),
        (Kind.FWD_GETS, 0.02), (Kind.FWD_GETX, 0.02)]
# The L1 states each kind's transition starts from (docs/event-format.md, "Kinds").
_L1_STATES = {
    Kind.READ: (L1State.IS, L1State.IS_I), Kind.WRITE: (L1State.IM, L1State.SM, L1State.E),
    Kind.EVICT: (L1State.S, L1State.M_I, L1State.SINK_WB_ACK, L1State.IS_I, L1State.E, L1State.M),
    Kind.INV: (L1State.S, L1State.SM),
    Kind.FWD_GETS: (L1State.E, L1State.M), Kind.FWD_GETX: (L1State.E, L1State.M)}


def random_stream(n: int, cores: int = 32, sockets: int = 8, hot_lines: int = 8, cold_lines: int = 4096,
                  seed: int = 1, kinds: Iterable[Kind] | None = None) -> tuple[ev.Header, np.ndarray]:
    """A contended mix: most events on a few hot lines, the rest spread over many (table pressure); every kind
    (or only `kinds`, in the same proportions among themselves), with a plausible l1_state."""
    mix = [(k, w) for k, w in _MIX if kinds is None or k in set(kinds)]
    if not mix:
        raise ValueError(f"random_stream: no kind to draw from {kinds}")
    rng = np.random.default_rng(seed)
    smap = np.array(contiguous_socket_map(cores, sockets), dtype=np.uint8)
    recs = np.zeros(n, dtype=ev.RECORD)
    recs["tick"] = np.arange(n, dtype=np.uint64) * 500
    hot = rng.random(n) < 0.7
    recs["line"] = np.where(hot, 0x40000 + rng.integers(0, hot_lines, n), 0x80000 + rng.integers(0, cold_lines, n))
    recs["core"] = rng.integers(0, cores, n)
    recs["socket"] = smap[recs["core"]]
    total = sum(w for _, w in mix)
    recs["kind"] = rng.choice(np.array([k for k, _ in mix], dtype=np.uint8), size=n, p=[w / total for _, w in mix])
    # A plausible L1 state before each event (the monitor does not read it; it goes through the file as is).
    pick = rng.integers(0, 1 << 16, n)
    for k, states in _L1_STATES.items():
        mine = recs["kind"] == k
        recs["l1_state"][mine] = np.array(states, dtype=np.uint16)[pick[mine] % len(states)]
    header = ev.Header(DEFAULT_LINE_SIZE, cores, smap.tolist(), {"generator": "cohtb.verify.random_events", "seed": seed})
    return header, recs
