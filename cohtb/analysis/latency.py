"""The latency table of cclat runs (workloads/cclat.c): per state, operation and distance, what one operation
took on the simulated machine, beside what the published hardware took (experiments/hardware_latency.toml is read
by the report; this module only reads runs)."""

from __future__ import annotations

from dataclasses import dataclass

from cohtb.errors import CohtbError
from cohtb.run.machines import placement
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
    """A cclat cell on a mesh machine (one socket): where its threads and its lines' slice sat, and the mesh hops of
    the legs its operation's messages run (X then Y, as routed): a compare-and-exchange or store on a modified line
    requester -> slice -> owner -> requester, a load of a clean shared line requester -> slice -> requester (the
    slice answers), a load from memory requester -> slice -> memory controller -> requester; None for another
    kind, or when the lines' slice is not one (the run did not choose --interleave over every slice)."""
    state: str
    operation: str
    owner_tile: int
    target_tile: int
    home_tile: int | None
    legs_hops: int | None
    n: int
    median_cycles: float  # the timer's own cost taken off
    mean_cycles: float
    clock_ghz: float
    run: str


def mesh_legs(state: str, operation: str, target: int, owner: int, home: int | None, columns: int) -> int | None:
    """The mesh hops of an operation's legs (MeshCell), or None."""
    if home is None:
        return None
    d = lambda a, b: placement.mesh_hops(a, b, columns)   # noqa: E731
    if state == "M" and operation != "load":
        return d(target, home) + d(home, owner) + d(owner, target)
    if (state, operation) == ("S", "load"):
        return 2 * d(target, home)
    if (state, operation) == ("I", "load"):
        return d(target, home) + d(home, placement.MESH_MEMORY_TILE) + d(placement.MESH_MEMORY_TILE, target)
    return None


def mesh_cells(run: Run) -> list[MeshCell]:
    """A cclat run's cells on a mesh machine, each with its threads' tiles and its legs' hops."""
    doc = run.manifest.workload.model_dump()
    if doc.get("benchmark") != "cclat" or "cells" not in doc:
        raise CohtbError(f"{run.path}: field 'workload': not a cclat run (the mesh latency table reads cclat's cells)")
    tile = {c.core: (c.model_extra or {}).get("tile") for c in run.manifest.controllers.l1}
    columns = (run.manifest.system.params.model_extra or {}).get("mesh_columns")
    owner, target = tile.get(doc["owner"]), tile.get(doc["target"])
    if columns is None or owner is None or target is None:
        raise CohtbError(f"{run.path}: field 'controllers.l1': no tile of the owner's or the target's core (not a "
                         "mesh machine's run?)")
    homes = (run.manifest.controllers.model_extra or {}).get("home") or []
    home = next((h["tile"] for h in homes if h.get("residue") == doc["home"]), None) \
        if doc["interleave"] == len(homes) else None
    clock = run.manifest.system.clock_hz / 1e9
    overhead = doc["timer_overhead"]
    return [MeshCell(c["state"], c["operation"], owner, target, home,
                     mesh_legs(c["state"], c["operation"], target, owner, home, columns), c["n"],
                     c["median"] - overhead, c["mean"] - overhead, clock, run.id)
            for c in doc["cells"]]


def chase_ticks_per_load(run: Run) -> float:
    """A chase run's counter ticks per load, the mean over its threads (each timed its own window)."""
    doc = run.manifest.workload.model_dump()
    if doc.get("benchmark") != "chase" or not doc.get("ticks_per_load"):
        raise CohtbError(f"{run.path}: field 'workload': not a chase run with its ticks per load")
    return sum(doc["ticks_per_load"]) / len(doc["ticks_per_load"])
