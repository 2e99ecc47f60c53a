"""The runners put together: every kind of run cohtb records, and the one launch that schedules them."""

from __future__ import annotations

from pathlib import Path

from cohtb.fs.runner import FSRunner
from cohtb.run import scheduler
from cohtb.run.recorder import Live, Outcome
from cohtb.run.spec import RunSpec
from cohtb.se.runner import SERunner

RUNNERS = {"se": SERunner(), "fs": FSRunner()}


def check(specs: list[RunSpec]) -> None:
    """Refuses, one line naming the run, a spec no runner can record."""
    scheduler.check(specs, RUNNERS)


def launch(specs: list[RunSpec], runs_dir: Path, jobs: int | None = None, timeout: float = 3600,
           live: Live | None = None, declared: dict[str, dict] | None = None, executor=None) -> list[Outcome]:
    """The runs recorded into runs_dir (cohtb/run/scheduler.py: launch), by `executor` (cohtb/run/executors.py;
    default: `jobs` local slots)."""
    return scheduler.launch(specs, runs_dir, RUNNERS, jobs, timeout, live, declared, executor)
