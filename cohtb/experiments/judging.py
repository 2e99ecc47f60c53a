"""Judging: every declaration of every seed applied to the kept runs, as values. A declaration's runs are the ones
recorded under it (or under the version it judges again); each point, curve and series gets its declared rule's
verdict. The report only renders these values; `verdicts` is the whole judgement as one committed file, so a change
to a rule, a declaration or a run that moves any verdict shows up as a changed file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from cohtb.analysis.metrics import RunMetrics
from cohtb.analysis.pipeline import metrics_for
from cohtb.experiments import power, profile_band
from cohtb.experiments.advice import AdviceResult, advise, declared as declared_advice
from cohtb.experiments.declarations import Declaration, differences, runs_declaration
from cohtb.experiments.method_changes import changed_inputs
from cohtb.experiments.reproduce import PointResult, SeriesResult, point_results, series_result
from cohtb.experiments.rules import COLLAPSED_TO, Verdict, curve_verdicts, point_verdict, series_verdict
from cohtb.experiments.seeds import EXPERIMENTS, HISTORY, Experiment
from cohtb.places import REFERENCE_RUNS
from cohtb.run.gem5 import patches_needed
from cohtb.run.machines import hierarchy_of
from cohtb.run.runs import kept

VERDICTS = "verdicts.json"   # beside the bundled runs: every declaration's judgement of them


@dataclass
class SeedResult:
    """One declaration's runs and its judgement of them: every verdict the report shows is asked of this value
    (computed here once, by the declared rules), never computed by the report."""
    experiment: Experiment
    points: list[PointResult]
    series: list[SeriesResult]
    missing: list[str]
    failed: list[str] = field(default_factory=list)   # of the missing: runs gem5 did not finish (a record is kept)
    sensitivity: list[RunMetrics] = field(default_factory=list)   # the experiment's unjudged runs that are kept

    @property
    def complete(self) -> bool:
        return not self.missing

    @property
    def declaration(self) -> Declaration:
        return self.experiment.declaration

    def verdict(self, p: PointResult, pub) -> Verdict:
        """A point's verdict on one of its published figures: its declared rule, or none for a control."""
        return _memo(self, ("point", id(p), id(pub)), lambda: judge(pub, p, self.declaration))

    @cached_property
    def curves(self) -> dict[str, Verdict]:
        """Each curve's verdict under a shape rule (points over the socket counts); none under another rule, and
        none until every run is kept."""
        return curve_verdicts(self.points, self.declaration) if self.complete else {}

    def series_verdict(self, sr: SeriesResult) -> Verdict:
        """A series' verdict under its declared collapse rule."""
        return _memo(self, ("series", id(sr)), lambda: series_verdict(sr, self.declaration))

    def arms(self) -> list[tuple[str, list[RunMetrics]]]:
        """The kept runs judged under the declaration, by arm: each point's two sides, then each series' labels."""
        e, out = self.experiment, []
        for p in self.points:
            out += [(f"{p.point.label}: {e.base_name}", p.base), (f"{p.point.label}: {e.new_name}", p.new)]
        for sr in self.series:
            out += [(f"{sr.series.label}: {label}", runs) for label, runs in sr.runs.items()]
        return out

    def kept_runs(self) -> list[RunMetrics]:
        """Every kept run judged under the declaration, arm by arm."""
        return [m for _, runs in self.arms() for m in runs]

    @cached_property
    def headline(self) -> tuple[PointResult, object] | None:
        """The headline comparison (cohtb/experiments/power.py: headline) with its runs."""
        return main_point(self)

    @cached_property
    def effects(self) -> list[Effect]:
        """Every verdict the declaration gives, once its runs are all kept and none failed: each curve's under a
        shape rule, else the headline point's; then each series'."""
        if not self.complete or self.failed:
            return []
        out = [Effect("curve", name, v, points=tuple(sorted((p for p in self.points if p.point.curve == name),
                                                             key=lambda p: p.point.base.sockets)))
               for name, v in self.curves.items()]
        if not self.curves and (mp := self.headline) is not None:
            main, pub = mp
            out.append(Effect("point", main.point.label, self.verdict(main, pub), points=(main,), published=pub))
        out += [Effect("series", sr.series.label, self.series_verdict(sr), series=sr) for sr in self.series]
        return out

    @cached_property
    def lacks_power(self) -> list:
        """The answers its rule could never give, found before any run (cohtb/experiments/power.py)."""
        return power.lacking(self.experiment)

    @cached_property
    def advice(self) -> list[AdviceResult]:
        """The layout advice declared on this declaration's runs, each proposal with its proof
        (cohtb/experiments/advice.py)."""
        return [advise(a, self.points) for a in declared_advice() if a.declaration == self.declaration.id]

    def profile_checks(self, p: PointResult) -> list:
        """The point's arms held to (or shown beside) a published profile (cohtb/experiments/profile_band.py)."""
        return _memo(self, ("profile", id(p)), lambda: profile_band.checks(self.declaration, p))


