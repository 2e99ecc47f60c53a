"""The calibration check as values: the published parts a simulated machine is calibrated against
(hardware_latency.toml: each cell in ns, which cells a machine was solved from), where a measured cell's data came
from, the additive model that needs no simulator, and which of the two lands nearer a published figure."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cohtb.analysis.latency import LatencyCell
from cohtb.data_file import Record, read_toml, validated
from cohtb.errors import CohtbError
from cohtb.run.machines import placement

HARDWARE = Path(__file__).resolve().parent / "hardware_latency.toml"
MESH_HARDWARE = Path(__file__).resolve().parent / "mesh_latency.toml"
MESH_FIGURES = ("l1-load", "l2-load", "l3-load", "memory-load", "c2c-mean", "c2c-worst")


@dataclass(frozen=True)
class Part:
    name: str
    description: str
    source: str
    ns: dict         # (state, operation, hops) -> published nanoseconds
    inferred: dict   # (state, operation, hops) -> what of the cell its source does not state
    calibrated_on: frozenset = frozenset()   # the (state, operation, hops) a machine's calibration was solved from
    calibrated_machines: tuple = ()          # the machine files calibrated on this part


class _Cell(Record):
    state: str
    operation: str
    hops: int


class _Measured(_Cell):
    cycles: float | None = None   # the part's core cycles (at its clock_ghz), or
    ns: float | None = None       # nanoseconds, as the source gives it
    inferred: str = ""            # what of the cell its source does not state


class _Part(Record):
    part: str
    source: str
    cells: tuple[_Measured, ...]
    seeds: tuple[str, ...] = ()
    clock_ghz: float | None = None
    calibrated_on: tuple[_Cell, ...] = ()
    calibrated_machines: tuple[str, ...] = ()


def parts(path: Path = HARDWARE) -> dict[str, Part]:
    doc = read_toml(path)
    out = {}
    for name, raw in doc.items():
        p = validated(_Part, raw, path, at=name)
        ns, inferred = {}, {}
        for i, c in enumerate(p.cells):
            key = (c.state, c.operation, c.hops)
            if c.ns is None and (c.cycles is None or p.clock_ghz is None):
                raise CohtbError(f"{path}: field '{name}.cells.{i}': needs ns, or cycles with the part's clock_ghz")
            ns[key] = c.ns if c.ns is not None else c.cycles / p.clock_ghz
            if c.inferred:
                inferred[key] = c.inferred
        fitted = frozenset((c.state, c.operation, c.hops) for c in p.calibrated_on)
        if not fitted <= set(ns):
            raise CohtbError(f"{path}: field '{name}.calibrated_on': {sorted(fitted - set(ns))} are not cells of it")
        out[name] = Part(name, p.part, p.source, ns, inferred, fitted, p.calibrated_machines)
    return out


@dataclass(frozen=True)
class MeshPart:
    name: str
    description: str
    clock_ghz: float
    ns: dict          # figure -> published nanoseconds
    sources: dict     # figure -> where it was read
    inferred: dict    # figure -> what of it its source does not state
    calibrated_on: frozenset = frozenset()   # the figures a machine's calibration was solved from
    calibrated_machines: tuple = ()          # the machine files calibrated on this part


class _MeshFigure(Record):
    figure: Literal[MESH_FIGURES]
    source: str
    cycles: float | None = None   # the part's core cycles (at its clock_ghz), or
    ns: float | None = None       # nanoseconds, as the source gives it
    inferred: str = ""


class _MeshPart(Record):
    part: str
    clock_ghz: float
    figures: tuple[_MeshFigure, ...]
    seeds: tuple[str, ...] = ()
    calibrated_on: tuple[Literal[MESH_FIGURES], ...] = ()
    calibrated_machines: tuple[str, ...] = ()


def mesh_parts(path: Path = MESH_HARDWARE) -> dict[str, MeshPart]:
    """The mesh parts' published figures, each in ns; a figure given twice, or as neither or both of cycles and
    ns, is refused in one line naming the file and the field."""
    out = {}
    for name, raw in read_toml(path).items():
        p = validated(_MeshPart, raw, path, at=name)
        ns, sources, inferred = {}, {}, {}
        for i, f in enumerate(p.figures):
            if (f.cycles is None) == (f.ns is None) or f.figure in ns:
                why = "given twice" if f.figure in ns else "needs cycles or ns, not both"
                raise CohtbError(f"{path}: field '{name}.figures.{i}': {f.figure} {why}")
            ns[f.figure] = f.ns if f.ns is not None else f.cycles / p.clock_ghz
            sources[f.figure] = f.source
            if f.inferred:
                inferred[f.figure] = f.inferred
        if not set(p.calibrated_on) <= set(ns):
            raise CohtbError(f"{path}: field '{name}.calibrated_on': {sorted(set(p.calibrated_on) - set(ns))} are "
                             "not figures of it")
        out[name] = MeshPart(name, p.part, p.clock_ghz, ns, sources, inferred, frozenset(p.calibrated_on),
                             p.calibrated_machines)
    return out


def distance(c: LatencyCell) -> int:
    """The hops a cell's data travels: from the owner, or, in state I (no core holds the line), from its home."""
    return c.home_hops if c.state == "I" else c.hops


