"""The monitor live beside gem5: gem5 writes its ProtocolTrace into a pipe, cohtb-ingest turns it into events as
it comes (the run's event file, and the same records through a second pipe), and the Verilated monitor counts
them while gem5 runs. Every `interval` of simulated time (by the events' ticks) the harness takes a snapshot
with the CSR snapshot command, as software beside a real FPGA would, so a run has its counters over time.

The snapshots are cut at the same ticks whatever the chunks the records arrive in, so a live run's counters and
series are identical to feeding its event file through `series()` afterwards (tests/test_live.py). Offline, the
analysis takes a recorded run's series from the compiled model (`by_model`): the RTL's CSR readout takes eight
clocks a word, so its snapshots were most of a replay's time; the model's counters are the RTL's bit for bit, and
the analysis holds the last of them to the RTL's own."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

from cohtb.errors import CohtbError
from cohtb.monitor import rtl
from cohtb.monitor.compiled_model import ModelMonitor
from cohtb.monitor.config import variant as load_variant
from cohtb.monitor.counters import Counters
from cohtb.trace.events import RECORD

INTERVAL_TOTALS = ("transfers", "crossSocketTransfers", "dirtyReadsLocal", "dirtyReadsRemote", "invalidations")


@dataclass
class Series:
    """Counters over simulated time: cumulative snapshots at origin + k * interval (k = 1, 2, ...), and the last
    one when the stream ended."""

    interval_ticks: int
    origin_tick: int | None = None
    ends: list[int] = field(default_factory=list)          # each interval's end tick (the last: where it would end)
    snapshots: list[Counters] = field(default_factory=list)
    events: int = 0

    def per_interval(self) -> list[dict]:
        """Each interval's own counts (differences of the cumulative snapshots): the global counters, each
        region's, and the hot-line table at its end."""
        out, prev = [], None
        for end, snap in zip(self.ends, self.snapshots):
            row = {"end_tick": end, **{k: snap.totals[k] - (prev.totals[k] if prev else 0) for k in INTERVAL_TOTALS},
                   "regions": [{k: v - (prev.regions[i][k] if prev else 0) for k, v in r.items()}
                               for i, r in enumerate(snap.regions)],
                   "hot": [{"line": h.line, "count": h.count} for h in snap.hot if h.valid]}
            out.append(row)
            prev = snap
        return out

    def to_json(self) -> dict:
        return {"interval_ticks": self.interval_ticks, "origin_tick": self.origin_tick, "events": self.events,
                "final": self.snapshots[-1].to_json() if self.snapshots else None, "intervals": self.per_interval()}


class Counting:
    """A fresh monitor fed chunk by chunk, snapshotting at every interval boundary the events cross. The grid's
    origin is the first event's tick."""

    def __init__(self, variant: str, regions: list[tuple[int, int]], interval_ticks: int, by_model: bool = False):
        """by_model: counted by the compiled model (the same counters, bit for bit, without the RTL's CSR readout)
        instead of the Verilated monitor."""
        if interval_ticks <= 0:
            raise CohtbError("the snapshot interval must be positive")
        self.mon = ModelMonitor(load_variant(variant).params) if by_model else rtl.VerilatedMonitor(variant)
        self.mon.set_regions(regions)
        self.series = Series(interval_ticks)

    def feed(self, recs: np.ndarray) -> None:
        s = self.series
        if not len(recs):
            return
        if s.origin_tick is None:
            s.origin_tick = int(recs["tick"][0])
        while len(recs):
            boundary = s.origin_tick + (len(s.ends) + 1) * s.interval_ticks
            n = int(np.searchsorted(recs["tick"], boundary, side="left"))   # ticks are in order (the ingest's)
            if n:
                self.mon.stream(recs[:n])
                s.events += n
            if n == len(recs):
                return
            self.mon.drain()
            s.ends.append(boundary)
            s.snapshots.append(self.mon.snapshot())
            recs = recs[n:]

    def finish(self) -> Series:
        self.mon.drain()
        s = self.series
        s.ends.append(int(s.origin_tick + (len(s.ends) + 1) * s.interval_ticks) if s.origin_tick is not None else 0)
        s.snapshots.append(self.mon.snapshot())
        self.mon.close()
        return s


def series(recs: np.ndarray, variant: str, regions: list[tuple[int, int]], interval_ticks: int,
           chunk: int = 1 << 16, by_model: bool = False) -> Series:
    """Offline: an event array through the same counting, in chunks (the result does not depend on them); by_model:
    counted by the compiled model instead of the Verilated monitor."""
    c = Counting(variant, regions, interval_ticks, by_model)
    for i in range(0, len(recs), chunk):
        c.feed(recs[i:i + chunk])
    return c.finish()


