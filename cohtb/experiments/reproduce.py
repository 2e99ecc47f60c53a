"""Published vs simulated, with the spread of the repetitions: is a seed's effect reproduced?

A comparison is called a reproduction only when its sign holds beyond the spread: every repetition of
`new` against every repetition of `base` (lo = min(new)/max(base), hi = max(new)/min(base)) is on the
published side of 1. A published change under NULL_EFFECT (seed 000 on one node) is "no effect", and
is reproduced when the simulated spread includes 1 or its mean change is under NULL_EFFECT too."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Protocol

from cohtb.experiments.seeds import Point, Published, Series
from cohtb.sim.plans import RunSpec

NULL_EFFECT = 0.05   # |change| below 5% is "no effect"
RATIO_FACTOR = 2.0   # a simulated speed-up more than 2x off the published one is called out


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


def expected_sign(pub: Published) -> int:
    r = pub.ratio
    return 0 if abs(r - 1) < NULL_EFFECT else (1 if r > 1 else -1)


@dataclass(frozen=True)
class Verdict:
    reproduced: bool
    text: str


def verdict(pub: Published, sim: Ratio) -> Verdict:
    want = expected_sign(pub)
    if want == 0:
        ok = sim.lo <= 1 <= sim.hi or abs(sim.mean - 1) < NULL_EFFECT
        return Verdict(ok, "yes: no effect, as published" if ok else
                       f"no: published no effect, simulated {(sim.mean - 1) * 100:+.0f}% beyond the spread")
    if sim.sign == 0:
        return Verdict(False, "no: the simulated change is within the spread of the repetitions")
    if sim.sign != want:
        return Verdict(False, "no: opposite sign")
    factor = max(sim.mean / pub.ratio, pub.ratio / sim.mean)
    return Verdict(True, "yes" + (f" in sign; the speed-up differs by {factor:.1f}x" if factor > RATIO_FACTOR else ""))


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

    @property
    def complete(self) -> bool:
        return bool(self.base) and bool(self.new)

    @property
    def base_throughput(self) -> Spread:
        return Spread(tuple(m.throughput for m in self.base))

    @property
    def new_throughput(self) -> Spread:
        return Spread(tuple(m.throughput for m in self.new))

    @property
    def ratio(self) -> Ratio:
        return Ratio.of(self.base_throughput, self.new_throughput)


def point_results(points: tuple[Point, ...], runs: list[Measured]) -> list[PointResult]:
    by = _group(runs)
    return [PointResult(p, by.get(p.base.repetition_of, []), by.get(p.new.repetition_of, [])) for p in points]


@dataclass
class SeriesResult:
    """Per run of a series: ops per interval; `falls` is the mean of the last quarter of the window over
    the mean before the disturbance, per repetition."""

    series: Series
    runs: dict[str, list[Measured]]   # policy -> repetitions

    def falls(self, policy: str) -> Spread | None:
        vals = []
        for m in self.runs.get(policy, []):
            s = interval_totals(m)
            if s is None:
                continue
            interval_us, totals = s
            before = [t for i, t in enumerate(totals) if (i + 1) * interval_us <= self.series.event_at_us]
            late = totals[len(totals) * 3 // 4:]
            if before and late and statistics.fmean(before) > 0:
                vals.append(statistics.fmean(late) / statistics.fmean(before))
        return Spread(tuple(vals)) if vals else None


def interval_totals(m: Measured) -> tuple[float, list[int]] | None:
    run = getattr(m, "run", m)
    w = run.manifest.workload
    if w.measure is None or w.intervals is None or w.measure.mode != "window":
        return None
    return w.measure.interval_ns / 1e3, list(w.intervals.total)


def series_result(series: Series, runs: list[Measured]) -> SeriesResult:
    by = _group(runs)
    return SeriesResult(series, {t.policy: by.get(t.repetition_of, []) for t in series.runs})


def collapse_verdict(res: SeriesResult, collapsing: str = "retry100") -> Verdict:
    """Seed 004: retry100 falls beyond its spread, and every waiting policy stays above it."""
    fall = res.falls(collapsing)
    others = {p: res.falls(p) for p in res.runs if p != collapsing}
    if fall is None or any(v is None for v in others.values()):
        return Verdict(False, "no: runs missing")
    if fall.hi >= 1:
        return Verdict(False, f"no: {collapsing} does not fall beyond its spread ({fall.text()})")
    held = [p for p, v in others.items() if v.lo > fall.hi]
    if len(held) != len(others):
        return Verdict(False, f"no: {', '.join(sorted(set(others) - set(held)))} fall as far as {collapsing}")
    return Verdict(True, f"yes: {collapsing} falls to {fall.mean:.2f} of its level; "
                         + ", ".join(f"{p} keeps {v.mean:.2f}" for p, v in others.items()))
