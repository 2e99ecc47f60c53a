"""One gem5 run recorded into its run directory, whatever runs it: a temporary directory, gem5's process, the
trace ingested (afterwards, or live through a pipe), the manifest, and the rename into place.

A run directory with a manifest is always whole: the directory is renamed into place only once its manifest is
written, and a re-run skips it. A failed run leaves <id>.failed.json with the tail of gem5's own error and
nothing else. What differs between an SE and a full-system run is its Runner's."""

from __future__ import annotations

import glob
import json
import re
import shutil
import subprocess
import tempfile
import time
import uuid
from dataclasses import dataclass, field, replace
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from pydantic import ValidationError

from cohtb.atomic import install, write_json_atomic
from cohtb.contract import block_socket_map
from cohtb.digest import file_sha256
from cohtb.errors import CohtbError
from cohtb.monitor import live as live_monitor, ondemand, rtl
from cohtb.run import gem5 as gem5_tool, machines, pc_profile, provenance
from cohtb.run.claim import claim, left_by_the_gone, owner_tag
from cohtb.run.code_names import Code
from cohtb.run.line_names import Symbol, name_lines
from cohtb.run.manifest import MANIFEST_VERSION, Manifest, dump
from cohtb.run.portable import portable, roots
from cohtb.run.spec import RunSpec
from cohtb.trace import events, ingest
from cohtb.trace.layout import load_pagemap, translate

ROI = "roi.json"   # what the gem5 config writes into the run directory: ticks, machine, controllers, exit


class Runner(Protocol):
    """What records one kind of run (SE: cohtb/se/runner.py; full system: cohtb/fs/runner.py)."""

    def check(self, spec: RunSpec) -> None:
        """Refuse a spec this runner cannot record (one line naming the run), before anything runs."""

    def shared(self) -> dict[Path, str]:
        """The directories besides the runs' one where prepare leaves what the runs need, each with what it holds:
        a worker must see them as the client does."""

    def prepare(self, specs: list[RunSpec], gem5: Mapping[str, Path], timeout: float, workers: int) -> dict[str, Any]:
        """Run id -> what its command needs (built once for all the runs: a kernel, a boot checkpoint), or the
        error, as a string, that prevents the run. gem5: machine -> its gem5 binary."""

    def command(self, spec: RunSpec, run_dir: Path, gem5: Path, prepared: Any) -> list[str]:
        """gem5's command line, writing into the (temporary) run directory."""

    def pagemap(self, run_dir: Path) -> Path | None:
        """The TLB mappings that turn the trace's addresses physical (SE), or None: they are physical already."""

    def finish(self, spec: RunSpec, run_dir: Path, roi: dict, prepared: Any) -> Finished:
        """What the workload left in the run directory, for the manifest; a run that cannot be kept is refused."""


@dataclass
class Finished:
    """What a runner found in a finished run's directory, for the manifest the recorder writes."""
    workload: dict                 # the workload's JSON result, its layout map as the run's addresses see it
    workload_binary: Path
    pagemap: Path | None           # the TLB mappings that turn the trace's addresses physical (SE), or None
    layout_how: str | None = None  # how the layout map's addresses were found, when not the workload's own map
    files: dict = field(default_factory=dict)     # the run's files beside the common ones (manifest "files")
    facts: dict = field(default_factory=dict)     # manifest fields of this kind of run only (kernel, checkpoint)
    symbols: list[Symbol] = field(default_factory=list)   # named address ranges: the trace lines they hold are named
    code: list[Code] = field(default_factory=list)   # the binaries whose functions name profile addresses


@dataclass
class Outcome:
    spec: RunSpec
    status: str          # "done", "skipped", "failed"
    seconds: float = 0.0
    error: str = ""


@dataclass(frozen=True)
class Live:
    """A live run (cohtb launch --live): the trace goes through a pipe into the ingest and the monitor while gem5
    runs (cohtb/monitor/live.py), with a snapshot every interval of the run's (its --interval-us of simulated
    time); no trace file is kept unless keep_trace."""

    keep_trace: bool = False


def tail(path: Path, lines: int = 25) -> str:
    if not path.exists():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def gem5_version(simout: Path) -> str:
    m = re.search(r"gem5 version (\S+)", simout.read_text(errors="replace")) if simout.exists() else None
    return m.group(1) if m else "unknown"