class LiveIngest:
    """cohtb-ingest reading gem5's trace from a named pipe, and a thread counting its records as they come.

        live = LiveIngest(fifo, ingest_cmd, variant, regions_at_first_event, interval_ticks)
        live.start()            # before gem5 opens the pipe for writing
        ... run gem5 ...
        counts, series = live.finish()   # after gem5 ended (its end of the pipe closed)
    """

    def __init__(self, fifo: Path, ingest_cmd: list[str], variant: str,
                 regions: Callable[[], list[tuple[int, int]]], interval_ticks: int):
        self.fifo, self.ingest_cmd, self.variant = fifo, ingest_cmd, variant
        self.regions, self.interval_ticks = regions, interval_ticks
        self.proc: subprocess.Popen | None = None
        self.error: BaseException | None = None
        self.result: Series | None = None
        self.thread: threading.Thread | None = None
        self._output: tuple[str, str] | None = None

    def start(self) -> None:
        os.mkfifo(self.fifo)
        r, w = os.pipe()
        try:
            self.proc = subprocess.Popen([*self.ingest_cmd, "--tee", f"/dev/fd/{w}"], stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, pass_fds=(w,))
        except OSError:
            os.close(r)
            raise
        finally:
            os.close(w)   # the ingest's copy is the only writer left: its exit is the thread's end of input
        self.thread = threading.Thread(target=self._count, args=(r,), daemon=True)
        self.thread.start()

    def _count(self, fd: int) -> None:
        counting = None
        try:
            with os.fdopen(fd, "rb", buffering=0) as pipe:
                pending = b""
                while True:
                    data = pipe.read(1 << 20)
                    if not data:
                        break
                    data = pending + data
                    whole = len(data) // RECORD.itemsize * RECORD.itemsize
                    pending = data[whole:]
                    if whole:
                        if counting is None:   # the window has begun: the regions are known by now
                            counting = Counting(self.variant, self.regions(), self.interval_ticks)
                        counting.feed(np.frombuffer(data[:whole], dtype=RECORD))
                if pending:
                    raise CohtbError(f"the live records ended in the middle of one ({len(pending)} bytes)")
            if counting is None:
                counting = Counting(self.variant, self.regions(), self.interval_ticks)
            self.result = counting.finish()
        except BaseException as e:   # reported by failure()/finish(); the pipe is closed, so the ingest stops too
            self.error = e

    def failure(self) -> str | None:
        """While gem5 runs: why the live side has stopped, if it has. gem5 ignores SIGPIPE, so it would write on
        into a pipe nobody reads until its end: the caller stops it."""
        if self.error is not None:
            return f"the live monitor failed: {self.error}"
        if self.proc is not None and self.proc.poll() not in (None, 0):
            return self._ingest_error()
        return None

    def finish(self, timeout: float = 600) -> tuple[dict, Series]:
        """After gem5 ended well: the ingest's counts and the series; CohtbError if either side failed."""
        out, _ = self._collect(timeout)
        self.thread.join(timeout)
        if self.thread.is_alive():
            raise CohtbError("the live monitor did not finish counting after the ingest ended")
        if self.error is not None:
            raise CohtbError(f"the live monitor failed: {self.error}")
        if self.proc.returncode != 0:
            raise CohtbError(self._ingest_error())
        assert self.result is not None
        return json.loads(out), self.result

    def abort(self) -> str | None:
        """After gem5 failed (perhaps before it opened the pipe): both sides stopped; the live side's own error,
        if it failed first, else None."""
        import time

        deadline = time.monotonic() + 30
        while self.proc.poll() is None and time.monotonic() < deadline:
            try:   # an ingest waiting to open the pipe: a writer that comes and goes is its end of input
                os.close(os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK))
                break
            except OSError:   # ENXIO: the ingest has not opened it yet
                time.sleep(0.05)
        try:
            self._collect(30)
        except CohtbError:
            pass
        self.thread.join(30)
        return f"the live monitor failed: {self.error}" if self.error is not None else None

    def _ingest_error(self) -> str:
        _, err = self._collect(30)
        return err.strip().removeprefix("cohtb-ingest: ") or f"cohtb-ingest exited {self.proc.returncode}"

    def _collect(self, timeout: float) -> tuple[str, str]:
        """The ingest's stdout and stderr once it has ended (killed after `timeout`)."""
        if self._output is None:
            try:
                self._output = self.proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self._output = self.proc.communicate()
                raise CohtbError("the live ingest did not end after gem5 did") from None
        return self._output
