"""Where cohtb keeps things: its checkout, the directories of runs, and the caches in the user's cache directory."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Where `cohtb launch` and `cohtb seeds --launch` put new runs (relative to the current directory), and the runs
# bundled with the checkout, which `cohtb run` and `cohtb results` read when gem5 is absent.
RUNS = Path("results/runs")
REFERENCE_RUNS = ROOT / "reference-runs"
# A machine's own runs, bundled apart from the seeds': its calibration (cclat, untraced), its locked-instruction
# checks, and its full-system check (traced, replayed for the tables of docs/machine.md).
CALIBRATION_RUNS = ROOT / "calibration-runs"


def user_cache(variable: str, name: str) -> Path:
    """$variable, else $XDG_CACHE_HOME/name, else ~/.cache/name."""
    if os.environ.get(variable):
        return Path(os.environ[variable])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / name


def analysis_cache() -> Path:
    """A run's analysis (counters.json) when no directory is named: COHTB_CACHE, private to every test run."""
    return user_cache("COHTB_CACHE", "cohtb")


def kernel_cache() -> Path:
    """Kernels and boot checkpoints: COHTB_KERNEL_CACHE. Separate from the analysis cache: they take minutes, are
    keyed by all their inputs, and are worth sharing between the user's runs and the kernel tests."""
    return user_cache("COHTB_KERNEL_CACHE", "cohtb-kernel")
