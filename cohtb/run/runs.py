"""A run directory as written by `cohtb launch` (or bundled under reference-runs/), read with clear
errors: the manifest, the event file, the layout in physical addresses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cohtb.trace import events as ev
from cohtb.errors import CohtbError
from cohtb.trace.layout import Field
from cohtb.run import pc_profile
from cohtb.run.manifest import Manifest
from cohtb.run.manifest import load as load_manifest
from cohtb.places import REFERENCE_RUNS, ROOT, RUNS
from cohtb.run.spec import RunSpec


@dataclass
class Run:
    path: Path
    manifest: Manifest

    @property
    def id(self) -> str:
        return self.manifest.id

    @property
    def spec(self) -> RunSpec:
        return self.manifest.spec

    @property
    def fields(self) -> list[Field]:
        return [f.field() for f in self.manifest.layout]

    @property
    def ops(self) -> int:
        """Operations of the measured part (lockref: get+put pairs): the window, or all of a fixed-work run."""
        return self.manifest.workload.ops

    @property
    def roi_seconds(self) -> float:
        return self.manifest.roi.seconds

    @property
    def timed(self) -> bool:
        m = self.manifest.workload.measure
        return m is not None and m.mode == "window"

    @property
    def measured_seconds(self) -> float:
        """Simulated seconds of the measured part: the workload's window (gem5's clock_gettime is simulated
        time), else the region of interest. The monitor counts the region, which thread 0 opens and
        closes at its first op boundary after the window's: the two differ by about one op."""
        m = self.manifest.workload.measure
        return m.window_ns / 1e9 if self.timed else self.roi_seconds

    @property
    def region_ops(self) -> float:
        """Operations of the region of interest, which the monitor counts: the measured part's at its rate (a
        timed run's region is its window to within one of thread 0's operations, by which a short window's can
        differ). Every count per operation is per one of these."""
        return self.ops * self.roi_seconds / self.measured_seconds

    @property
    def throughput(self) -> float:
        """Operations per simulated second of the measured part."""
        return self.ops / self.measured_seconds

    def events_file(self) -> Path:
        """The event file, plain or (bundled runs) gzip-compressed."""
        name = self.manifest.files.events
        if name is None:
            raise CohtbError(f"{self.path}: an untraced run (gem5 ran without ProtocolTrace): it has no events")
        for candidate in (self.path / name, self.path / (name + ".gz")):
            if candidate.exists():
                return candidate
        raise CohtbError(f"{self.path}: the manifest names {name}, which is missing")

    def profile(self) -> dict | None:
        """The run's kept profile (cohtb/run/pc_profile.py), or None: recorded without one."""
        name = (self.manifest.files.model_extra or {}).get("profile")
        return pc_profile.load(self.path / name) if name else None

    def events_header(self) -> ev.Header:
        return ev.header_of(self.events_file())

    def events(self) -> tuple[ev.Header, np.ndarray]:
        """The run's events, read once, checked against the manifest."""
        header, recs = ev.read_all(self.events_file())
        check_events_match(self, header)
        return header, recs


def load(path: Path | str) -> Run:
    path = Path(path)
    mpath = path / "manifest.json"
    if not path.is_dir():
        raise CohtbError(f"{path}: not a run directory")
    if not mpath.exists():
        failed = path.with_name(path.name + ".failed.json")
        hint = f" (this run failed: see {failed})" if failed.exists() else ""
        raise CohtbError(f"{path}: no manifest.json: not a finished run{hint}")
    return Run(path, load_manifest(mpath))


RUN_DIRS = (RUNS, REFERENCE_RUNS.relative_to(ROOT))   # where a run named by its id is looked for


def resolve(name: Path | str) -> Path:
    """A path as given when it exists, else the run of that id in results/runs/ or reference-runs/ (of the current
    directory, then of the cohtb checkout)."""
    p = Path(name)
    if p.exists():
        return p
    for base in dict.fromkeys((Path.cwd(), ROOT)):
        for d in RUN_DIRS:
            if (base / d / p / "manifest.json").exists():
                return base / d / p
    raise CohtbError(f"{name}: no such run directory or file, nor a run of that id in {' or '.join(map(str, RUN_DIRS))}/")


def kept(specs: list[RunSpec], dirs: list[Path]) -> tuple[list[Run], list[str]]:
    """The finished runs of these specs found in the first of `dirs` that has each, and the ids not found.
    A run of that id recorded from another spec (an older warm-up, say) is an error, not a match."""
    runs, missing = [], []
    for spec in specs:
        found = next((d / spec.id for d in dirs if (d / spec.id / "manifest.json").exists()), None)
        if found is None:
            missing.append(spec.id)
            continue
        run = load(found)
        if run.spec != spec:
            raise CohtbError(f"{run.path}: recorded from another spec than the experiment's ({run.spec} != {spec})")
        runs.append(run)
    return runs, missing


def discover(paths: list[Path]) -> list[Run]:
    """Run directories named directly (or by run id), or every finished run below a directory of runs."""
    runs = []
    for p in paths:
        p = resolve(p)
        if (p / "manifest.json").exists() or not p.is_dir():
            runs.append(load(p))
        else:
            found = sorted(d for d in p.iterdir() if (d / "manifest.json").exists())
            if not found:
                raise CohtbError(f"{p}: no finished runs in it")
            runs += [load(d) for d in found]
    return runs


def check_events_match(run: Run, header: ev.Header) -> None:
    """An event file that came from another configuration than its manifest is refused."""
    if header.socket_of_core != run.manifest.socket_of_core:
        raise CohtbError(f"{run.path}: the event file's core->socket map ({header.num_cores} cores, {header.num_sockets} "
                         f"sockets) differs from the manifest's controllers ({len(run.manifest.socket_of_core)} cores)")
    src = header.source.get("run")
    if src is not None and src != run.id:
        raise CohtbError(f"{run.path}: the event file belongs to run '{src}', not '{run.id}'")