# The part the calibration plan's machine (8 sockets wired as a glueless E7-8800 box) is compared with.
CALIBRATION_PART = "westmere-ex-8s"
TOLERANCE = 0.25   # issue 34: every cell within 25% of the published figure


def additive(part: Part) -> dict:
    """What a model with no simulator at all predicts for every published cell, from the cells the calibration was
    solved from: the same-socket time of the cell's kind (an S load: the S load; an I line: the I load from memory;
    anything else: the M load, since a store or an atomic costs about what an M load does) plus the M load's
    increment for the cell's hops. A calibration check the simulation passes no better than this one tests the
    arithmetic of adding hops, not the simulator. Empty when the part names no calibration cells."""
    need = {("S", "load", 0), ("M", "load", 0), ("I", "load", 0)}
    if not need <= part.calibrated_on:
        return {}
    m_load = {h: part.ns[("M", "load", h)] for s, o, h in part.calibrated_on if (s, o) == ("M", "load")}
    out = {}
    for state, op, hops in part.ns:
        if hops not in m_load:
            continue
        base = part.ns[("S", "load", 0)] if (state, op) == ("S", "load") else \
            part.ns[("I", "load", 0)] if state == "I" else part.ns[("M", "load", 0)]
        out[(state, op, hops)] = base + m_load[hops] - m_load[0]
    return out


def closer(simulated: float, model: float, published: float) -> str:
    """Which of two predictions is nearer the published figure (relative error), or a tie within 1%."""
    a, b = abs(simulated / published - 1), abs(model / published - 1)
    return "tie" if abs(a - b) < 0.01 else "simulation" if a < b else "additive model"


# A mesh part's figures and the kind of cell each is measured by: (state, operation) of cclat's cells, or the chase.
MESH_KIND_OF = {"c2c-mean": ("M", "cas"), "c2c-worst": ("M", "cas"), "l3-load": ("S", "load"),
                "memory-load": ("I", "load")}


@dataclass(frozen=True)
class MeshFit:
    """One kind of cell on a mesh machine read as a fixed cost plus a cost per hop of its legs (least squares over
    its cells at different distances), and how far its cells lie from that line."""
    state: str
    operation: str
    fixed_cycles: float
    cycles_per_hop: float
    worst_residual_cycles: float
    cells: int


def mesh_fit(cells: list) -> MeshFit | None:
    """The line through a kind's cells (analysis/latency.MeshCell, all of one state and operation, median cycles by
    legs' hops); None without cells at two distances."""
    points = [(c.legs_hops, c.median_cycles) for c in cells if c.legs_hops is not None]
    if len({h for h, _ in points}) < 2:
        return None
    n = len(points)
    mean_h, mean_y = sum(h for h, _ in points) / n, sum(y for _, y in points) / n
    slope = (sum((h - mean_h) * (y - mean_y) for h, y in points)
             / sum((h - mean_h) ** 2 for h, _ in points))
    fixed = mean_y - slope * mean_h
    worst = max(abs(y - fixed - slope * h) for h, y in points)
    return MeshFit(cells[0].state, cells[0].operation, fixed, slope, worst, n)


def mesh_hops_over_part(columns: int, tiles: int) -> dict:
    """What each figure's legs average over the part's whole mesh (every core on every tile, every line's slice on
    every tile, the memory controller on its tile): the compare-and-exchange's mean over every pair of distinct
    tiles and every slice, and its worst; the L3 load's and the memory load's means over every core and slice."""
    mem = placement.MESH_MEMORY_TILE
    d = [[placement.mesh_hops(a, b, columns) for b in range(tiles)] for a in range(tiles)]
    pairs = [(t, o) for t in range(tiles) for o in range(tiles) if t != o]
    c2c = [d[t][h] + d[h][o] + d[o][t] for t, o in pairs for h in range(tiles)]
    return {"c2c-mean": sum(c2c) / len(c2c), "c2c-worst": float(max(c2c)),
            "l3-load": sum(2 * d[t][h] for t in range(tiles) for h in range(tiles)) / tiles ** 2,
            "memory-load": sum(d[t][h] + d[h][mem] + d[mem][t] for t in range(tiles) for h in range(tiles)) / tiles ** 2}


def l2_load_cycles(ticks_by_kib: dict, l1_hit_cycles: int) -> float | None:
    """The L2 load-to-use from the chase (ticks per load by footprint in KiB): the L2-resident footprint's ticks less
    the L1-resident one's (the loop's own instructions), plus the L1's hit; None without both footprints."""
    if len(ticks_by_kib) < 2:
        return None
    return ticks_by_kib[max(ticks_by_kib)] - ticks_by_kib[min(ticks_by_kib)] + l1_hit_cycles


def mesh_figures(fits: list[MeshFit], hops: dict, l2_cycles: float | None, clock_ghz: float) -> dict:
    """Each figure of a mesh part as the machine gives it, in ns: a kind's fixed cost plus its cost per hop times
    the hops the figure's legs run over the whole mesh (mesh_hops_over_part); the L2 load from the chase."""
    by_kind = {(f.state, f.operation): f for f in fits}
    out = {figure: (by_kind[kind].fixed_cycles + by_kind[kind].cycles_per_hop * hops[figure]) / clock_ghz
           for figure, kind in MESH_KIND_OF.items() if kind in by_kind}
    if l2_cycles is not None:
        out["l2-load"] = l2_cycles / clock_ghz
    return out
