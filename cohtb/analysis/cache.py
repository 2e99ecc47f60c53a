"""Where a run's analysis (counters.json) is kept when no directory is named: outside the run, so that runs (the
bundled ones included) are never written to, and keyed by everything the analysis depends on (the run's manifest
and events, the monitor's RTL sources, the package's code), so that it is reused until one of them changes."""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path

from cohtb.monitor.ondemand import rtl_sources_digest
from cohtb.run.runs import Run
from cohtb.places import ROOT, analysis_cache


@functools.cache
def _code_digest() -> str:
    h = hashlib.sha256(rtl_sources_digest().encode())
    for f in sorted((ROOT / "cohtb").rglob("*.py")):
        h.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def run_key(run: Run) -> str:
    h = hashlib.sha256(_code_digest().encode())
    for f in (run.path / "manifest.json", run.events_file()):
        with open(f, "rb") as src:
            for block in iter(lambda: src.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()[:20]


def cached_counters_path(run: Run) -> Path:
    return analysis_cache() / "analysis" / f"{run.id}-{run_key(run)}" / "counters.json"
