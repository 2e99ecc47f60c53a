"""A run directory as written by `cohtb launch` (or bundled under reference-runs/), read with clear
errors: the manifest, the event file, the layout in physical addresses."""

from __future__ import annotations

import gzip
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from . import events as ev
from .errors import CohtbError
from .layout import Field
from .matrix import RunSpec


@dataclass
class Run:
    path: Path
    manifest: dict

    @property
    def id(self) -> str:
        return self.manifest["id"]

    @property
    def spec(self) -> RunSpec:
        return RunSpec.from_json(self.manifest["spec"])

    @property
    def fields(self) -> list[Field]:
        return [Field(**{k: v for k, v in f.items() if k != "lines"}) for f in self.manifest["layout"]]

    @property
    def ops(self) -> int:
        """Operations of the region of interest (lockref: get+put pairs)."""
        return int(self.manifest["workload"]["ops"])

    @property
    def roi_seconds(self) -> float:
        return float(self.manifest["roi"]["seconds"])

    @property
    def throughput(self) -> float:
        """Operations per simulated second of the region."""
        return self.ops / self.roi_seconds

    def events_path(self, scratch: Path | None = None) -> Path:
        """The event file; a bundled run's compressed one is unpacked into scratch first."""
        name = self.manifest["files"]["events"]
        plain = self.path / name
        if plain.exists():
            return plain
        packed = self.path / (name + ".gz")
        if packed.exists():
            if scratch is None:
                raise CohtbError(f"{packed}: compressed events need a scratch directory")
            out = scratch / name
            if not out.exists() or out.stat().st_mtime < packed.stat().st_mtime:
                scratch.mkdir(parents=True, exist_ok=True)
                tmp = out.with_suffix(".tmp")
                with gzip.open(packed, "rb") as src, open(tmp, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                tmp.replace(out)
            return out
        raise CohtbError(f"{self.path}: the manifest names {name}, which is missing")


REQUIRED = {"id": str, "spec": dict, "roi": dict, "workload": dict, "layout": list, "files": dict, "system": dict}


def load(path: Path | str) -> Run:
    path = Path(path)
    mpath = path / "manifest.json"
    if not path.is_dir():
        raise CohtbError(f"{path}: not a run directory")
    if not mpath.exists():
        failed = path.with_name(path.name + ".failed.json")
        hint = f" (this run failed: see {failed})" if failed.exists() else ""
        raise CohtbError(f"{path}: no manifest.json: not a finished run{hint}")
    try:
        m = json.loads(mpath.read_text())
    except json.JSONDecodeError as e:
        raise CohtbError(f"{mpath}: corrupt manifest: {e}") from None
    for key, typ in REQUIRED.items():
        if not isinstance(m.get(key), typ):
            raise CohtbError(f"{mpath}: field '{key}' missing or not a {typ.__name__}")
    for key in ("seconds", "begin_tick", "end_tick"):
        if not isinstance(m["roi"].get(key), (int, float)) or (key == "seconds" and m["roi"][key] <= 0):
            raise CohtbError(f"{mpath}: field 'roi.{key}' missing or not positive")
    if "ops" not in m["workload"]:
        raise CohtbError(f"{mpath}: field 'workload.ops' missing")
    return Run(path, m)


def discover(paths: list[Path]) -> list[Run]:
    """Run directories named directly, or every finished run below a directory of runs."""
    runs = []
    for p in paths:
        p = Path(p)
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
    spec = run.spec
    if header.num_cores != spec.cores or header.num_sockets != spec.sockets:
        raise CohtbError(f"{run.path}: events are from {header.num_cores} cores / {header.num_sockets} sockets, "
                         f"the manifest says {spec.cores} / {spec.sockets}")
    src = header.source.get("run")
    if src is not None and src != run.id:
        raise CohtbError(f"{run.path}: the event file belongs to run '{src}', not '{run.id}'")
