"""Published vs simulated, measured: the simulated speed-up of each point with the spread of its repetitions
(Spread, Ratio), and the time series of the collapse, per policy. The verdicts on them are rules.py's."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Protocol

from cohtb.analysis.steady import last_quarter, series
from cohtb.experiments.seeds import Point, Series
from cohtb.run.spec import RunSpec


class Measured(Protocol):
    """What a comparison needs of a run: its spec and throughput (RunMetrics and Run both have them)."""

    spec: RunSpec
    throughput: float


@dataclass(frozen=True)
class Spread:
    values: tuple[float, ...]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.values)

    @property
    def lo(self) -> float:
        return min(self.values)

    @property
    def hi(self) -> float:
        return max(self.values)

    def text(self, scale: float = 1.0, digits: int = 2) -> str:
        if len(self.values) == 1:
            return f"{self.mean * scale:.{digits}f}"
        return f"{self.mean * scale:.{digits}f} ({self.lo * scale:.{digits}f}-{self.hi * scale:.{digits}f})"


@dataclass(frozen=True)
class Ratio:
    """new/base speed-up: the ratio of the means, and the extremes over all pairs of repetitions."""

    mean: float
    lo: float
    hi: float

    @staticmethod
    def of(base: Spread, new: Spread) -> "Ratio":
        return Ratio(new.mean / base.mean, new.lo / base.hi, new.hi / base.lo)

    @property
    def sign(self) -> int:
        """+1 / -1 when the whole spread is above / below 1, else 0 (within the spread)."""
        return 1 if self.lo > 1 else -1 if self.hi < 1 else 0

    def text(self) -> str:
        return f"{self.mean:.2f} ({self.lo:.2f}-{self.hi:.2f})"


def _group(runs: list[Measured]) -> dict[str, list[Measured]]:
    out: dict[str, list[Measured]] = {}
    for r in runs:
        out.setdefault(r.spec.repetition_of, []).append(r)
    return out


@dataclass
class PointResult:
    point: Point
    base: list[Measured]
    new: list[Measured]
    repetitions: int   # as declared

    @property
    def complete(self) -> bool:
        """Every repetition of base and new is there: a verdict on fewer would have no spread to hold."""
        return len(self.base) == len(self.new) == self.repetitions

    @property
    def base_seconds_per_op(self) -> float | None:
        """One thread's time per operation in the base runs (their mean throughput is over every thread)."""
        t = self.base_throughput.mean
        return self.point.base.threads / t if t > 0 else None

    @property
    def base_throughput(self) -> Spread:
        return Spread(tuple(m.throughput for m in self.base))

    @property
    def new_throughput(self) -> Spread:
        return Spread(tuple(m.throughput for m in self.new))

    @property
    def ratio(self) -> Ratio:
        return Ratio.of(self.base_throughput, self.new_throughput)

    def ratio_of_first(self, n: int) -> Ratio:
        """The speed-up over repetitions 1..n only (a declaration's skew-only ones: the start skew's own spread)."""
        first = lambda runs: Spread(tuple(m.throughput for m in runs if m.spec.seed <= n))
        return Ratio.of(first(self.base), first(self.new))


def point_results(points: tuple[Point, ...], runs: list[Measured], repetitions: int) -> list[PointResult]:
    by = _group(runs)
    return [PointResult(p, by.get(p.base.repetition_of, []), by.get(p.new.repetition_of, []), repetitions)
            for p in points]


@dataclass
class SeriesResult:
    """Per label (a policy, or the series' own labels), the repetitions of one time series, each measured against
    its own level before the disturbance: `trough` its lowest interval after it, `falls` its last quarter; `late`
    the last quarter's mean ops per interval."""

    series: Series
    runs: dict[str, list[Measured]]   # label -> repetitions
    repetitions: int                  # as declared

    @property
    def complete(self) -> bool:
        return all(len(v) == self.repetitions for v in self.runs.values())

    def _after(self, label: str) -> list[tuple[list[int], list[int]]]:
        """Per repetition: the intervals that end before the disturbance (at least the first), and those from
        it on."""
        out = []
        for m in self.runs.get(label, []):
            s = interval_totals(m)
            if s is None:
                continue
            interval_us, totals = s
            at = max(1, int(self.series.event_at_us // interval_us))
            out.append((totals[:at], totals[at:]))
        return out

    def _parts(self, label: str) -> list[tuple[list[int], list[int]]]:
        """Per repetition: the intervals before the disturbance, and the last quarter of the window."""
        return [(before, last_quarter(before + after)) for before, after in self._after(label)]

    def trough(self, label: str) -> Spread | None:
        """The lowest interval from the disturbance on, over the mean before it, per repetition."""
        vals = [min(after) / statistics.fmean(before) for before, after in self._after(label)
                if after and statistics.fmean(before) > 0]
        return Spread(tuple(vals)) if vals else None

    def falls(self, label: str) -> Spread | None:
        """The last quarter of the window over the mean before the disturbance, per repetition."""
        vals = [statistics.fmean(late) / statistics.fmean(before) for before, late in self._parts(label)
                if late and statistics.fmean(before) > 0]
        return Spread(tuple(vals)) if vals else None

    def before(self, label: str) -> Spread | None:
        """The mean ops per interval before the disturbance, per repetition."""
        vals = [statistics.fmean(before) for before, _ in self._after(label) if before]
        return Spread(tuple(vals)) if vals else None

    def late_peak(self, label: str) -> Spread | None:
        """The highest interval of the last quarter over the mean before the disturbance, per repetition."""
        vals = [max(late) / statistics.fmean(before) for before, late in self._parts(label)
                if late and statistics.fmean(before) > 0]
        return Spread(tuple(vals)) if vals else None

    def disturbances(self, label: str) -> list[int | None]:
        """Per repetition, how many disturbances its workload reports it made (stat_file: its listings)."""
        return [getattr(m, "run", m).manifest.workload.listings for m in self.runs.get(label, [])]

    def listings_seen(self, label: str) -> list[int | None]:
        """Per repetition, the listings its trace shows in the window (the lister's visits to the file dentry's
        line: cohtb/analysis/holder.py); None for a run whose analysis has none."""
        visits = [getattr(getattr(m, "analysis", None), "lister_visits", None) for m in self.runs.get(label, [])]
        return [None if v is None else len(v) for v in visits]

    def late(self, label: str) -> Spread | None:
        vals = [statistics.fmean(late) for _, late in self._parts(label) if late]
        return Spread(tuple(vals)) if vals else None


def interval_totals(m: Measured) -> tuple[float, list[int]] | None:
    """(interval in µs, ops per interval) of a timed run (a RunMetrics or a Run), else None."""
    s = series(getattr(m, "run", m))
    return (s.interval_us, list(s.total)) if s else None


def series_result(series: Series, runs: list[Measured], repetitions: int) -> SeriesResult:
    by = _group(runs)
    return SeriesResult(series, {label: by.get(t.repetition_of, []) for label, t in series.labelled().items()},
                        repetitions)
