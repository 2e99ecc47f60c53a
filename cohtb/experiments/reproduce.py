"""Published vs simulated, with the spread of the repetitions: is a seed's effect reproduced?

A comparison is called a reproduction only when its sign holds beyond the spread: every repetition of
`new` against every repetition of `base` (lo = min(new)/max(base), hi = max(new)/min(base)) is on the
published side of 1. A published row its author calls no change (seed 000 on one node) is reproduced
when the simulated mean change is under NULL_EFFECT. A reproduced change more than RATIO_FACTOR times
larger or smaller than the published one (in percent) is called out."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Protocol

from cohtb.analysis.steady import series
from cohtb.experiments.published import Published
from cohtb.experiments.seeds import REPETITIONS, Point, Series
from cohtb.sim.plans import RunSpec

NULL_EFFECT = 0.05   # a simulated |change| below 5% is "no change"
RATIO_FACTOR = 2.0   # a simulated change more than 2x (or under half) the published one is called out
COLLAPSED_TO = 0.5   # collapsed: an interval under half the level before the transient holder
RECOVERED = 0.9      # lasting: the last quarter still under 90% of the level before the transient holder


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
    return 0 if pub.null else (1 if pub.ratio > 1 else -1)


@dataclass(frozen=True)
class Verdict:
    reproduced: bool
    text: str


def verdict(pub: Published, sim: Ratio) -> Verdict:
    want = expected_sign(pub)
    if want == 0:
        ok = abs(sim.mean - 1) < NULL_EFFECT
        return Verdict(ok, "yes: no change, as published" if ok else
                       f"no: published no change, simulated {(sim.mean - 1) * 100:+.0f}%")
    if sim.sign == 0:
        return Verdict(False, "no: the simulated change is within the spread of the repetitions")
    if sim.sign != want:
        return Verdict(False, "no: opposite sign")
    factor = (sim.mean - 1) / (pub.ratio - 1)
    if factor > RATIO_FACTOR or factor < 1 / RATIO_FACTOR:
        return Verdict(True, f"yes in sign; the change is {factor:.1f}x the published one")
    return Verdict(True, "yes")


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
        """Every repetition of base and new is there: a verdict on fewer would have no spread to hold."""
        return len(self.base) == len(self.new) == REPETITIONS

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
    """Per policy, the repetitions of one time series, each measured against its own level before the
    disturbance: `trough` its lowest interval after it, `falls` its last quarter; `late` the last
    quarter's mean ops per interval."""

    series: Series
    runs: dict[str, list[Measured]]   # policy -> repetitions

    @property
    def complete(self) -> bool:
        return all(len(v) == REPETITIONS for v in self.runs.values())

    def _after(self, policy: str) -> list[tuple[list[int], list[int]]]:
        """Per repetition: the intervals that end before the disturbance (at least the first), and those from
        it on."""
        out = []
        for m in self.runs.get(policy, []):
            s = interval_totals(m)
            if s is None:
                continue
            interval_us, totals = s
            at = max(1, int(self.series.event_at_us // interval_us))
            out.append((totals[:at], totals[at:]))
        return out

    def _parts(self, policy: str) -> list[tuple[list[int], list[int]]]:
        """Per repetition: the intervals before the disturbance, and the last quarter of the window."""
        return [(before, (before + after)[len(before + after) * 3 // 4:]) for before, after in self._after(policy)]

    def trough(self, policy: str) -> Spread | None:
        """The lowest interval from the disturbance on, over the mean before it, per repetition."""
        vals = [min(after) / statistics.fmean(before) for before, after in self._after(policy)
                if after and statistics.fmean(before) > 0]
        return Spread(tuple(vals)) if vals else None

    def falls(self, policy: str) -> Spread | None:
        """The last quarter of the window over the mean before the disturbance, per repetition."""
        vals = [statistics.fmean(late) / statistics.fmean(before) for before, late in self._parts(policy)
                if late and statistics.fmean(before) > 0]
        return Spread(tuple(vals)) if vals else None

    def late(self, policy: str) -> Spread | None:
        vals = [statistics.fmean(late) for _, late in self._parts(policy) if late]
        return Spread(tuple(vals)) if vals else None


def interval_totals(m: Measured) -> tuple[float, list[int]] | None:
    """(interval in µs, ops per interval) of a timed run (a RunMetrics or a Run), else None."""
    s = series(getattr(m, "run", m))
    return (s.interval_us, list(s.total)) if s else None


def series_result(series: Series, runs: list[Measured]) -> SeriesResult:
    by = _group(runs)
    return SeriesResult(series, {t.policy: by.get(t.repetition_of, []) for t in series.runs})


def collapse_verdict(res: SeriesResult, collapsing: str = "retry100", reference: str = "locked") -> Verdict:
    """Seed 004: after one transient lock holder, `collapsing` falls to under COLLAPSED_TO of its level
    (its lowest interval, in every repetition), and no waiting policy does (in any repetition). Whether
    the fall lasts to the end of the window (the published one did) is said either way. `reference` (the
    locked policy) is not judged."""
    if not res.complete:
        return Verdict(False, "no: runs missing")
    low, late = res.trough(collapsing), res.falls(collapsing)
    waiting = {p: res.trough(p) for p in res.runs if p not in (collapsing, reference)}
    if low is None or late is None or any(v is None for v in waiting.values()):
        return Verdict(False, "no: the runs have no intervals")
    keeps = ", ".join(f"{p}'s lowest interval {v.mean:.2f}" for p, v in waiting.items())
    lasting = (f"and stays there (last quarter {late.mean:.2f})" if late.hi < RECOVERED else
               f"then recovers (last quarter {late.mean:.2f}; the published collapse lasted)")
    if low.hi >= COLLAPSED_TO:
        return Verdict(False, f"no: {collapsing}'s lowest interval is {low.mean:.2f} of its level; {keeps}")
    stuck = [p for p, v in waiting.items() if v.lo < COLLAPSED_TO]
    if stuck:
        return Verdict(False, f"no: {', '.join(stuck)} fall too; {collapsing} falls to {low.mean:.2f}; {keeps}")
    return Verdict(True, f"yes: {collapsing} falls to {low.mean:.2f} of its level {lasting}; {keeps}")
