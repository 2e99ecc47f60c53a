"""A set of runs recorded in parallel, on this machine's cores or a cluster's (cohtb/run/executors.py): each by its
runner, with one progress line, and resumable (a run already in the directory is skipped; a failed one is tried
again)."""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.run import gem5 as gem5_tool
from cohtb.run.cost import cost_per_run, simulated_work
from cohtb.run.executors import LocalPool
from cohtb.run.provenance import checkout
from cohtb.run.recorder import Live, Outcome, Runner, build_live_monitors, record
from cohtb.run.spec import RunSpec


class Progress:
    """One status line, redrawn; finished runs are printed above it. Into a log (not a terminal) every line ends
    instead: the status after each finished run, so the log reads line by line. While runs go on, the status is
    also given every `heartbeat` seconds (a full-system run takes many minutes with nothing else to show)."""

    def __init__(self, total: int, slots: int = 1, stream=sys.stderr, heartbeat: float | None = None,
                 work: Mapping[str, float] | None = None):
        self.total, self.slots, self.stream = total, slots, stream
        self.done = self.failed = self.skipped = self.running = 0
        self.host_seconds = 0.0   # of the runs done here, for the estimate of what is left
        # run id -> its size (simulated_work) for every run, when the runs differ in size: the estimate weighs them by it
        self.work = dict(work) if work else None
        if self.work is not None and len(self.work) != total:
            raise ValueError(f"Progress: {len(self.work)} runs have a size, of {total}")
        self.work_left = sum(self.work.values()) if self.work else 0.0
        self.sized: list[tuple[float, float]] = []   # (size, host seconds) of the runs done here that have a size
        self.t0 = time.monotonic()
        self.lock = threading.Lock()
        self.terminal = hasattr(stream, "isatty") and stream.isatty()
        self.logged = 0   # runs ended when a log was last given the status
        # a terminal's clock moves every few seconds; a log gets a line every ten minutes
        self.heartbeat = heartbeat if heartbeat is not None else 5.0 if self.terminal else 600.0
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def eta(self) -> str:
        """What is left, from the runs' own host times so far: per run, or, with `work`, by size (a launch of
        8-socket runs then 1-socket ones would otherwise be judged by its largest), over the slots."""
        left = self.total - self.done - self.failed - self.skipped
        if not self.done or not left:
            return ""
        if self.sized:
            fixed, per_work = cost_per_run(self.sized)
            return f", about {(fixed * left + per_work * self.work_left) / self.slots:.0f} s left"
        return f", about {self.host_seconds / self.done * left / self.slots:.0f} s left"

    def _status(self) -> str:
        # A cluster is sent every run at once: what its slots cannot run yet is waiting, not running.
        running = min(self.running, self.slots)
        waiting = f", {self.running - running} waiting" if self.running > running else ""
        return (f"[{self.done + self.failed + self.skipped}/{self.total}] {running} running{waiting}, {self.done} done, "
                f"{self.skipped} already there, {self.failed} failed, {time.monotonic() - self.t0:.0f} s{self.eta()}")

    def start(self) -> None:
        with self.lock:
            self.running += 1
            if self.terminal:
                self._redraw()
            if self._beat is None:
                self._beat = threading.Thread(target=self._beats, daemon=True)
                self._beat.start()

    def _beats(self) -> None:
        while not self._stop.wait(self.heartbeat):
            with self.lock:
                if self.running:
                    self._redraw()

    def finish(self, o: Outcome, started: bool = True) -> None:
        with self.lock:
            self.running -= started
            setattr(self, o.status, getattr(self, o.status) + 1)
            self.host_seconds += o.seconds if o.status == "done" else 0.0
            if self.work and o.spec.id in self.work:
                w = self.work[o.spec.id]
                self.work_left -= w
                if o.status == "done":
                    self.sized.append((w, o.seconds))
            if o.status != "skipped":
                what = f"{o.seconds:.0f} s" if o.status == "done" else "FAILED: " + o.error.splitlines()[0]
                print(f"\r{o.spec.id}: {what}".ljust(100) if self.terminal else f"{o.spec.id}: {what}", file=self.stream)
            if self.terminal or o.status != "skipped":   # a log gets no line per run found already recorded
                self._redraw()

    def _redraw(self) -> None:
        if self.terminal:
            print(f"\r{self._status()}", end="", file=self.stream, flush=True)
        else:
            self.logged = self.done + self.failed + self.skipped
            print(self._status(), file=self.stream, flush=True)

    def close(self) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        if self.terminal:
            print(file=self.stream)
        elif self.logged != self.done + self.failed + self.skipped:   # runs found recorded since the last line
            self._redraw()


def check(specs: list[RunSpec], runners: Mapping[str, Runner]) -> None:
    """Every spec is a run its runner can record: refused here, before anything runs."""
    for s in specs:
        s.check()
        runners[s.kind].check(s)


