"""What a declared verdict can say, found before any run: each answer of its rule with the simulated outcomes that
give it. A rule some of whose answers no outcome can give decides nothing the runs could change, so cohtb refuses to
record runs under it (`cohtb seeds --launch`).

The answers are found by running the declared rule itself (cohtb/experiments/rules.py) on made-up outcomes, never
by restating it, so a region cannot drift from the rule that judges:
- a point rule, on the headline figure (the one the verdict is given on), over every simulated speed-up r from
  1/100 to 100 with repetitions that agree exactly (no spread); the edges between answers are found by bisection.
  A spread can only widen a band and turn a sign into "within the spread".
- a shape rule, one socket count moved at a time from an outcome the rule calls yes.
- a series rule, the collapsing arm's last quarter moved from 0 to 1.2 of its level, its control and the waiting
  arm holding their level; then the control, then the waiting arm, falling alone; then each control's lister
  listing once (made-up counts: a real run's listing after the window shows only in its trace and its count).
A band that takes p from the runs (a time per operation the simulation measures) has no region before them: such
a rule is judged by its runs, and lacks power.

A rule lacks power when its "yes" is given by no outcome, or, for a rule that tests a magnitude, when its
magnitude test is passed (or failed) by every outcome of the right sign beyond the minimum effect."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from types import SimpleNamespace

from cohtb.experiments.declarations import Declaration
from cohtb.experiments.published import SHARES, Published
from cohtb.experiments.reproduce import PointResult, SeriesResult
from cohtb.experiments.rules import SERIES_RULES, SHAPE_RULES, point_verdict, series_verdict, curve_verdicts
from cohtb.errors import CohtbError
from cohtb.experiments.seeds import EXPERIMENTS, Experiment, Point, Series

LOWEST, HIGHEST, STEPS = 0.01, 100.0, 400   # the speed-ups scanned, log-spaced
EDGE = 1e-4                                  # bisection stops when an edge is known to this relative width


@dataclass(frozen=True)
class Region:
    answer: str    # the verdict's words with its figures taken out: "yes", "sign only", "no: opposite sign", ...
    lo: float      # the outcomes that give it, from lo to hi (a speed-up, or a fraction of the level)
    hi: float

    def range_text(self, unit: str) -> str:
        def f(x: float) -> str:
            return f"{(x - 1) * 100:+.1f}%" if unit == "change" else f"{x:.3g}"
        if self.lo <= LOWEST * 1.01:
            return f"up to {f(self.hi)}"
        if self.hi >= HIGHEST * 0.99:
            return f"{f(self.lo)} and above"
        return f"{f(self.lo)} to {f(self.hi)}"


@dataclass(frozen=True)
class Power:
    """The answers of one declared verdict and what gives each."""

    what: str                       # the verdict it is of: the headline figure, a curve, a series
    outcome: str                    # the outcome scanned
    regions: tuple[Region, ...] = ()
    examples: tuple[tuple[str, str], ...] = ()   # (an outcome, the answer it gets), for rules of several outcomes
    lacks: str = ""                 # why the rule has no power; "" when it has

    @property
    def unit(self) -> str:
        return "change" if self.outcome.startswith("the simulated change") else "fraction"

    def rows(self) -> list[tuple[str, str]]:
        """(outcomes, the answer they get): the regions, then the examples."""
        return [(r.range_text(self.unit), r.answer) for r in self.regions] + list(self.examples)

    def lines(self) -> list[str]:
        head = f"{self.what}: no power: {self.lacks}" if self.lacks else f"{self.what}, by {self.outcome}:"
        return [head] + [f"  {o}: {a}" for o, a in self.rows()]


def answer_of(text: str) -> str:
    """A verdict's words without its figures: what tells one answer from another."""
    head = re.split(r"[;(]", text, maxsplit=1)[0]
    head = re.sub(r"published [+-]?\d+% is (in|outside) the predicted .*", r"published \1 the band", head)
    # figures, not the digits of a name (retry100, stock-6.12)
    return re.sub(r"(?<![\w.-])[+-]?\d+(\.\d+)?(%|x\b)?(?![\w.-])", "#", head).strip().rstrip(":").strip()


