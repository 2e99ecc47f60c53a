"""`cohtb launch`: a matrix of gem5 runs, in parallel up to the machine's cores.

Each run is built in a temporary directory and renamed into place when complete, so a run directory
with a manifest is always whole; a re-run skips those. A failed run leaves RUN.failed.json with the
tail of gem5's own error, and the others go on."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, replace
from typing import Callable
from pathlib import Path

from cohtb.contract import block_socket_map
from cohtb.sim import gem5 as gem5_finder
from cohtb.trace import ingest
from cohtb.atomic import install, write_json_atomic
from cohtb.digest import file_sha256
from cohtb.errors import CohtbError
from cohtb.trace.layout import load_pagemap, translate
from cohtb.sim.manifest import MANIFEST_VERSION
from cohtb.sim.plans import RunSpec
from cohtb.sim.portable import portable, roots
from cohtb.sim.workloads import binary



@dataclass
class Outcome:
    spec: RunSpec
    status: str          # "done", "skipped", "failed"
    seconds: float = 0.0
    error: str = ""


def tail(path: Path, lines: int = 25) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def gem5_version(simout: Path) -> str:
    m = re.search(r"gem5 version (\S+)", simout.read_text(errors="replace")) if simout.exists() else None
    return m.group(1) if m else "unknown"


@dataclass(frozen=True)
class Live:
    """A live run (cohtb launch --live): the trace goes through a pipe into the ingest and the monitor while gem5
    runs (cohtb/monitor/live.py), with a snapshot every interval of the run's (its --interval-us of simulated
    time); no trace file is kept unless keep_trace."""

    keep_trace: bool = False


def start_live(spec: RunSpec, tmp: Path, live: Live):
    """The pipe gem5 will write its trace into, and the ingest and the monitor reading it."""
    from cohtb.monitor import live as live_monitor, ondemand

    cores = spec.sockets * spec.cores_per_socket
    variant, _ = ondemand.config_for(cores, spec.sockets)
    (tmp / "gem5").mkdir(exist_ok=True)
    cmd = ingest.command(tmp / "gem5" / "trace.pipe", tmp / "events.cohtb", tmp / "gem5",
                         block_socket_map(spec.cores_per_socket, cores), {"run": spec.id, "trace": "live"},
                         pagemap=None if spec.kernel else tmp / "pagemap.txt")
    if live.keep_trace:
        cmd += ["--copy-input", str(tmp / "gem5" / "trace.gz")]
    # No regions: the fields' addresses are known only once the run has ended (its layout map); the totals, the
    # socket matrix and the hot-line table need none. The report's replay adds the regions.
    session = live_monitor.LiveIngest(tmp / "gem5" / "trace.pipe", cmd, variant, lambda: [],
                                      int((spec.interval_us or 10) * 1_000_000))   # µs -> ticks (ps); fixed work: 10 µs
    session.start()
    return session


def record(spec: RunSpec, runs_dir: Path, timeout: float, command: Callable[[Path], list[str]],
           finish: Callable[[Path, dict, list[str], float], dict], live: Live | None = None,
           declaration: dict | None = None) -> Outcome:
    """One gem5 run into runs_dir/<id>: command(tmp) is gem5's command line for a temporary run directory,
    finish(tmp, roi, cmd, t0) the manifest from what it left there; `declaration` the record of the declaration
    the run is recorded under, kept in the manifest. The directory is renamed into place only once its manifest
    is written; a failure leaves <id>.failed.json and nothing else."""
    final = runs_dir / spec.id
    failed = runs_dir / f"{spec.id}.failed.json"
    if (final / "manifest.json").exists():
        return Outcome(spec, "skipped")
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix=f".{spec.id}.", dir=runs_dir))
    cmd: list[str] = []
    session = None
    try:
        cmd = command(tmp)
        if live:
            session = start_live(spec, tmp, live)
            cmd = ["--debug-file=trace.pipe" if a == "--debug-file=trace.gz" else a for a in cmd]
        rc, stderr = run_gem5(cmd, timeout, session)
        if rc != 0:
            first = session.abort() if session else None   # a monitor that failed first took gem5 down with it
            session = None
            raise CohtbError(first or f"gem5 exited {rc}:\n{tail(tmp / 'gem5' / 'simerr.txt') or stderr[-3000:]}")
        if session:
            try:
                counts, series = session.finish()
            except CohtbError:
                roi_error = json.loads((tmp / "roi.json").read_text()).get("error") if (tmp / "roi.json").exists() else None
                if roi_error:   # nothing traced because of it: say that, not what the ingest made of no trace
                    raise CohtbError(f"{spec.id}: {roi_error}") from None
                raise
            session.fifo.unlink()   # a run directory holds files only, and only the run's
            (tmp / "gem5" / "sockets").unlink()
            write_json_atomic(tmp / "ingest.json", counts)
            write_json_atomic(tmp / "live.json", {"variant": session.variant, "regions": [], **series.to_json()})
            session = None
        roi = json.loads((tmp / "roi.json").read_text()) if (tmp / "roi.json").exists() else {}
        if "roi_seconds" not in roi:
            raise CohtbError(f"the workload never reached work-end (gem5 exit: {roi.get('exit_cause', 'unknown')}):\n"
                             f"{tail(tmp / 'workload.stderr') or tail(tmp / 'gem5' / 'workload.stderr')}\n"
                             f"{tail(tmp / 'gem5' / 'board.pc.com_1.device')}\n"
                             f"{tail(tmp / 'gem5' / 'simerr.txt')}")
        places = roots(tmp, Path(cmd[0]) if cmd else None)
        manifest = finish(tmp, roi, cmd, t0)
        if declaration:
            manifest["declaration"] = declaration
        write_json_atomic(tmp / "manifest.json", portable(manifest, places))
        # Over an incomplete leftover (no manifest), replacing only what cohtb wrote there; the manifest last, since
        # it is what says the run is whole.
        install(tmp, final, last=("manifest.json",))
        failed.unlink(missing_ok=True)
        return Outcome(spec, "done", time.monotonic() - t0)
    except (CohtbError, OSError, KeyError, json.JSONDecodeError) as e:
        msg = str(e) if isinstance(e, CohtbError) else f"{type(e).__name__}: {e}"
        write_json_atomic(failed, {"id": spec.id, "spec": spec.to_json(), "command": cmd, "error": msg})
        return Outcome(spec, "failed", time.monotonic() - t0, msg)
    finally:
        if session:
            session.abort()
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def run_gem5(cmd: list[str], timeout: float, session=None) -> tuple[int, str]:
    """gem5's exit status and stderr; killed at the timeout. A live run's gem5 is also stopped as soon as its live
    side fails: gem5 ignores SIGPIPE and would simulate on, writing into a pipe nobody reads."""
    deadline = time.monotonic() + timeout
    with tempfile.TemporaryFile("w+") as err:   # a file, not a pipe: nothing to drain while polling
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, text=True)
        while True:
            try:
                rc = proc.wait(timeout=1)
                break
            except subprocess.TimeoutExpired:
                why = session.failure() if session else None
                if why or time.monotonic() > deadline:
                    proc.kill()
                    proc.wait()
                    raise CohtbError(why + " (gem5 stopped)" if why else f"gem5 ran past the {timeout:.0f} s timeout")
        err.seek(0)
        return rc, err.read()


def gem5_record(cmd: list[str], tmp: Path, t0: float, roi: dict) -> dict:
    """The manifest's gem5 entry."""
    return {"binary": cmd[0], "version": gem5_version(tmp / "gem5" / "simout.txt"), "command": cmd,
            "host_seconds": round(time.monotonic() - t0, 2), "exit_cause": roi.get("exit_cause")}