@dataclass(frozen=True)
class Effect:
    """One verdict of a declaration: a shape rule's curve (its points over the socket counts), the headline point
    (against one published figure), or a series."""
    kind: str                               # "curve", "point" or "series"
    name: str                               # the curve's name, the point's label, the series' label
    verdict: Verdict
    points: tuple[PointResult, ...] = ()    # a curve's points by sockets; the headline point
    published: object = None                # the headline's published figure
    series: SeriesResult | None = None

    @property
    def conclusion(self) -> tuple[str, int]:
        """What it concludes, to compare across machines: its verdict's word (yes, no, sign only ...) and, for a
        point, the sign of the simulated change (0 for a curve or a series, whose verdict says it all)."""
        sign = (1 if self.points[0].ratio.mean >= 1 else -1) if self.kind == "point" else 0
        return self.verdict.text.split(":")[0], sign


def _memo(res: SeedResult, key: tuple, compute):
    """A judgement of res computed once. Keyed by the objects judged (res holds them, so their ids stay theirs)."""
    cache = res.__dict__.setdefault("_judged", {})
    if key not in cache:
        cache[key] = compute()
    return cache[key]


def recorded_under(m: RunMetrics, d: Declaration) -> bool:
    """A run of a declared version counts only while the version is what the run recorded (its digest); a run of
    a reconstructed version carries no record (it predates declarations). `d`: the version that recorded the runs
    (runs_declaration: a rule-only version judges another's)."""
    if d.reconstructed:
        return True
    rec = m.run.manifest.declaration
    return rec is not None and (rec.id, rec.digest) == (d.id, d.digest())


def seed_result(e: Experiment, ms: list[RunMetrics], failed: frozenset[str] = frozenset()) -> SeedResult:
    """The experiment's runs among ms, judged as its declaration says (only the runs recorded under it, or under
    the version it rejudges); failed: the ids of runs whose failure record is kept (gem5 did not finish them)."""
    ids = {s.id for s in e.specs()}
    recorder = runs_declaration(e.declaration)
    mine = list({m.run.id: m for m in ms if m.run.id in ids and recorded_under(m, recorder)}.values())
    have = {m.run.id for m in mine}
    missing = sorted(ids - have)
    sensitivity = {s.id for s in e.sensitivity}
    return SeedResult(e, point_results(e.points, mine, e.repetitions),
                      [series_result(s, mine, e.repetitions) for s in e.series], missing,
                      [i for i in missing if i in failed],
                      list({m.run.id: m for m in ms if m.run.id in sensitivity}.values()))


def seed_results(ms: list[RunMetrics]) -> list[SeedResult]:
    """Each seed under its current declaration."""
    return [seed_result(e, ms) for e in EXPERIMENTS.values()]


def seed_history(ms: list[RunMetrics], failed: frozenset[str] = frozenset()) -> dict[str, list[SeedResult]]:
    """Each seed under every version of its declaration, oldest first."""
    return {seed: [seed_result(e, ms, failed) for e in versions] for seed, versions in HISTORY.items()}


@dataclass
class KeptJudgement:
    """Every declaration of the seeds judged on the runs kept in some directories."""
    runs: list            # the declared runs kept there (Run)
    missing: list         # the ids of the declared runs not kept there
    metrics: list[RunMetrics]
    history: dict[str, list[SeedResult]]