def _scan(f, lo: float, hi: float, log: bool) -> tuple[Region, ...]:
    """The regions of x in [lo, hi] over which f(x) keeps one answer, edges found by bisection."""
    def at(i: int) -> float:
        return lo * (hi / lo) ** (i / STEPS) if log else lo + (hi - lo) * i / STEPS
    xs = [at(i) for i in range(STEPS + 1)]
    answers = [f(x) for x in xs]
    regions, start = [], xs[0]
    for i in range(1, len(xs)):
        if answers[i] != answers[i - 1]:
            a, b = xs[i - 1], xs[i]
            while (b - a) > EDGE * max(abs(a), 1e-9):
                mid = (a + b) / 2
                a, b = (mid, b) if f(mid) == answers[i - 1] else (a, mid)
            regions.append(Region(answers[i - 1], start, b))
            start = b
    regions.append(Region(answers[-1], start, xs[-1]))
    # an answer of one exact outcome (the spread's edge at no change) is no region a simulation lands in
    return tuple(r for r in regions if r.hi - r.lo > 2 * EDGE * max(abs(r.lo), 1e-9))


@dataclass(frozen=True)
class _Made:
    """A made-up run: what a rule reads of a measured one."""

    spec: object
    throughput: float
    manifest: object = None
    analysis: object = None


def _point_result(point: Point, r: float, repetitions: int) -> PointResult:
    base = [_Made(replace(point.base, seed=k), 1.0) for k in range(1, repetitions + 1)]
    new = [_Made(replace(point.new, seed=k), r) for k in range(1, repetitions + 1)]
    return PointResult(point, base, new, repetitions)


def headline(e: Experiment) -> tuple[Point, Published] | None:
    """The point and published figure a point verdict is given on: the judged point with the most sockets, against
    its first figure; under a declaration that predicts magnitudes, the figure the seed's own profile is of."""
    judged = [p for p in e.points if p.judged]
    if not judged:
        return None
    main = max(judged, key=lambda p: p.base.sockets)
    profiled = {c for share in SHARES.get(e.seed.split("-")[0], ()) for c in share.applies_to
                if e.declaration.magnitude != "none"}
    return main, next((pub for pub in main.published if pub.configuration in profiled), main.published[0])


def _takes_p_from_runs(d: Declaration, pub: Published) -> bool:
    return d.magnitude == "dilution" and any(
        s.kind == "time-per-op" and pub.configuration in s.applies_to for s in SHARES.get(d.experiment.split("-")[0], ()))


def _tests_magnitude(d: Declaration, pub: Published) -> bool:
    """Whether the point rule holds the published figure to a predicted band (sign-effect-band: magnitude.py)."""
    shares = SHARES.get(d.experiment.split("-")[0], ())
    return d.rule == "sign-effect-band" and not pub.null and (
        d.magnitude == "direct" or d.magnitude == "dilution" and any(pub.configuration in s.applies_to for s in shares))


def point_power(e: Experiment) -> Power | None:
    found = headline(e)
    if found is None:
        return None
    point, pub = found
    d = e.declaration
    what = f"{point.label} against the published {(pub.ratio - 1) * 100:+.0f}% ({pub.configuration})"
    if _takes_p_from_runs(d, pub):
        return Power(what, "the simulated change", lacks="no region before the runs: the band's p is the simulated "
                     "time per operation over the published one, taken from the runs it judges")
    regions = _scan(lambda r: answer_of(point_verdict(pub, _point_result(point, r, d.repetitions), d).text),
                    LOWEST, HIGHEST, log=True)
    answers = {r.answer for r in regions}
    lacks = ""
    if not any(a.startswith("yes") for a in answers):
        lacks = "no simulated outcome gives yes"
    elif _tests_magnitude(d, pub) and not any(a.startswith("sign only") for a in answers):
        lacks = "its magnitude test is passed by every outcome of the right sign beyond the minimum effect"
    return Power(what, "the simulated change (repetitions that agree)", regions, lacks=lacks)


def shape_power(e: Experiment) -> list[Power]:
    """Per curve: from an outcome the rule calls yes (no change on one socket, the same gain elsewhere), each
    socket count's speed-up moved alone."""
    d = e.declaration
    out = []
    curves: dict[str, list[Point]] = {}
    for p in e.points:
        curves.setdefault(p.curve, []).append(p)
    for name, points in curves.items():
        sockets = sorted(p.base.sockets for p in points)
        gain = 1 + 2 * max(d.min_effect, 0.05)

        def verdict(r: dict[int, float]) -> str:
            results = [_point_result(p, r[p.base.sockets], d.repetitions) for p in points]
            return answer_of(curve_verdicts(results, d)[name].text)

        nominal = {n: (1.0 if n == 1 else gain) for n in sockets}
        examples = [(_outcome_text(nominal), verdict(nominal))]
        for n in sockets:
            for r in (0.8, 1.0, 1 + d.min_effect / 2, gain, gain * 1.6, gain ** 2):
                moved = {**nominal, n: r}
                if moved != nominal:
                    examples.append((_outcome_text(moved), verdict(moved)))
        answers = {a for _, a in examples}
        lacks = "" if any(a.startswith("yes") for a in answers) and any(a.startswith("no") for a in answers) \
            else "every outcome tried gives the same answer"
        out.append(Power(f"curve {name}", "each socket count's speed-up moved alone", examples=tuple(
            dict.fromkeys(examples)), lacks=lacks))
    return out