def finished_run(spec: RunSpec, tmp: Path, roi: dict, cmd: list[str], t0: float, workload: dict, workload_binary: Path,
                 pagemap: Path | None, layout_how: str | None = None, files: dict | None = None, **extra) -> dict:
    """What every run does with gem5's output: the trace ingested (pagemap: the TLB mappings of an SE run; None:
    the trace's addresses are physical already), the layout map placed, the trace kept, and the manifest."""
    trace = tmp / "gem5" / "trace.gz"
    source = {"run": spec.id, "trace": "trace.gz", "gem5_roi": [roi["begin_tick"], roi["end_tick"]]}
    socket_of_core = [c["socket"] for c in sorted(roi["controllers"]["l1"], key=lambda c: c["core"])]
    if (tmp / "ingest.json").exists():   # a live run: ingested while gem5 ran, with the spec's socket map
        counts = json.loads((tmp / "ingest.json").read_text())
        (tmp / "ingest.json").unlink()   # now in the manifest
        if socket_of_core != block_socket_map(spec.cores_per_socket, len(socket_of_core)):
            raise CohtbError("gem5's cores are not numbered socket by socket: a live run's socket map was wrong")
    else:
        t_ingest = time.monotonic()
        counts = ingest.ingest(trace, tmp / "events.cohtb", socket_of_core, source, pagemap=pagemap)
        counts["host_seconds"] = round(time.monotonic() - t_ingest, 2)
    fields = translate(workload["layout_map"], load_pagemap(pagemap) if pagemap else None, f"{spec.id}: layout map")
    if layout_how:
        fields = [replace(f, how=layout_how) for f in fields]
    kept_trace = trace.exists()   # a live run keeps it only with --keep-trace
    if kept_trace:
        shutil.move(str(trace), tmp / "trace.gz")
    return {
        "cohtb_run": MANIFEST_VERSION,
        "id": spec.id,
        "spec": spec.to_json(),
        **extra,
        "workload_binary": {"path": str(workload_binary), "sha256": file_sha256(workload_binary)},
        "gem5": gem5_record(cmd, tmp, t0, roi),
        "system": {k: roi[k] for k in ("sockets", "cores_per_socket", "cores", "cpu", "clock", "params")},
        "controllers": roi["controllers"],
        "roi": {"begin_tick": roi["begin_tick"], "end_tick": roi["end_tick"], "seconds": roi["roi_seconds"]},
        "workload": workload,
        "ingest": counts,
        "files": {"events": "events.cohtb", **({"trace": "trace.gz"} if kept_trace else {}),
                  **({"pagemap": "pagemap.txt"} if pagemap else {}),
                  **({"live": "live.json"} if (tmp / "live.json").exists() else {}), **(files or {}), "gem5": "gem5/"},
        "layout": [f.to_json() for f in fields],
    }