def judge_kept(dirs: list[Path], seeds: list[str] | None = None, bundle: Path = REFERENCE_RUNS) -> KeptJudgement:
    """The seeds named (default: every seed) under every version of their declarations, each version's runs (its
    unjudged sensitivity runs too) taken from the first of `dirs` that keeps each, measured once, and judged; a run
    whose failure record is kept in one of `dirs` counts as failed. A reconstructed version's runs are the bundle's:
    a run recorded since under the same id (a kernel variant whose name now builds another dentry, say) is not one of
    them."""
    chosen = {seed: HISTORY[seed] for seed in (seeds or HISTORY)}
    found, missing, mine = {}, {}, {}
    for versions in chosen.values():
        for version in versions:
            runs, absent = kept(list(dict.fromkeys([*version.specs(), *version.sensitivity])),
                                [bundle] if version.declaration.reconstructed else dirs)
            found.update((r.path, r) for r in runs)
            missing.update(dict.fromkeys(absent))
            mine[id(version)] = [r.path for r in runs]
    ms = metrics_for(list(found.values()), None, check_model=False) if found else []
    by_path = {m.run.path: m for m in ms}
    failed = frozenset(p.name.removesuffix(".failed.json") for d in dirs if d.is_dir() for p in d.glob("*.failed.json"))
    history = {seed: [seed_result(v, [by_path[p] for p in mine[id(v)]], failed) for v in versions]
               for seed, versions in chosen.items()}
    return KeptJudgement(list(found.values()), list(missing), ms, history)


def history_in(seed: str, dirs: list[Path]) -> list[SeedResult]:
    """One seed under every version of its declaration, from the runs kept in `dirs` (judge_kept)."""
    return judge_kept(dirs, [seed]).history[seed]


def declared_arms() -> dict[tuple[str, str], tuple[str, str]]:
    """(the declaration tag runs are recorded under, a configuration's repetition_of) -> the declaration and its
    point or series the configuration is an arm of (("004-fsv5", "8 sockets")), for every declared version. Runs of
    a version recorded before versions were tagged have no tag: the first version that declares their configuration
    names it (the point's label alone may be another version's too, with another lock model)."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    for versions in HISTORY.values():
        for e in versions:
            tag = e.declaration.runs_id if e.declaration.tagged else ""
            for p in e.points:
                for t in (p.base, p.new):
                    out.setdefault((tag, t.repetition_of), (e.declaration.id, p.label))
            for x in e.series:
                for t in x.runs:
                    out.setdefault((tag, t.repetition_of), (e.declaration.id, x.label))
    return out


def judge(pub, p: PointResult, d: Declaration) -> Verdict:
    """A point's verdict on one published figure: its declared rule, or none for a control."""
    return point_verdict(pub, p, d) if p.point.judged else Verdict(False, "control: not judged")


def main_point(res: SeedResult) -> tuple[PointResult, object] | None:
    """The headline comparison (cohtb/experiments/power.py: headline) with its runs."""
    found = power.headline(res.experiment)
    if found is None:
        return None
    point, pub = found
    return next(p for p in res.points if p.point == point), pub


def latest_complete(history: list[SeedResult]) -> SeedResult | None:
    """The latest version whose runs are all kept; of versions judging the same runs (a rule changed after
    them), the earliest: the rule that stood before the runs were seen."""
    done = [r for r in history if r.complete]
    if not done:
        return None
    runs = lambda r: {s.id for s in r.experiment.specs()}
    return next(r for r in done if runs(r) == runs(done[-1]))


def standing(versions: list[SeedResult]) -> list[tuple[SeedResult, str]]:
    """The verdicts that stand for one seed, each with how it stands: the current declaration's; until its runs
    are recorded, also the latest earlier declaration whose runs are all kept. A version that judges seen runs
    again comes after the verdict declared before those runs, named as written after them."""
    res = versions[-1]
    if res.declaration.rejudges:   # the verdict declared before the runs first, then the one written after
        judged = versions[res.declaration.rejudges - 1]
        return [(judged, f"{judged.declaration.id} (declared before its runs)"),
                (res, f"{res.declaration.id} (the same runs, its rule written after they were seen)")]
    out = [(res, res.declaration.id)]
    earlier = res if res.complete else latest_complete(versions[:-1])
    if earlier is not None and earlier is not res:
        out.append((earlier, f"{earlier.declaration.id} (earlier)"))
    return out


def on_hierarchy(versions: list[SeedResult], hierarchy: str) -> SeedResult | None:
    """Of a seed's versions on machines of one hierarchy ("flat", "socket"): the latest whose runs are all kept,
    else the latest declared."""
    mine = [r for r in versions if hierarchy_of(r.declaration.run_machine()) == hierarchy]
    return latest_complete(mine) or (mine[-1] if mine else None)


