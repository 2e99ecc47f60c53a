"""The run manifest (manifest.json in every run directory): one schema, used to write it (the recorder builds a
Manifest) and to read it (validated, every failure one line naming the file and the field), its version checked."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Optional

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, ValidationError, confloat, conint

from cohtb.data_file import field_error
from cohtb.errors import CohtbError
from cohtb.run.spec import RunSpec
from cohtb.trace.layout import Field as LayoutField

MANIFEST_VERSION = 1   # a change to what a field means is a new version, and load() reads every version it knows


class _Open(BaseModel):
    """Sections that carry more than cohtb reads (gem5's parameters, the workload's own JSON) keep the rest."""

    model_config = ConfigDict(extra="allow")


class Roi(BaseModel):
    begin_tick: conint(ge=0)
    end_tick: conint(ge=0)
    seconds: PositiveFloat


class L1Controller(_Open):
    """One L1 controller: the core it serves and that core's socket (as the gem5 system built them)."""

    core: conint(ge=0)
    socket: conint(ge=0)


class Controllers(_Open):
    l1: list[L1Controller] = Field(min_length=1)


class SystemParams(_Open):
    local_latency: conint(ge=0)
    socket_latency: conint(ge=0)


class Topology(BaseModel):
    """Which socket pairs a link joined (gem5-configs/multisocket/topology.py); hops[a][b]: links between a and b."""

    name: str
    digest: str
    links: list[tuple[conint(ge=0), conint(ge=0)]]
    hops: list[list[conint(ge=0)]]


class System(_Open):
    sockets: conint(ge=1)
    cores_per_socket: conint(ge=1)
    cores: conint(ge=1)
    cpu: str
    clock: str
    params: SystemParams
    topology: Optional[Topology] = None   # absent in runs recorded before topologies: every pair one hop
    machine: str = "flat"                 # a hierarchy or a machine file (cohtb/run/machines.py)

    @property
    def clock_hz(self) -> float:
        return parse_frequency(self.clock)


class Measure(_Open):
    """How the workload measured itself (workloads/common/bench.h): a timed window, or fixed work."""

    mode: str
    warmup_ns: conint(ge=0)
    window_ns: conint(ge=1)
    interval_ns: conint(ge=1)
    intervals: conint(ge=1)
    seed: conint(ge=0) = 0


class Intervals(_Open):
    """will-it-scale's per-interval line: the threads' ops summed, and the least and most of one thread."""

    total: list[conint(ge=0)]
    min: list[conint(ge=0)]
    max: list[conint(ge=0)]


class WorkloadResult(_Open):
    ops: conint(ge=1, strict=True)   # strict: a number written as a string is refused, not read as one
    threads: conint(ge=1, strict=True)
    locked_ops: Optional[conint(ge=0)] = None
    lockref_updates: Optional[conint(ge=0)] = None   # gets and puts; absent before timed windows (then 2 per op)
    measure: Optional[Measure] = None             # absent in runs recorded before timed windows
    per_thread_ops: Optional[list[conint(ge=0)]] = None
    intervals: Optional[Intervals] = None
    listings: Optional[conint(ge=0)] = None       # stat_file's intruder: the directory listings it made
    # read by the report (the warm-up's operations, the workload's own time, its flags, its objects' fields):
    # strict, so that a number written as a string is refused, not read as one
    all_ops: Optional[conint(ge=0, strict=True)] = None
    elapsed_s: Optional[confloat(ge=0, strict=True)] = None
    flags: Optional[dict] = None
    layout_map: Optional[dict] = None


class Files(_Open):
    events: Optional[str]   # None: an untraced run (spec.traced false), which has no events


class LayoutRecord(BaseModel):
    object: str
    name: str
    vaddr: int
    size: conint(ge=1)
    paddr: Optional[int]
    how: str
    line_size: conint(ge=1)
    lines: list[int] = []

    def field(self) -> LayoutField:
        return LayoutField(self.object, self.name, self.vaddr, self.size, self.paddr, self.how, self.line_size)


class LineSymbols(BaseModel):
    """A full-system run's kernel names on one line of its trace: globals and per-CPU variables
    (cohtb/fs/symbols.py), and fields of objects the guest reported (`object_field`, cohtb/fs/runner.py)."""
    line: conint(ge=0)
    symbols: list[str]


def object_field(obj: str, field: str) -> str:
    """A reported object's field among a line's names: "<object>.<field>", the object named with a space ("thread 3's
    task_struct"), which no symbol has, so `split_object_field` tells the two apart."""
    return f"{obj}.{field}"