def run_one(spec: RunSpec, runs_dir: Path, gem5: Path, timeout: float, live: Live | None = None,
            declaration: dict | None = None) -> Outcome:
    """An SE run: the workload binary on cohtb_se.py."""
    def command(tmp: Path) -> list[str]:
        return [str(gem5), "-re", f"--outdir={tmp / 'gem5'}", "--debug-file=trace.gz", str(gem5_finder.CONFIG),
                "--sockets", str(spec.sockets), "--cores-per-socket", str(spec.cores_per_socket), "--cpu", spec.cpu,
                *spec.machine_args(), "--binary", str(binary(spec.workload)), "--out", str(tmp), "--",
                *spec.workload_args()]

    def finish(tmp: Path, roi: dict, cmd: list[str], t0: float) -> dict:
        try:
            workload = json.loads((tmp / "workload.stdout").read_text())
        except (OSError, json.JSONDecodeError):
            raise CohtbError(f"the workload printed no JSON result:\n{tail(tmp / 'workload.stderr')}") from None
        return finished_run(spec, tmp, roi, cmd, t0, workload, binary(spec.workload), tmp / "pagemap.txt")

    return record(spec, runs_dir, timeout, command, finish, live, declaration)


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


def launch(specs: list[RunSpec], runs_dir: Path, jobs: int | None = None, timeout: float = 3600,
           live: Live | None = None, declared: dict[str, dict] | None = None) -> list[Outcome]:
    """declared: declaration id -> its record (cohtb/experiments/declarations.py: record), taken by the caller
    before the launch, for every run recorded under a declaration."""
    gem5 = gem5_finder.require()
    declared = declared or {}
    unrecorded = sorted({s.declaration for s in specs if s.declaration} - set(declared))
    if unrecorded:
        raise CohtbError(f"runs declared under {', '.join(unrecorded)} need the declaration's record: record them "
                         "with `cohtb seeds --launch`")
    for s in specs:
        s.validate()
        if not s.kernel:
            binary(s.workload)
    runs_dir.mkdir(parents=True, exist_ok=True)
    workers = jobs or os.cpu_count() or 1
    todo = [s for s in specs if not (runs_dir / s.id / "manifest.json").exists()]
    if live:   # build each monitor a live run needs once, here, not in parallel inside the runs
        from cohtb.monitor import ondemand, rtl

        for cores, sockets in sorted({(s.sockets * s.cores_per_socket, s.sockets) for s in todo}):
            rtl._library(ondemand.config_for(cores, sockets)[0])
    fs_ready = prepare_full_system([s for s in todo if s.kernel], gem5, timeout, workers)
    progress = Progress(len(specs))
    outcomes = []

    def one(spec: RunSpec) -> Outcome:
        progress.start()
        if not spec.kernel:
            o = run_one(spec, runs_dir, gem5, timeout, live, declared.get(spec.declaration))
        elif isinstance(fs_ready.get(spec.id), str):
            o = Outcome(spec, "failed", 0.0, fs_ready[spec.id])
        elif spec.id in fs_ready:
            from cohtb.fs.launch import run_fs_one

            o = run_fs_one(spec, runs_dir, gem5, timeout, *fs_ready[spec.id], live=live,
                           declaration=declared.get(spec.declaration))
        else:
            o = Outcome(spec, "skipped")
        progress.finish(o)
        return o

    try:   # the progress line ends even when a run's error stops the launch, so the error gets a line of its own
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for fut in as_completed([pool.submit(one, s) for s in specs]):
                outcomes.append(fut.result())
    finally:
        progress.close()
    return sorted(outcomes, key=lambda o: specs.index(o.spec))


def prepare_full_system(specs: list[RunSpec], gem5: Path, timeout: float, workers: int) -> dict:
    """Run id -> (kernel build, checkpoint) for full-system runs, or the error that prevents it: the kernels
    built first (each uses every core), then one boot per (kernel, machine), `workers` at a time."""
    if not specs:
        return {}
    from cohtb.fs import launch as fs_launch

    built = fs_launch.prepare_kernels(specs)
    boots = {(s.kernel, s.sockets, s.cores_per_socket): s for s in specs}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {k: pool.submit(fs_launch.checkpoint, built[k[0]], s, gem5, timeout) for k, s in boots.items()}
    ready: dict = {}
    for s in specs:
        fut = futures[s.kernel, s.sockets, s.cores_per_socket]
        err = fut.exception()
        ready[s.id] = (f"no checkpoint: {err}" if isinstance(err, CohtbError) else
                       f"no checkpoint: {type(err).__name__}: {err}") if err else (built[s.kernel], fut.result())
    return ready
