"""A set of runs recorded in parallel, up to the machine's cores: each by its runner, with one progress line, and
resumable (a run already in the directory is skipped; a failed one is tried again)."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.run import gem5 as gem5_tool
from cohtb.run.recorder import Live, Outcome, Runner, build_live_monitors, record
from cohtb.run.spec import RunSpec


class Progress:
    """One status line, redrawn; finished runs are printed above it."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.stream = total, stream
        self.done = self.failed = self.skipped = self.running = 0
        self.t0 = time.monotonic()
        self.lock = threading.Lock()

    def _status(self) -> str:
        return (f"[{self.done + self.failed + self.skipped}/{self.total}] {self.running} running, {self.done} done, "
                f"{self.skipped} already there, {self.failed} failed, {time.monotonic() - self.t0:.0f} s")

    def start(self) -> None:
        with self.lock:
            self.running += 1
            print(f"\r{self._status()}", end="", file=self.stream, flush=True)

    def finish(self, o: Outcome) -> None:
        with self.lock:
            self.running -= 1
            setattr(self, o.status, getattr(self, o.status) + 1)
            if o.status != "skipped":
                what = f"{o.seconds:.0f} s" if o.status == "done" else "FAILED: " + o.error.splitlines()[0]
                print(f"\r{o.spec.id}: {what}".ljust(100), file=self.stream)
            print(f"\r{self._status()}", end="", file=self.stream, flush=True)

    def close(self) -> None:
        print(file=self.stream)


def check(specs: list[RunSpec], runners: Mapping[str, Runner]) -> None:
    """Every spec is a run its runner can record: refused here, before anything runs."""
    for s in specs:
        s.check()
        runners[s.kind].check(s)


def launch(specs: list[RunSpec], runs_dir: Path, runners: Mapping[str, Runner], jobs: int | None = None,
           timeout: float = 3600, live: Live | None = None, declared: dict[str, dict] | None = None) -> list[Outcome]:
    """runners: kind ("se", "fs") -> its runner. declared: declaration id -> its record
    (cohtb/experiments/declarations.py: record), taken by the caller before the launch, for every run recorded
    under a declaration."""
    gem5 = gem5_tool.require()
    declared = declared or {}
    unrecorded = sorted({s.declaration for s in specs if s.declaration} - set(declared))
    if unrecorded:
        raise CohtbError(f"runs declared under {', '.join(unrecorded)} need the declaration's record: record them "
                         "with `cohtb seeds --launch`")
    check(specs, runners)
    runs_dir.mkdir(parents=True, exist_ok=True)
    workers = jobs or os.cpu_count() or 1
    todo = [s for s in specs if not (runs_dir / s.id / "manifest.json").exists()]
    if live:
        build_live_monitors(todo)
    prepared: dict = {}
    for kind, runner in runners.items():   # kernels and boots before any run: each uses every core
        prepared.update(runner.prepare([s for s in todo if s.kind == kind], gem5, timeout, workers))
    progress = Progress(len(specs))
    outcomes = []

    def one(spec: RunSpec) -> Outcome:
        progress.start()
        ready = prepared.get(spec.id)
        if spec.id not in prepared:   # recorded already
            o = Outcome(spec, "skipped")
        elif isinstance(ready, str):
            o = Outcome(spec, "failed", 0.0, ready)
        else:
            o = record(spec, runners[spec.kind], ready, gem5, runs_dir, timeout, live, declared.get(spec.declaration))
        progress.finish(o)
        return o

    try:   # the progress line ends even when a run's error stops the launch, so the error gets a line of its own
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for fut in as_completed([pool.submit(one, s) for s in specs]):
                outcomes.append(fut.result())
    finally:
        progress.close()
    return sorted(outcomes, key=lambda o: specs.index(o.spec))