def _outcome_text(r: dict[int, float]) -> str:
    return ", ".join(f"{n}: {(v - 1) * 100:+.0f}%" for n, v in sorted(r.items()))


def _series_run(template, k: int, intervals: int, at: int, level: float, late: float, listings: int) -> _Made:
    """A made-up timed run: `level` ops per interval before the disturbance, `late` times it from then on."""
    totals = [round(level)] * at + [round(level * late)] * (intervals - at)
    workload = SimpleNamespace(measure=SimpleNamespace(mode="window", interval_ns=0), intervals=SimpleNamespace(
        total=totals, min=totals, max=totals), listings=listings, model_extra=None)
    return _Made(replace(template, seed=k), 0.0, SimpleNamespace(workload=workload),
                 SimpleNamespace(lister_visits=[0] * listings))


def series_power(e: Experiment, s: Series) -> Power:
    d = e.declaration
    labels = s.labelled()
    intervals = d.window_us // d.interval_us
    at = max(1, int(s.event_at_us // d.interval_us))
    controls = set(dict(s.controls).values())
    collapsing = d.kernels[0] if d.kernels else "retry100"
    floor = {"locked": 0.3}   # the locked-only policy's own level, under the others' (seed 004's SE series)

    def verdict(late: dict[str, float], control_listings: int = 0) -> str:
        runs = {}
        for label, template in labels.items():
            level = 10_000 * floor.get(label, 1.0)   # ops per interval: enough that rounding moves no edge
            listings = control_listings if label in controls else s.event_count
            made = [_series_run(template, k, intervals, at, level, late.get(label, 1.0), listings)
                    for k in range(1, d.repetitions + 1)]
            for m in made:
                m.manifest.workload.measure.interval_ns = d.interval_us * 1000
            runs[label] = made
        return answer_of(series_verdict(SeriesResult(s, runs, d.repetitions), d).text)

    regions = _scan(lambda f: verdict({collapsing: f}), 0.0, 1.2, log=False)
    examples = []
    for other in [label for label in labels if label != collapsing and label not in floor]:
        outcome = {collapsing: 0.2, other: 0.2}
        examples.append((f"{collapsing} at 0.2 of its level and {other} falling to 0.2 too", verdict(outcome)))
    if controls:
        examples.append((f"{collapsing} at 0.2 of its level, each control's lister listing once",
                         verdict({collapsing: 0.2}, control_listings=1)))
    answers = {r.answer for r in regions} | {a for _, a in examples}
    lacks = "" if any(a.startswith("yes") for a in answers) and any(a.startswith("no") for a in answers) \
        else "every outcome tried gives the same answer"
    held = "; the locked-only policy at a made-up 0.3 of the others' level, which the rule compares with" \
        if any(label in floor for label in labels) else ""
    return Power(f"series {s.label}", f"{collapsing}'s last quarter over its level before (the others holding "
                 f"theirs{held})", regions, tuple(examples), lacks)


_POWERS: dict[str, list[Power]] = {}   # by the experiment's whole text: a page asks for each several times


def powers(e: Experiment) -> list[Power]:
    """Every verdict the experiment's declaration gives, with what gives each answer."""
    key = repr(e)
    if key not in _POWERS:
        _POWERS[key] = _powers(e)
    return list(_POWERS[key])


def _powers(e: Experiment) -> list[Power]:
    d = e.declaration
    out: list[Power] = []
    if e.points:
        if d.rule in SHAPE_RULES:
            out += shape_power(e)
        elif (p := point_power(e)) is not None:
            out.append(p)
    if d.collapse_rule in SERIES_RULES:
        out += [series_power(e, s) for s in e.series]
    return out


def lacking(e: Experiment) -> list[Power]:
    return [p for p in powers(e) if p.lacks]


def refuse_without_power(specs) -> None:
    """Refuses, in one line, runs declared under a current version whose rule has no power: they could not change
    its verdict (cohtb seeds --launch, cohtb launch and cohtb run record through here)."""
    for declared in sorted({s.declaration for s in specs if s.declaration}):
        for e in (e for e in EXPERIMENTS.values() if e.declaration.runs_id == declared):
            found = lacking(e)
            if found:
                raise CohtbError(f"declaration {e.declaration.id}'s rule has no power: {found[0].what}: "
                                 f"{found[0].lacks} (`cohtb seeds --seed {e.seed}` shows what gives each answer)")
