"""Where a run's analysis (counters.json) is kept when no directory is named: outside the run, so that runs (the
bundled ones included) are never written to, and keyed by everything the analysis depends on (the run's manifest
and events, the monitor's RTL sources, the code that replays and analyses a run), so that it is reused until one
of them changes — and only then: a change to the report, the experiments or the commands leaves it reused."""

from __future__ import annotations

import functools
from pathlib import Path

from cohtb.digest import files_sha256, tree_digest
from cohtb.monitor.ondemand import rtl_sources_digest
from cohtb.run.runs import Run
from cohtb.places import ROOT, analysis_cache

# The code a run's analysis runs: the stages up to and including analysis that it imports (tests/test_architecture.py
# checks that nothing in them imports from outside), and the native sources of the Verilated replay and the
# compiled model. By path relative to the checkout, so that two checkouts of the same code share their analyses.
ANALYSIS_CODE = ("cohtb/__init__.py", "cohtb/errors.py", "cohtb/places.py", "cohtb/atomic.py", "cohtb/digest.py",
                 "cohtb/toolchain.py", "cohtb/tables.py", "cohtb/data_file.py", "cohtb/contract", "cohtb/trace", "cohtb/monitor", "cohtb/run",
                 "cohtb/fs", "cohtb/analysis", "native/include", "native/replay", "native/model")


def analysis_files() -> list[Path]:
    out = []
    for name in ANALYSIS_CODE:
        path = ROOT / name
        out += sorted(f for f in path.rglob("*") if f.is_file() and f.suffix in (".py", ".c", ".cpp", ".h")) \
            if path.is_dir() else [path]
    return out


@functools.cache
def _code_digest() -> str:
    return tree_digest(analysis_files(), ROOT, rtl_sources_digest().encode())


def run_key(run: Run) -> str:
    return files_sha256([run.path / "manifest.json", run.events_file()], _code_digest().encode())[:20]


def cached_counters_path(run: Run) -> Path:
    return analysis_cache() / "analysis" / f"{run.id}-{run_key(run)}" / "counters.json"
