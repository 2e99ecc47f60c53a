"""A monitor configuration as the Chisel build emitted it: its parameters and its register map.

`build/rtl/<variant>/monitor.json` lists every register address (rtl/src/cohtb/RegisterMap.scala);
nothing here recomputes one. The parameter checks and the set index mirror MonitorParams.scala, since
the bit-exact model needs the same indexing.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from cohtb import contract as ct
from cohtb.errors import CohtbError
from cohtb.toolchain import monitor_dir


@dataclass(frozen=True)
class MonitorParams:
    cores: int = 32
    sockets: int = 8
    lineAddrBits: int = 42
    sets: int = 64
    ways: int = 4
    indexing: str = "modulo"
    replacement: str = "roundrobin"
    hotEntries: int = 16
    regions: int = 8
    counterWidth: int = 32

    def __post_init__(self) -> None:
        def pow2(n: int) -> bool:
            return n > 0 and n & (n - 1) == 0

        checks = [
            (2 <= self.cores <= 64, "cores must be 2..64"),
            (1 <= self.sockets <= 16 and self.sockets <= self.cores, "sockets must be 1..16 and <= cores"),
            (8 <= self.lineAddrBits <= 58, "lineAddrBits must be 8..58"),
            (pow2(self.sets) and 2 <= self.sets <= 4096, "sets must be a power of two, 2..4096"),
            (pow2(self.ways) and 2 <= self.ways <= 16, "ways must be a power of two, 2..16"),
            (self.indexing in ct.INDEXINGS, f"indexing must be one of {ct.INDEXINGS}"),
            (self.replacement in ct.REPLACEMENTS, f"replacement must be one of {ct.REPLACEMENTS}"),
            (1 <= self.hotEntries <= 64, "hotEntries must be 1..64"),
            (1 <= self.regions <= 16, "regions must be 1..16"),
            (4 <= self.counterWidth <= 64, "counterWidth must be 4..64"),
        ]
        for ok, why in checks:
            if not ok:
                raise CohtbError(f"monitor parameters: {why} (got {asdict(self)})")

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
