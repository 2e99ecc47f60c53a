"""Steady state as will-it-scale reports it: ops per thread and per socket over the window (fairness),
and ops per interval (the time series in which a collapse shows)."""

from __future__ import annotations

from dataclasses import dataclass

from cohtb.run.runs import Run


@dataclass(frozen=True)
class Fairness:
    """Window ops of the least and the most productive thread, and of the least and most productive
    socket per thread (a socket with fewer workers, beside an intruder, is not counted short). `ratio`
    is min/max over threads: 1 when every thread got as much done, near 0 when some starved."""

    thread_min: int
    thread_max: int
    socket_min: int
    socket_max: int

    @property
    def ratio(self) -> float:
        return self.thread_min / self.thread_max if self.thread_max else 0.0

    @property
    def socket_ratio(self) -> float:
        return self.socket_min / self.socket_max if self.socket_max else 0.0

    def to_json(self) -> dict:
        return {"thread_min": self.thread_min, "thread_max": self.thread_max, "socket_min": self.socket_min,
                "socket_max": self.socket_max, "ratio": self.ratio, "socket_ratio": self.socket_ratio}


def fairness(run: Run) -> Fairness | None:
    """From the workload's per-thread ops. Thread i runs on CPU i (gem5 SE gives threads the CPUs in
    creation order), so its socket is core i's; an intruder's CPU (the last) is not a worker."""
    per_thread = run.manifest.workload.per_thread_ops
    if not per_thread:
        return None
    socket_of = run.manifest.socket_of_core
    sockets: dict[int, list[int]] = {}
    for t, ops in enumerate(per_thread):
        sockets.setdefault(socket_of[t] if t < len(socket_of) else -1, []).append(ops)
    per_thread_of_socket = [sum(v) / len(v) for v in sockets.values()]
    return Fairness(min(per_thread), max(per_thread), round(min(per_thread_of_socket)), round(max(per_thread_of_socket)))


def last_quarter(values: list) -> list:
    """The window's last quarter (of its intervals, or of their start times): where whether a collapse lasts is
    measured, after the last disturbance."""
    return values[len(values) * 3 // 4:]


@dataclass(frozen=True)
class Series:
    """Per interval of the window: start (µs into the window), total ops, least and most of one thread,
    and the workload's own per-interval count (lockref workloads: lock acquisitions), if it has one."""

    interval_us: float
    total: list[int]
    min: list[int]
    max: list[int]
    locked: list[int] | None

    @property
    def starts_us(self) -> list[float]:
        return [i * self.interval_us for i in range(len(self.total))]


def series(run: Run) -> Series | None:
    """The run's ops per interval, if it was timed (None for fixed work or runs from before timed windows)."""
    w = run.manifest.workload
    if w.measure is None or w.measure.mode != "window" or w.intervals is None:
        return None
    locked = (getattr(w, "model_extra", None) or {}).get("locked_ops_intervals")
    return Series(w.measure.interval_ns / 1e3, w.intervals.total, w.intervals.min, w.intervals.max,
                  locked["total"] if isinstance(locked, dict) else None)
