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
