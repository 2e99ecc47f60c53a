"""`cohtb bundle`: copy finished runs into reference-runs/ (manifest + gzip-compressed events), the
runs `cohtb run` falls back to when gem5 is absent, with their profiles. Traces and gem5's own files stay behind."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

from cohtb.atomic import atomic_dir, writable_dir, write_text_atomic
from cohtb.run.manifest import dump
from cohtb.run.portable import portable
from cohtb.run.runs import Run
from cohtb.toolchain import ROOT


RECORDED = "declared-runs.txt"   # in the bundle: every run bundled under a declaration, one id per line


def recorded(into: Path) -> list[str]:
    """The ids of the runs bundled under a declaration (tests/test_seeds.py: none may leave the bundle)."""
    path = into / RECORDED
    return path.read_text().split() if path.exists() else []


def pack_events(run: Run, packed: Path) -> None:
    source = run.events_file()
    if source.suffix == ".gz":
        shutil.copyfile(source, packed)
    else:
        # no time in the header (mtime 0): bundling a run again gives the same bytes, so git sees no change
        with open(source, "rb") as src, open(packed, "wb") as raw, \
                gzip.GzipFile(filename=str(packed), fileobj=raw, mode="wb", compresslevel=9, mtime=0) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)


def bundle(runs: list[Run], into: Path) -> int:
    """Returns the bytes the bundled runs take. A run recorded under a declaration is listed in RECORDED too: a
    declaration's verdict must not change because one of its runs went missing."""
    writable_dir(into)
    total = 0
    for run in runs:
        final = into / run.id
        with atomic_dir(final) as tmp:
            m = dump(run.manifest)
            m["bundled"] = {"from": portable(str(run.path), {"{repo}": ROOT}), "left_out": ["trace.gz", "pagemap.txt", "gem5/"]}
            (tmp / "manifest.json").write_text(json.dumps(m, indent=1, sort_keys=True) + "\n")
            if run.manifest.files.events is not None:   # an untraced run has none
                pack_events(run, tmp / (run.manifest.files.events + ".gz"))
            profile = (run.manifest.files.model_extra or {}).get("profile")
            if profile:   # small (per function, and the few addresses that held time) and what `cohtb profile` reads
                shutil.copyfile(run.path / profile, tmp / profile)
            diff = (run.manifest.files.model_extra or {}).get("cohtb_diff")
            if diff:   # recorded with --allow-dirty: the code that made it goes with it
                shutil.copyfile(run.path / diff, tmp / diff)
            total += sum(p.stat().st_size for p in tmp.iterdir())   # what was bundled, not what else is there
    declared = sorted(set(recorded(into)) | {r.id for r in runs if r.spec.declaration})
    if declared != recorded(into):
        write_text_atomic(into / RECORDED, "".join(f"{i}\n" for i in declared))
    return total