def split_object_field(name: str) -> tuple[str, str] | None:
    """(object, field) of a name `object_field` made; None for a symbol's name."""
    obj, dot, field = name.rpartition(".")
    return (obj, field) if dot and " " in obj else None


class Gem5Record(_Open):
    """How gem5 ran: its binary and command line (paths portable: cohtb/run/portable.py), its version and exit."""

    binary: str
    version: str
    command: list[str]
    host_seconds: float
    cpu_seconds: Optional[float] = None   # gem5's own, user + system; absent in older runs
    exit_cause: Optional[str] = None
    build: Optional[str] = None    # a digest of the binary (cohtb/run/gem5.py: identity); absent in older runs
    protocol: Optional[str] = None   # the Ruby protocol it was built with (gem5's buildEnv); absent in older runs


class FileRecord(BaseModel):
    path: str
    sha256: str


class DeclarationRecord(BaseModel):
    """The declaration a run was recorded under (cohtb/experiments/declarations.py: record): it counts for that
    declaration only while the digest is the declaration's."""

    id: str
    digest: str
    commit: str


class Recorded(BaseModel):
    """Where and when the run was recorded (cohtb/run/provenance.py): the host, and UTC start and end."""

    host: str
    started: str
    ended: str


class Checkpoint(_Open):
    """A full-system run's boot checkpoint: where it is and what the boot cost."""

    path: str
    host_seconds: float
    cpu_seconds: Optional[float] = None   # the booting gem5's own; absent in older checkpoints
    simulated_seconds: float
    bytes: conint(ge=0)


class Manifest(_Open):
    cohtb_run: int
    id: str
    spec: RunSpec
    gem5: Gem5Record
    system: System
    controllers: Controllers
    roi: Roi
    workload: WorkloadResult
    ingest: dict                               # the ingest's counts (cohtb/trace/ingest.py)
    files: Files
    layout: list[LayoutRecord]
    workload_binary: Optional[FileRecord] = None   # absent in runs recorded before it was kept
    declaration: Optional[DeclarationRecord] = None
    cohtb: Optional[dict] = None   # the cohtb commit that recorded it, and whether its checkout had changes
    recorded: Optional[Recorded] = None        # absent in runs recorded before it was kept
    # Full-system runs: the kernel's inputs, the boot checkpoint, the atomic-CPU set-up after it, and the vmlinux
    # data symbols by line.
    kernel: Optional[dict] = None
    checkpoint: Optional[Checkpoint] = None
    atomic_setup: Optional[dict] = None
    kernel_symbols: list[LineSymbols] = []
    bundled: Optional[dict] = None             # where `cohtb bundle` took the run from, and what it left out

    @property
    def socket_of_core(self) -> list[int]:
        """The core -> socket map of the machine the run came from."""
        by_core = {c.core: c.socket for c in self.controllers.l1}
        return [by_core[c] for c in range(len(by_core))]


def parse_frequency(text: str) -> float:
    """'3GHz', '2.5 GHz', '800MHz' -> Hz (the way gem5 writes clocks)."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([kMG]?)Hz\s*", text)
    if not m:
        raise CohtbError(f"clock '{text}': expected a frequency such as 3GHz")
    return float(m.group(1)) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]


def load(path: Path) -> Manifest:
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise CohtbError(f"{path}: cannot read: {e.strerror}") from None
    try:
        m = Manifest.model_validate_json(text)
    except ValidationError as e:
        raise field_error(path, e) from None
    if m.cohtb_run != MANIFEST_VERSION:
        raise CohtbError(f"{path}: field 'cohtb_run': manifest version {m.cohtb_run}; this cohtb reads version "
                         f"{MANIFEST_VERSION} (a newer cohtb wrote it?)")
    by_core = {c.core for c in m.controllers.l1}
    if by_core != set(range(len(by_core))):
        raise CohtbError(f"{path}: field 'controllers.l1': cores are not numbered 0..{len(by_core) - 1}")
    # a timed run's window is stored twice, as asked (spec) and as the workload measured it: labels read one,
    # throughput the other, so they must be the same window
    measure = m.workload.measure
    if measure is not None and measure.mode == "window" and measure.window_ns != round(m.spec.window_us * 1000):
        raise CohtbError(f"{path}: field 'workload.measure.window_ns': {measure.window_ns} ns, where the run's spec "
                         f"(spec.window_us) asks for a {m.spec.window_us:g} µs window")
    return m


def dump(m: Manifest) -> dict:
    """The manifest as JSON data: what was read or given, nothing added (an older run stays as it was written)."""
    return json.loads(m.model_dump_json(exclude_unset=True))
