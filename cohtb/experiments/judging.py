"""Judging: every declaration of every seed applied to the kept runs, as values. A declaration's runs are the ones
recorded under it (or under the version it judges again); each point, curve and series gets its declared rule's
verdict. The report only renders these values; `verdicts` is the whole judgement as one committed file, so a change
to a rule, a declaration or a run that moves any verdict shows up as a changed file."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from cohtb.analysis.metrics import RunMetrics
from cohtb.analysis.pipeline import metrics_for
from cohtb.experiments import power, profile_band
from cohtb.experiments.declarations import Declaration, runs_declaration
from cohtb.experiments.reproduce import PointResult, SeriesResult, point_results, series_result
from cohtb.experiments.rules import Verdict, curve_verdicts, point_verdict, series_verdict
from cohtb.experiments.seeds import EXPERIMENTS, HISTORY, Experiment
from cohtb.places import REFERENCE_RUNS
from cohtb.run.runs import kept

VERDICTS = "verdicts.json"   # beside the bundled runs: every declaration's judgement of them


@dataclass
class SeedResult:
    experiment: Experiment
    points: list[PointResult]
    series: list[SeriesResult]
    missing: list[str]
    failed: list[str] = field(default_factory=list)   # of the missing: runs gem5 did not finish (a record is kept)

    @property
    def complete(self) -> bool:
        return not self.missing


    @property
    def declaration(self) -> Declaration:
        return self.experiment.declaration


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
    return SeedResult(e, point_results(e.points, mine, e.repetitions),
                      [series_result(s, mine, e.repetitions) for s in e.series], missing,
                      [i for i in missing if i in failed])


def seed_results(ms: list[RunMetrics]) -> list[SeedResult]:
    """Each seed under its current declaration."""
    return [seed_result(e, ms) for e in EXPERIMENTS.values()]


def seed_history(ms: list[RunMetrics], failed: frozenset[str] = frozenset()) -> dict[str, list[SeedResult]]:
    """Each seed under every version of its declaration, oldest first."""
    return {seed: [seed_result(e, ms, failed) for e in versions] for seed, versions in HISTORY.items()}


def history_in(seed: str, dirs: list[Path]) -> list[SeedResult]:
    """One seed under every version of its declaration, from the runs kept in `dirs` (the first that has each).
    A reconstructed version's runs are the bundle's: a run recorded since under the same id (a kernel variant
    whose name now builds another dentry, say) is not one of them."""
    history = []
    for version in HISTORY[seed]:
        runs, _ = kept(version.specs(), [REFERENCE_RUNS] if version.declaration.reconstructed else dirs)
        history.append(seed_result(version, metrics_for(runs, None, check_model=False) if runs else []))
    return history


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
    d = res.declaration
    out: dict = {"runs": len(res.experiment.specs()), "missing": len(res.missing), "failed": len(res.failed)}
    if not res.complete:
        return out
    out["points"] = [{"label": p.point.label, "ratio": _spread(p.ratio),
                      "published": {pub.configuration: _verdict(judge(pub, p, d)) for pub in p.point.published}}
                     for p in res.points]
    out["curves"] = {name: _verdict(v) for name, v in curve_verdicts(res.points, d).items()}
    out["series"] = {sr.series.label: _verdict(series_verdict(sr, d)) for sr in res.series}
    profiles = {p.point.label: {c.arm: {"verdict": c.verdict, "shares": {s: round(c.mean(s), 6) for s in c.shares}}
                                for c in profile_band.checks(d, p) if c.complete}
                for p in res.points}
    if any(profiles.values()):
        out["profiles"] = profiles
    return out


def verdicts(history: dict[str, list[SeedResult]]) -> dict:
    """Every declaration's judgement, by seed and declaration id, oldest first."""
    return {seed: {res.declaration.id: judgement(res) for res in versions} for seed, versions in history.items()}


def verdicts_text(history: dict[str, list[SeedResult]]) -> str:
    return json.dumps(verdicts(history), indent=1, sort_keys=False) + "\n"