def build_live_monitors(specs: list[RunSpec]) -> None:
    """Each monitor the live runs need, built once before they start, not in parallel inside them."""
    for cores, sockets in sorted({(s.cores, s.sockets) for s in specs}):
        rtl.build_library(ondemand.config_for(cores, sockets)[0])


def start_live(spec: RunSpec, tmp: Path, live: Live, pagemap: Path | None) -> live_monitor.LiveIngest:
    """The pipe gem5 will write its trace into, and the ingest and the monitor reading it."""
    variant, _ = ondemand.config_for(spec.cores, spec.sockets)
    (tmp / "gem5").mkdir(exist_ok=True)
    cmd = ingest.command(tmp / "gem5" / "trace.pipe", tmp / "events.cohtb", tmp / "gem5",
                         block_socket_map(spec.cores_per_socket, spec.cores), {"run": spec.id, "trace": "live"},
                         pagemap=pagemap, l1d_versions=machines.l1d_versions(spec.machine, spec.cores, spec.sockets))
    if live.keep_trace:
        cmd += ["--copy-input", str(tmp / "gem5" / gem5_tool.TRACE)]
    # No regions: the fields' addresses are known only once the run has ended (its layout map); the totals, the
    # socket matrix and the hot-line table need none. The report's replay adds the regions.
    session = live_monitor.LiveIngest(tmp / "gem5" / "trace.pipe", cmd, variant, lambda: [],
                                      int((spec.interval_us or 10) * 1_000_000))   # µs -> ticks (ps); fixed work: 10 µs
    session.start()
    return session


def record(spec: RunSpec, runner: Runner, prepared: Any, gem5: Path, runs_dir: Path, timeout: float,
           live: Live | None = None, declaration: dict | None = None, launch: str = "") -> Outcome:
    """One run into runs_dir/<id>, unless it is there already or another launch is recording it (cohtb/run/claim.py;
    `launch` names this one); `declaration` the record of the declaration the run is recorded under, kept in the
    manifest."""
    with claim(runs_dir, spec.id, launch or uuid.uuid4().hex, timeout) as holder:
        if holder:
            return Outcome(spec, "skipped", error=f"being recorded by {holder}")
        return _record(spec, runner, prepared, gem5, runs_dir, timeout, live, declaration)


def remove_leftovers(runs_dir: Path, run_id: str) -> None:
    """A killed launch leaves its half-written run behind (.<id>.<host>.<pid>.*: gem5's trace alone can be
    gigabytes); it is removed once its process is known to be gone. A claim can be taken over from a holder still
    alive (older than the taker's timeout allows), so holding the claim is not enough to remove it."""
    for leftover in runs_dir.glob(f".{glob.escape(run_id)}.*"):
        if leftover.is_dir() and left_by_the_gone(leftover.name[len(run_id) + 2:]):
            shutil.rmtree(leftover, ignore_errors=True)


