"""The latency table of cclat runs (workloads/cclat.c): per state, operation and distance, what one operation
took on the simulated machine, beside what the published hardware took (experiments/hardware_latency.toml is read
by the report; this module only reads runs)."""

from __future__ import annotations

from dataclasses import dataclass

from cohtb.errors import CohtbError
from cohtb.run.runs import Run


@dataclass(frozen=True)
class LatencyCell:
    state: str
    operation: str
    hops: int            # socket links between the owner's socket and the target's (0: the same socket)
    home_hops: int       # socket links between the line's home and the target
    n: int
    median_cycles: float  # the timer's own cost taken off
    p10_cycles: float
    p90_cycles: float
    clock_ghz: float
    run: str
    mean_cycles: float | None = None   # the timer's cost taken off; the published tables give means

    @property
    def mean_ns(self) -> float | None:
        return None if self.mean_cycles is None else self.mean_cycles / self.clock_ghz

    @property
    def median_ns(self) -> float:
        return self.median_cycles / self.clock_ghz


def socket_hops(run: Run) -> list[list[int]]:
    """hops[a][b] of the run's machine: its topology's, or every pair one hop apart (runs before topologies)."""
    system = run.manifest.system
    if system.topology is not None:
        return system.topology.hops
    return [[int(a != b) for b in range(system.sockets)] for a in range(system.sockets)]


def home_of(run: Run, residue: int) -> int:
    """The socket of the home of the lines L mod S == residue, as the machine placed it (its controller map: the
    flat machine's directories, the socket machine's home nodes, one per residue)."""
    controllers = run.manifest.controllers.model_extra or {}
    homes = controllers.get("home") or controllers.get("directory")
    if not homes or residue >= len(homes):
        raise CohtbError(f"{run.path}: field 'controllers': no home of the lines mod {run.manifest.system.sockets} "
                         f"== {residue} (a run recorded before the map kept its directories?)")
    return homes[residue]["socket"]


def cells(run: Run) -> list[LatencyCell]:
    """A cclat run's cells, each at the distance its threads had on that machine."""
    doc = run.manifest.workload.model_dump()
    if doc.get("benchmark") != "cclat" or "cells" not in doc:
        raise CohtbError(f"{run.path}: field 'workload': not a cclat run (cohtb latency reads cclat's cells)")
    socket_of_core = {c.core: c.socket for c in run.manifest.controllers.l1}
    hops = socket_hops(run)
    owner, target = socket_of_core[doc["owner"]], socket_of_core[doc["target"]]
    interleave, home = doc["interleave"], doc["home"]
    if interleave != run.manifest.system.sockets:
        raise CohtbError(f"{run.path}: field 'workload.interleave': {interleave} homes, but the machine has "
                         f"{run.manifest.system.sockets} sockets (the line's home would be unknown)")
    home_socket = home_of(run, home)
    clock = run.manifest.system.clock_hz / 1e9
    overhead = doc["timer_overhead"]
    return [LatencyCell(c["state"], c["operation"], hops[owner][target], hops[home_socket][target], c["n"],
                        c["median"] - overhead, c["p10"] - overhead, c["p90"] - overhead, clock, run.id,
                        c["mean"] - overhead if "mean" in c else None)
            for c in doc["cells"]]


@dataclass(frozen=True)
class MeshCell:
    """A cclat cell on a mesh machine (one socket): where its owner and target sat, and the mesh hops between them
    (X then Y, as the messages route). Its lines are spread over every slice unless the run chose one home."""
    state: str
    operation: str
    owner_tile: int
    target_tile: int
    hops: int            # mesh links between the owner's tile and the target's
    n: int
    median_cycles: float  # the timer's own cost taken off
    mean_cycles: float
    clock_ghz: float
    run: str

    @property
    def mean_ns(self) -> float:
        return self.mean_cycles / self.clock_ghz


def mesh_hops(a: int, b: int, columns: int) -> int:
    """Mesh links between tiles a and b (tile t in row t // columns, column t % columns)."""
    return abs(a // columns - b // columns) + abs(a % columns - b % columns)


def mesh_cells(run: Run) -> list[MeshCell]:
    """A cclat run's cells on a mesh machine, each with its threads' tiles."""
    doc = run.manifest.workload.model_dump()
    if doc.get("benchmark") != "cclat" or "cells" not in doc:
        raise CohtbError(f"{run.path}: field 'workload': not a cclat run (the mesh latency table reads cclat's cells)")
    tile = {c.core: (c.model_extra or {}).get("tile") for c in run.manifest.controllers.l1}
    columns = (run.manifest.system.params.model_extra or {}).get("mesh_columns")
    owner, target = tile.get(doc["owner"]), tile.get(doc["target"])
    if columns is None or owner is None or target is None:
        raise CohtbError(f"{run.path}: field 'controllers.l1': no tile of the owner's or the target's core (not a "
                         "mesh machine's run?)")
    clock = run.manifest.system.clock_hz / 1e9
    overhead = doc["timer_overhead"]
    return [MeshCell(c["state"], c["operation"], owner, target, mesh_hops(owner, target, columns), c["n"],
                     c["median"] - overhead, c["mean"] - overhead, clock, run.id)
            for c in doc["cells"]]


def chase_ticks_per_load(run: Run) -> float:
    """A chase run's counter ticks per load, the mean over its threads (each timed its own window)."""
    doc = run.manifest.workload.model_dump()
    if doc.get("benchmark") != "chase" or not doc.get("ticks_per_load"):
        raise CohtbError(f"{run.path}: field 'workload': not a chase run with its ticks per load")
    return sum(doc["ticks_per_load"]) / len(doc["ticks_per_load"])
