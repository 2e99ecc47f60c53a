"""Replay: an event stream through the Verilated monitor and through the bit-exact model, with the same
regions, giving the same Counters; a run is checked bit for bit by comparing the two. The model a replay runs is
the compiled one (cohtb/monitor/compiled_model.py), held to the Python specification by every soak."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cohtb.errors import CohtbError
from cohtb.monitor import rtl
from cohtb.monitor.config import MonitorConfig
from cohtb.monitor.counters import Counters
from cohtb.monitor.compiled_model import CompiledModel
from cohtb.trace.events import Header
from cohtb.tables import count


@dataclass(frozen=True)
class Region:
    """One programmable address region: a line-address base and mask."""

    base: int
    mask: int


def check_fits(header: Header, cfg: MonitorConfig, where: str) -> None:
    """An event file from a larger system than the monitor was built for cannot be replayed honestly."""
    p = cfg.params
    if header.num_cores > p.cores or header.num_sockets > p.sockets:
        raise CohtbError(f"{where}: events from {count(header.num_cores, 'core')} / {count(header.num_sockets, 'socket')}, "
                         f"but the monitor was built for {count(p.cores, 'core')} / {count(p.sockets, 'socket')}")


def replay_rtl(recs: np.ndarray, regions: list[Region], variant: str = "default", repeat: int = 1) -> tuple[Counters, dict]:
    """Counters from the Verilated monitor, and how fast it went."""
    return rtl.replay(recs, [(r.base, r.mask) for r in regions], variant, repeat)


def replay_model(recs: np.ndarray, regions: list[Region], cfg: MonitorConfig) -> Counters:
    model = CompiledModel(cfg.params)
    for i, r in enumerate(regions):
        model.set_region(i, r.base, r.mask)
    model.apply_array(recs)
    return model.snapshot()