def _record(spec: RunSpec, runner: Runner, prepared: Any, gem5: Path, runs_dir: Path, timeout: float,
            live: Live | None, declaration: dict | None) -> Outcome:
    final = runs_dir / spec.id
    failed = runs_dir / f"{spec.id}.failed.json"
    remove_leftovers(runs_dir, spec.id)
    if (final / "manifest.json").exists():
        return Outcome(spec, "skipped")
    t0, started = time.monotonic(), provenance.now()
    tmp = Path(tempfile.mkdtemp(prefix=f".{spec.id}.{owner_tag()}.", dir=runs_dir))
    cmd: list[str] = []
    session = None
    try:
        cmd = runner.command(spec, tmp, gem5, prepared)
        if live and spec.traced:
            session = start_live(spec, tmp, live, runner.pagemap(tmp))
            cmd = ["--debug-file=trace.pipe" if a == f"--debug-file={gem5_tool.TRACE}" else a for a in cmd]
        rc, stderr, cpu_seconds = run_gem5(cmd, timeout, session)
        if rc != 0:
            first = session.abort() if session else None   # a monitor that failed first took gem5 down with it
            session = None
            raise CohtbError(first or f"gem5 exited {rc}:\n{tail(tmp / 'gem5' / 'simerr.txt') or stderr[-3000:]}")
        if session:
            try:
                counts, series = session.finish()
            except CohtbError:
                roi_error = json.loads((tmp / ROI).read_text()).get("error") if (tmp / ROI).exists() else None
                if roi_error:   # nothing traced because of it: say that, not what the ingest made of no trace
                    raise CohtbError(f"{spec.id}: {roi_error}") from None
                raise
            session.fifo.unlink()   # a run directory holds files only, and only the run's
            (tmp / "gem5" / "sockets").unlink()
            write_json_atomic(tmp / "ingest.json", counts)
            write_json_atomic(tmp / "live.json", {"variant": session.variant, "regions": [], **series.to_json()})
            session = None
        roi = json.loads((tmp / ROI).read_text()) if (tmp / ROI).exists() else {}
        if "roi_seconds" not in roi:
            raise CohtbError(f"the workload never reached work-end (gem5 exit: {roi.get('exit_cause', 'unknown')}):\n"
                             f"{tail(tmp / 'workload.stderr') or tail(tmp / 'gem5' / 'workload.stderr')}\n"
                             f"{tail(tmp / 'gem5' / 'board.pc.com_1.device')}\n"
                             f"{tail(tmp / 'gem5' / 'simerr.txt')}")
        finished = runner.finish(spec, tmp, roi, prepared)
        raw = pc_profile.raw_files(tmp, roi)   # gem5's profile files, moved into gem5's directory
        if raw:
            finished.files["profile"] = pc_profile.FILE
        if provenance.checkout().changed:   # recorded with --allow-dirty: the code that made it, kept beside it
            (tmp / provenance.DIFF).write_text(provenance.checkout().diff)
        manifest = manifest_of(spec, tmp, roi, cmd, t0, finished, {
            "cpu_seconds": cpu_seconds, "declaration": declaration,
            "recorded": {"host": provenance.host(), "started": started, "ended": provenance.now()}})
        if raw:   # named now, while the code it ran is at hand, and joined to the events the manifest ingested
            pc_profile.keep(tmp, raw, finished.code, tmp / "events.cohtb" if manifest.files.events else None)
        write_json_atomic(tmp / "manifest.json", portable(dump(manifest), roots(tmp, Path(cmd[0]))))
        # Over an incomplete leftover (no manifest), replacing only what cohtb wrote there; the manifest last, since
        # it is what says the run is whole.
        install(tmp, final, last=("manifest.json",))
        failed.unlink(missing_ok=True)
        return Outcome(spec, "done", time.monotonic() - t0)
    except (CohtbError, OSError, KeyError, json.JSONDecodeError) as e:
        msg = str(e) if isinstance(e, CohtbError) else f"{type(e).__name__}: {e}"
        write_json_atomic(failed, portable({"id": spec.id, "spec": spec.to_json(), "command": cmd, "error": msg,
                                            "cohtb": provenance.checkout().record(),
                                            "recorded": {"host": provenance.host(), "started": started,
                                                         "ended": provenance.now()}},
                                           roots(tmp, Path(cmd[0]) if cmd else None)))
        return Outcome(spec, "failed", time.monotonic() - t0, msg)
    finally:
        if session:
            session.abort()
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def run_gem5(cmd: list[str], timeout: float, session=None) -> tuple[int, str, float]:
    """gem5's exit status, stderr and CPU seconds; killed at the timeout. A live run's gem5 is also stopped as soon
    as its live side fails: gem5 ignores SIGPIPE and would simulate on, writing into a pipe nobody reads."""
    deadline = time.monotonic() + timeout
    with tempfile.TemporaryFile("w+") as err:   # a file, not a pipe: nothing to drain while polling
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, text=True)
        while (cpu := gem5_tool.reap(proc)) is None:
            why = session.failure() if session else None
            if why or time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise CohtbError(why + " (gem5 stopped)" if why else f"gem5 ran past the {timeout:.0f} s timeout")
            time.sleep(0.5)
        err.seek(0)
        return proc.returncode, err.read(), cpu


