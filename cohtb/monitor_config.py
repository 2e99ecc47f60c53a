"""Monitor parameters and CSR register map, mirrored from the Chisel RegisterMap.

The Chisel build writes monitor.json per configuration; `load` reads it and `RegisterMap` recomputes
every address from the parameters alone, so a test can hold the two sides to each other.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from .errors import CohtbError

ID_VALUE = 0x434F4854  # "COHT"
VERSION_VALUE = 1

CTRL_ENABLE = 1 << 0
CTRL_TAP = 1 << 1
CMD_SNAPSHOT = 1 << 0
CMD_CLEAR_COUNTERS = 1 << 1
CMD_CLEAR_STATE = 1 << 2
STATUS_SATURATED = 1 << 0
STATUS_DROPPED = 1 << 1
STATUS_BUSY = 1 << 2

GLOBAL_COUNTERS = (
    "eventsRead", "eventsWrite", "eventsEvict", "eventsFwdGets", "eventsFwdGetx", "eventsInv",
    "accepted", "dropped", "rejected",
    "transfers", "crossSocketTransfers", "invalidations", "dirtyReadsLocal", "dirtyReadsRemote",
    "stateEvictions",
)
REGION_COUNTERS = (
    "reads", "writes", "evicts", "transfers", "crossSocketTransfers", "invalidations",
    "dirtyReadsLocal", "dirtyReadsRemote",
)
HOT_FIELDS = ("line", "count", "error", "valid")
INDEXINGS = ("modulo", "xorfold")
REPLACEMENTS = ("roundrobin", "lru")


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
            (self.indexing in INDEXINGS, f"indexing must be one of {INDEXINGS}"),
            (self.replacement in REPLACEMENTS, f"replacement must be one of {REPLACEMENTS}"),
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

    def set_index(self, line: int) -> int:
        mask = self.sets - 1
        if self.indexing == "modulo":
            return line & mask
        folded, rest = 0, line & ((1 << self.lineAddrBits) - 1)
        while rest:
            folded ^= rest & mask
            rest >>= self.set_bits
        return folded


@dataclass(frozen=True)
class RegisterMap:
    """Byte addresses of the CSR space (docs/register-map.md). Counters are 64-bit slots: LO, then HI."""

    p: MonitorParams

    id: int = 0x0000
    version: int = 0x0004
    ctrl: int = 0x0040
    cmd: int = 0x0044
    status: int = 0x0048
    region_enable: int = 0x004C

    def param_words(self) -> dict[str, int]:
        return {name: 0x0008 + 4 * i for i, name in enumerate(self.param_values())}

    def param_values(self) -> dict[str, int]:
        p = self.p
        return {
            "cores": p.cores, "sockets": p.sockets, "sets": p.sets, "ways": p.ways,
            "hotEntries": p.hotEntries, "regions": p.regions, "counterWidth": p.counterWidth,
            "lineAddrBits": p.lineAddrBits,
            "options": INDEXINGS.index(p.indexing) | (REPLACEMENTS.index(p.replacement) << 1),
        }

    def global_counter(self, name: str) -> int:
        return 0x0100 + 8 * GLOBAL_COUNTERS.index(name)

    def region_base(self, r: int) -> int:
        return 0x0400 + 16 * r

    def region_mask(self, r: int) -> int:
        return 0x0400 + 16 * r + 8

    def region_counter(self, r: int, name: str) -> int:
        return 0x0800 + 64 * r + 8 * REGION_COUNTERS.index(name)

    def matrix(self, src: int, dst: int) -> int:
        return 0x1000 + 8 * (src * self.p.sockets + dst)

    def hot(self, k: int, field: str) -> int:
        return 0x2000 + 32 * k + 8 * HOT_FIELDS.index(field)

    def as_json_registers(self) -> dict:
        """The same shape as the 'registers' object of the Chisel-emitted monitor.json."""
        return {
            "id": self.id, "version": self.version, "ctrl": self.ctrl, "cmd": self.cmd,
            "status": self.status, "regionEnable": self.region_enable,
            "params": self.param_words(),
            "global": {n: self.global_counter(n) for n in GLOBAL_COUNTERS},
            "regionBase0": self.region_base(0), "regionStride": 16,
            "regionCounter0": self.region_counter(0, REGION_COUNTERS[0]), "regionCounterStride": 64,
            "regionCounters": list(REGION_COUNTERS),
            "matrix0": self.matrix(0, 0), "hot0": self.hot(0, HOT_FIELDS[0]), "hotStride": 32,
            "hotFields": list(HOT_FIELDS),
        }

    def counter_slots(self) -> list[tuple[int, tuple]]:
        """Every 64-bit counter slot as (address, key) where key addresses a Counters structure."""
        p = self.p
        slots: list[tuple[int, tuple]] = [(self.global_counter(n), ("global", n)) for n in GLOBAL_COUNTERS]
        for r in range(p.regions):
            slots += [(self.region_counter(r, n), ("regions", r, n)) for n in REGION_COUNTERS]
        for s in range(p.sockets):
            slots += [(self.matrix(s, d), ("matrix", s, d)) for d in range(p.sockets)]
        for k in range(p.hotEntries):
            slots += [(self.hot(k, f), ("hot", k, f)) for f in HOT_FIELDS]
        return slots


@dataclass(frozen=True)
class MonitorConfig:
    params: MonitorParams
    regmap: RegisterMap
    source: Path | None = None


def from_params(params: MonitorParams) -> MonitorConfig:
    return MonitorConfig(params, RegisterMap(params))


def load(path: Path) -> MonitorConfig:
    """Read a Chisel-emitted monitor.json and check it against the Python register map."""
    try:
        doc = json.loads(Path(path).read_text())
        params = MonitorParams(**doc["params"])
    except FileNotFoundError:
        raise CohtbError(f"{path}: no monitor configuration (run the set-up: make setup)") from None
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        raise CohtbError(f"{path}: not a monitor.json: {e}") from None
    regmap = RegisterMap(params)
    if doc.get("registers") != regmap.as_json_registers():
        raise CohtbError(f"{path}: register map differs from cohtb.monitor_config (rebuild the RTL)")
    return MonitorConfig(params, regmap, Path(path))