def machine_pairs(history: dict[str, list[SeedResult]]) -> list[tuple[str, SeedResult | None, SeedResult | None]]:
    """(experiment, flat, socket) for each experiment with a version on the flat machine (its latest on each, whose
    runs are kept where any are), and for each machine check across the two hierarchies, it beside the declaration
    it stands beside (a check on the same hierarchy, another core model, is not a flat-vs-socket pair)."""
    by_id = {res.declaration.id: res for versions in history.values() for res in versions}
    out = []
    for seed, versions in history.items():
        beside = versions[-1].declaration.stands_beside
        if beside:
            mine, other = versions[-1], by_id[beside]
            flat_first = hierarchy_of(mine.declaration.run_machine()) == "flat"
            if flat_first != (hierarchy_of(other.declaration.run_machine()) == "flat"):
                out.append((seed, *((mine, other) if flat_first else (other, mine))))
        elif (flat := on_hierarchy(versions, "flat")) is not None:   # else the socket machine's alone: no pair
            out.append((seed, flat, on_hierarchy(versions, "socket")))
    return out


def differences_beside_machine(a: SeedResult, b: SeedResult) -> list[str]:
    """Besides the machine (its hierarchy, parameters and wiring), what two declarations set side by side differ in:
    declared fields, the project's gem5 patches their builds carry, and (once both are recorded) the runs' inputs
    whose digests differ; until then, that the runs' inputs are not known yet (INPUTS_UNKNOWN)."""
    fields = [x for x in differences(a.declaration, b.declaration) if not x.startswith("machine:")]
    patches = [sorted(patches_needed(res.declaration.run_machine())) for res in (a, b)]
    if patches[0] != patches[1]:
        fields.append("gem5 patches: " + " -> ".join(", ".join(p) or "none" for p in patches))
    if not (a.complete and b.complete):
        return fields + [INPUTS_UNKNOWN]
    manifests = lambda res: [json.loads((m.run.path / "manifest.json").read_text()) for m in res.kept_runs()]
    return fields + [f"the runs' {x}" for x in changed_inputs(manifests(a), manifests(b))
                     if x not in ("gem5 build", "machine")]


INPUTS_UNKNOWN = "the runs' inputs: not known until both are recorded"


@dataclass(frozen=True)
class Collapsed:
    """How many repetitions of one series label fell under COLLAPSED_TO of their level before the first disturbance
    (in its lowest interval) and stayed there (in every interval of the last quarter)."""
    label: str
    fell: int
    stayed: int
    repetitions: int


def collapsed(sr: SeriesResult, label: str) -> Collapsed | None:
    """The label's collapse counts, or None when its runs have no intervals."""
    low, peak = sr.trough(label), sr.late_peak(label)
    if not low or not peak:
        return None
    fell, stayed = (sum(v < COLLAPSED_TO for v in s.values) for s in (low, peak))
    return Collapsed(label, fell, stayed, len(low.values))


def shown(versions: list[SeedResult]) -> SeedResult | None:
    """The result the figures draw: the current declaration's, else the latest earlier one whose runs are kept."""
    return versions[-1] if versions[-1].complete else latest_complete(versions)


def _verdict(v: Verdict) -> dict:
    return {"reproduced": v.reproduced, "text": v.text, **({"band": v.band} if v.band else {}),
            **({"called_out": True} if v.called_out else {})}


def _spread(s) -> dict:
    return {"mean": round(s.mean, 6), "lo": round(s.lo, 6), "hi": round(s.hi, 6)}


def judgement(res: SeedResult) -> dict:
    """One declaration's judgement of its runs: which are kept, and each point's, curve's and series' verdict."""
    out: dict = {"runs": len(res.experiment.specs()), "missing": len(res.missing), "failed": len(res.failed)}
    if not res.complete:
        return out
    out["points"] = [{"label": p.point.label, "ratio": _spread(p.ratio),
                      "published": {pub.configuration: _verdict(res.verdict(p, pub)) for pub in p.point.published}}
                     for p in res.points]
    out["curves"] = {name: _verdict(v) for name, v in res.curves.items()}
    out["series"] = {sr.series.label: _verdict(res.series_verdict(sr)) for sr in res.series}
    profiles = {p.point.label: {c.arm: {"verdict": c.verdict, "shares": {s: round(c.mean(s), 6) for s in c.shares}}
                                for c in res.profile_checks(p) if c.complete}
                for p in res.points}
    if any(profiles.values()):
        out["profiles"] = profiles
    return out


def verdicts(history: dict[str, list[SeedResult]]) -> dict:
    """Every declaration's judgement, by seed and declaration id, oldest first."""
    return {seed: {res.declaration.id: judgement(res) for res in versions} for seed, versions in history.items()}


def verdicts_text(history: dict[str, list[SeedResult]]) -> str:
    return json.dumps(verdicts(history), indent=1, sort_keys=False) + "\n"