def manifest_of(spec: RunSpec, tmp: Path, roi: dict, cmd: list[str], t0: float, finished: Finished,
                recording: dict) -> Manifest:
    """The run's manifest, written once: the trace ingested (through the runner's pagemap, if any), the layout map
    placed, the trace's lines named by the runner's symbols, the trace kept. `recording`: gem5's CPU seconds, the
    declaration's record (or None), and the host and UTC times of the recording."""
    workload = finished.workload
    if workload.get("ops") == 0:   # a throughput of nothing: no ratio can be taken, so the run is not kept
        raise CohtbError(f"{spec.id}: no operation completed in the measured window (the workload's ops is 0; per "
                         f"thread: {workload.get('per_thread_ops')}; the guest console: gem5/board.pc.com_1.device)")
    trace = tmp / "gem5" / gem5_tool.TRACE
    source = {"run": spec.id, "trace": "trace.gz", "gem5_roi": [roi["begin_tick"], roi["end_tick"]]}
    socket_of_core = [c["socket"] for c in sorted(roi["controllers"]["l1"], key=lambda c: c["core"])]
    if (tmp / "ingest.json").exists():   # a live run: ingested while gem5 ran, with the spec's socket map
        counts = json.loads((tmp / "ingest.json").read_text())
        (tmp / "ingest.json").unlink()   # now in the manifest
        if socket_of_core != block_socket_map(spec.cores_per_socket, len(socket_of_core)):
            raise CohtbError("gem5's cores are not numbered socket by socket: a live run's socket map was wrong")
    elif not spec.traced:
        counts = {"traced": False}   # gem5 ran without ProtocolTrace: no events, nothing for the monitor
    else:
        t_ingest = time.monotonic()
        counts = ingest.ingest(trace, tmp / "events.cohtb", socket_of_core, source, pagemap=finished.pagemap,
                               l1d_versions=ingest.l1d_versions_of(roi.get("protocol", ""), roi["controllers"]))
        counts["host_seconds"] = round(time.monotonic() - t_ingest, 2)
    pagemap = finished.pagemap
    fields = translate(workload["layout_map"], load_pagemap(pagemap) if pagemap else None, f"{spec.id}: layout map")
    if finished.layout_how:
        fields = [replace(f, how=finished.layout_how) for f in fields]
    kept_trace = trace.exists()   # a live run keeps it only with --keep-trace
    if kept_trace:
        shutil.move(str(trace), tmp / "trace.gz")
    named = []
    if finished.symbols and spec.traced:
        _, recs = events.read_all(tmp / "events.cohtb")
        named = name_lines(set(recs["line"].tolist()), finished.symbols)
    return _validated({
        "cohtb_run": MANIFEST_VERSION,
        "id": spec.id,
        "spec": spec.to_json(),
        **finished.facts,
        "workload_binary": {"path": str(finished.workload_binary), "sha256": file_sha256(finished.workload_binary)},
        "gem5": {"binary": cmd[0], "version": gem5_version(tmp / "gem5" / "simout.txt"), "command": cmd,
                 "host_seconds": round(time.monotonic() - t0, 2), "exit_cause": roi.get("exit_cause"),
                 # the host's measure of gem5, beside what gem5 itself reported
                 "cpu_seconds": recording["cpu_seconds"],
                 "build": gem5_tool.identity(Path(cmd[0])), **({"protocol": roi["protocol"]} if "protocol" in roi else {})},
        "cohtb": provenance.checkout().record(),
        "recorded": recording["recorded"],
        **({"declaration": recording["declaration"]} if recording["declaration"] else {}),
        "system": {**{k: roi[k] for k in ("sockets", "cores_per_socket", "cores", "cpu", "clock", "params")},
                   **{k: roi[k] for k in ("topology", "machine", "hierarchy", "machine_file") if k in roi}},
        "controllers": roi["controllers"],
        "roi": {"begin_tick": roi["begin_tick"], "end_tick": roi["end_tick"], "seconds": roi["roi_seconds"]},
        "workload": workload,
        "ingest": counts,
        "files": {"events": "events.cohtb" if spec.traced else None, **({"trace": "trace.gz"} if kept_trace else {}),
                  **({"pagemap": "pagemap.txt"} if pagemap else {}),
                  **({"live": "live.json"} if (tmp / "live.json").exists() else {}), **finished.files, "gem5": "gem5/",
                  **({"cohtb_diff": provenance.DIFF} if (tmp / provenance.DIFF).exists() else {})},
        "layout": [f.to_json() for f in fields],
        **({"kernel_symbols": named} if named else {}),
    })


def _validated(doc: dict) -> Manifest:
    """The manifest of a finished run; one that breaks the schema fails the run, naming the field."""
    try:
        return Manifest.model_validate(doc)
    except ValidationError as e:
        err = e.errors()[0]
        raise CohtbError(f"{doc['id']}: the run's manifest would be invalid: field '{'.'.join(map(str, err['loc']))}': "
                         f"{err['msg']} (got {repr(err.get('input'))[:80]})") from None