def check_worker(runs_dir: str, gem5_identities: dict[str, str], cohtb_commit: str,
                 shared: dict[str, str] | None = None, token: str = "") -> str | None:
    """Why this process (a cluster's worker, or the client itself) cannot record runs, or None: it must run the
    client's cohtb commit, see the runs' directory, have the client's gem5 build of every machine the runs use
    (gem5_identities: machine -> the client's build), and see each of `shared`
    (directory -> what the client prepared there) as the client does: the client left a file named by `token` in
    each. (A worker started before the client's checkout moved on runs the older code, and would record it.)"""
    mine = checkout().identity
    if mine != cohtb_commit:
        return (f"runs cohtb at {mine[:12]}{' with changes ' + mine.split('+')[1] if '+' in mine else ''}, the client "
                f"at {cohtb_commit[:12]}{' with changes ' + cohtb_commit.split('+')[1] if '+' in cohtb_commit else ''}: "
                "start the worker again from the client's checkout")
    if not os.access(runs_dir, os.W_OK | os.X_OK):
        return f"cannot write the runs' directory {runs_dir} (not on a file system it shares with the client?)"
    for directory, what in (shared or {}).items():
        if not (Path(directory) / f".cohtb-seen-{token}").exists():
            return (f"does not see the client's {directory}, where {what} (not on a file system it shares with "
                    "the client?)")
    for machine, identity in gem5_identities.items():
        found = gem5_tool.find(machine)
        if found is None:
            return gem5_tool.why_missing(machine)
        if gem5_tool.identity(found) != identity:
            return (f"{found} is another gem5 build than the client's for the {machine} machine (digest "
                    f"{gem5_tool.identity(found)}, not {identity})")
    return None


def admit(executor, runs_dir: Path, gem5: dict[str, Path], shared: dict[Path, str]) -> None:
    """The workers that can record these runs (check_worker), the client's marks left in the shared directories
    for the time of the check."""
    token = uuid.uuid4().hex
    marks = [d / f".cohtb-seen-{token}" for d in shared]
    try:
        for d, mark in zip(shared, marks):
            d.mkdir(parents=True, exist_ok=True)
            mark.touch()
        executor.admit(check_worker, str(runs_dir.resolve()), {m: gem5_tool.identity(p) for m, p in gem5.items()},
                       checkout().identity,
                       {str(d.resolve()): what for d, what in shared.items()}, token)
    finally:
        for mark in marks:
            mark.unlink(missing_ok=True)


def record_task(spec: RunSpec, runner: Runner, prepared, runs_dir: Path, timeout: float, live: Live | None,
                declaration: dict | None, launch: str) -> Outcome:
    """One run where it is sent (this process, or a worker): the gem5 found there, which check_worker vouched for."""
    return record(spec, runner, prepared, gem5_tool.require(spec.machine), runs_dir, timeout, live, declaration,
                  launch)


def launch(specs: list[RunSpec], runs_dir: Path, runners: Mapping[str, Runner], jobs: int | None = None,
           timeout: float = 3600, live: Live | None = None, declared: dict[str, dict] | None = None,
           executor=None) -> list[Outcome]:
    """runners: kind ("se", "fs") -> its runner. declared: declaration id -> its record
    (cohtb/experiments/declarations.py: record), taken by the caller before the launch, for every run recorded
    under a declaration. executor: where the runs go (cohtb/run/executors.py; default: `jobs` local slots)."""
    check(specs, runners)
    gem5 = {m: gem5_tool.require(m) for m in dict.fromkeys(s.machine for s in specs)}   # machine -> its build
    declared = declared or {}
    unrecorded = sorted({s.declaration for s in specs if s.declaration} - set(declared))
    if unrecorded:
        raise CohtbError(f"runs declared under {', '.join(unrecorded)} need the declaration's record: record them "
                         "with `cohtb seeds --launch`")
    runs_dir.mkdir(parents=True, exist_ok=True)
    local = LocalPool(jobs)
    executor = executor or local
    todo = [s for s in specs if not (runs_dir / s.id / "manifest.json").exists()]
    admit(executor, runs_dir, gem5, {d: what for kind, runner in runners.items() if any(s.kind == kind for s in todo)
                                     for d, what in runner.shared().items()})
    if live:
        build_live_monitors(todo)
    prepared: dict = {}
    for kind, runner in runners.items():   # kernels and boots before any run, here: each uses every core
        prepared.update(runner.prepare([s for s in todo if s.kind == kind], gem5, timeout, local.slots))
    timed = {not s.ops for s in specs}   # the sizes of timed and fixed-work runs are not in one unit
    progress = Progress(len(specs), executor.slots,
                        work={s.id: simulated_work(s) for s in specs} if len(timed) == 1 else None)
    outcomes = []
    for s in specs:   # recorded already, or its preparation failed: no task
        if s.id not in prepared:
            outcomes.append(Outcome(s, "skipped"))
        elif isinstance(prepared[s.id], str):
            outcomes.append(Outcome(s, "failed", 0.0, prepared[s.id]))
    for o in outcomes:
        progress.finish(o, started=False)
    this_launch = uuid.uuid4().hex   # its claims on runs (cohtb/run/claim.py): a retry of its own takes them over
    calls = [(s, runners[s.kind], prepared[s.id], runs_dir, timeout, live, declared.get(s.declaration), this_launch)
             for s in specs if s.id in prepared and not isinstance(prepared[s.id], str)]
    try:   # the progress line ends even when a run's error stops the launch, so the error gets a line of its own
        for o in executor.run_all(record_task, calls, progress.start,
                                  lambda call, why: Outcome(call[0], "failed", 0.0, why)):
            progress.finish(o)
            outcomes.append(o)
    finally:
        progress.close()
    return sorted(outcomes, key=lambda o: specs.index(o.spec))
