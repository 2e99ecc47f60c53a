"""One snapshot of the monitor's counters, as the RTL's CSR readout or a model gives it, and the
field-by-field comparison of two of them (RTL against model)."""

from __future__ import annotations

from typing import Callable

from pydantic import BaseModel, ConfigDict, Field

from cohtb import contract as ct
from cohtb.monitor.config import MonitorConfig, MonitorParams


class HotEntry(BaseModel):
    """One entry of the Space-Saving hot-line table: count - error <= true count <= count."""

    line: int = 0
    count: int = 0
    error: int = 0
    valid: int = 0


class Counters(BaseModel):
    """Global counters by name (contract GLOBAL_COUNTERS), per-region counters (REGION_COUNTERS), the
    socket x socket transfer matrix [from][to], the hot-line table and the two sticky status bits."""

    model_config = ConfigDict(populate_by_name=True)

    totals: dict[str, int] = Field(alias="global")
    regions: list[dict[str, int]]
    matrix: list[list[int]]
    hot: list[HotEntry]
    saturated: bool = False
    dropped: bool = False

    @staticmethod
    def zero(p: MonitorParams) -> "Counters":
        return Counters(totals=dict.fromkeys(ct.GLOBAL_COUNTERS, 0),
                        regions=[dict.fromkeys(ct.REGION_COUNTERS, 0) for _ in range(p.regions)],
                        matrix=[[0] * p.sockets for _ in range(p.sockets)],
                        hot=[HotEntry() for _ in range(p.hotEntries)])

    @property
    def dirty_reads(self) -> int:
        return self.totals["dirtyReadsLocal"] + self.totals["dirtyReadsRemote"]

    def to_json(self) -> dict:
        return self.model_dump(by_alias=True)


def read_counters(cfg: MonitorConfig, read64: Callable[[int], int], status: int) -> Counters:
    """A snapshot from the CSR space: every counter slot of the register map read with `read64`."""
    c = Counters.zero(cfg.params)
    for s in cfg.regmap.counters:
        v = read64(s.addr)
        if s.group == "global":
            c.totals[s.name] = v
        elif s.group == "regions":
            c.regions[s.index[0]][s.name] = v
        elif s.group == "matrix":
            c.matrix[s.index[0]][s.index[1]] = v
        else:
            setattr(c.hot[s.index[0]], s.name, v)
    c.saturated = bool(status & ct.STATUS_SATURATED)
    c.dropped = bool(status & ct.STATUS_DROPPED)
    return c


def diff_counters(want, got, path: str = "") -> list[str]:
    """Every leaf where two counter structures differ, as 'path: want=.. got=..'."""
    if isinstance(want, Counters):
        want = want.to_json()
    if isinstance(got, Counters):
        got = got.to_json()
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{path}: want {want} got {got}"]
        keys = sorted(set(want) | set(got), key=str)
        return [d for k in keys for d in diff_counters(want.get(k), got.get(k), f"{path}.{k}" if path else str(k))]
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            return [f"{path}: want {want} got {got}"]
        return [d for i, (a, b) in enumerate(zip(want, got)) for d in diff_counters(a, b, f"{path}[{i}]")]
    if want is None or got is None:
        return [f"{path}: want={want} got={got}"]
    return [] if int(want) == int(got) else [f"{path}: want={int(want)} got={int(got)}"]
