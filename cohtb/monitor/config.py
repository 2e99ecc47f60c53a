"""A monitor configuration as the Chisel build emitted it: its parameters and its register map.

`build/rtl/<variant>/monitor.json` lists every register address (rtl/src/cohtb/RegisterMap.scala);
nothing here recomputes one. The parameters' defaults and limits are the contract's (generated from
MonitorParams.scala); the set index mirrors MonitorParams.scala, since the bit-exact model needs the same
indexing.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from cohtb import contract as ct
from cohtb.errors import CohtbError
from cohtb.toolchain import monitor_dir

_DEFAULT = ct.MONITOR_DEFAULTS


def admits(limit: ct.ParamLimit, values: dict) -> bool:
    """Whether parameters `values` (by name) keep `limit` (ParamLimit.admits in MonitorParams.scala)."""
    v = values[limit.name]
    return (limit.least <= v <= limit.most and (not limit.power_of_two or v & (v - 1) == 0)
            and (limit.at_most is None or v <= values[limit.at_most]))


@dataclass(frozen=True)
class MonitorParams:
    cores: int = _DEFAULT["cores"]
    sockets: int = _DEFAULT["sockets"]
    lineAddrBits: int = _DEFAULT["lineAddrBits"]
    sets: int = _DEFAULT["sets"]
    ways: int = _DEFAULT["ways"]
    indexing: str = _DEFAULT["indexing"]
    replacement: str = _DEFAULT["replacement"]
    hotEntries: int = _DEFAULT["hotEntries"]
    regions: int = _DEFAULT["regions"]
    counterWidth: int = _DEFAULT["counterWidth"]

    def __post_init__(self) -> None:
        values = asdict(self)
        checks = [(admits(limit, values), limit.rule) for limit in ct.MONITOR_LIMITS.values()] + [
            (self.indexing in ct.INDEXINGS, f"indexing must be one of {ct.INDEXINGS}"),
            (self.replacement in ct.REPLACEMENTS, f"replacement must be one of {ct.REPLACEMENTS}"),
        ]
        for ok, why in checks:
            if not ok:
                raise CohtbError(f"monitor parameters: {why} (got {values})")

    @property
    def set_bits(self) -> int:
        return self.sets.bit_length() - 1

    @property
    def counter_max(self) -> int:
        return (1 << self.counterWidth) - 1

    @property
    def line_mask(self) -> int:
        return (1 << self.lineAddrBits) - 1

    def set_index(self, line: int) -> int:
        mask = self.sets - 1
        if self.indexing == "modulo":
            return line & mask
        folded, rest = 0, line & self.line_mask
        while rest:
            folded ^= rest & mask
            rest >>= self.set_bits
        return folded


@dataclass(frozen=True)
class CounterSlot:
    """One 64-bit counter of the CSR space: its address and where it goes in a Counters snapshot."""

    addr: int
    group: str              # "global", "regions", "matrix" or "hot"
    index: tuple[int, ...]  # region r / (from, to) / hot entry k
    name: str


@dataclass(frozen=True)
class RegisterMap:
    """Byte addresses of one configuration's CSR space (docs/register-map.md), as monitor.json lists them."""

    id: int
    version: int
    ctrl: int
    cmd: int
    status: int
    region_enable: int
    params: dict[str, int]
    param_values: dict[str, int]
    region_base: tuple[int, ...]
    region_mask: tuple[int, ...]
    counters: tuple[CounterSlot, ...]

    @staticmethod
    def from_json(r: dict) -> "RegisterMap":
        return RegisterMap(r["id"], r["version"], r["ctrl"], r["cmd"], r["status"], r["regionEnable"], dict(r["params"]),
                           dict(r["paramValues"]), tuple(r["regionBase"]), tuple(r["regionMask"]),
                           tuple(CounterSlot(c["addr"], c["group"], tuple(c["index"]), c["name"]) for c in r["counters"]))

    def slot(self, group: str, name: str, *index: int) -> int:
        for s in self.counters:
            if s.group == group and s.name == name and s.index == index:
                return s.addr
        raise KeyError((group, name, index))


@dataclass(frozen=True)
class Pipeline:
    """Where an event is, in clocks after the one that accepted it (S0), as the ports show it."""
    write_stage: int    # the line table's write-back: a clear-state sweep waits for it
    count_stage: int    # the counters: a snapshot at edge t holds the events accepted by edge t - count_stage - 1
    last_stage: int     # the hot-line table's update: busy until the last event accepted has left it
    command_stage: int  # a CMD write acts this many clocks after its AXI handshake


@dataclass(frozen=True)
class MonitorConfig:
    params: MonitorParams
    regmap: RegisterMap
    pipeline: Pipeline
    source: Path | None = None


def load(path: Path) -> MonitorConfig:
    """Read a Chisel-emitted monitor.json."""
    try:
        doc = json.loads(Path(path).read_text())
        params = MonitorParams(**doc["params"])
        regmap = RegisterMap.from_json(doc["registers"])
        pl = doc["pipeline"]
        pipeline = Pipeline(pl["writeStage"], pl["countStage"], pl["lastStage"], pl["commandStage"])
    except FileNotFoundError:
        raise CohtbError(f"{path}: no monitor configuration (run the set-up: make setup)") from None
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise CohtbError(f"{path}: not a monitor.json ({type(e).__name__}: {e}); rebuild the RTL (make rtl)") from None
    return MonitorConfig(params, regmap, pipeline, Path(path))


def variant(name: str = "default") -> MonitorConfig:
    return load(monitor_dir(name) / "monitor.json")
