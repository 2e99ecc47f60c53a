"""The seed experiments, their declarations, and the rules that call a comparison a reproduction, on hand-made
numbers."""

import json
import os
import re
import subprocess
import sys
import tomllib
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from cohtb import launch
from cohtb.errors import CohtbError
from cohtb.experiments import advice, declarations, method_changes, published, seed_folders
from cohtb.experiments.magnitude import predicted
from cohtb.places import REFERENCE_RUNS, ROOT
from cohtb.run import machines
from cohtb.experiments.published import PROFILES, SHARES, Published
from cohtb.experiments.reproduce import Ratio, Spread, point_results, series_result
from cohtb.experiments.rules import (SERIES_RULES, SHAPE_RULES, collapse_locked_level, collapse_trough, curve_verdicts,
                                    series_verdict, sign_2x, sign_effect_band)
from cohtb.experiments.seeds import EXPERIMENTS, HISTORY, NO_INTRUDER
from cohtb.run.spec import RunSpec
from run_fixtures import seed_with_runs_to_record

PLUS_55 = Published("20-way stat", 5038006, 7842883, "ops/s", True)
E004 = HISTORY["004"][1]   # the collapse series as recorded (3 repetitions), judged by collapse-trough
DECLARED_004 = EXPERIMENTS["004"].declaration


def verdict(pub: Published, sim: Ratio, rule=sign_2x, d=None, seconds_per_op=None):
    """A rule on a point whose runs gave `sim` (the rules read only the ratio and the base time per op)."""
    return rule(pub, SimpleNamespace(ratio=sim, base_seconds_per_op=seconds_per_op), d or DECLARED_004)


def test_published_ratio_is_a_speed_up_either_way():
    assert PLUS_55.ratio == pytest.approx(1.5567, abs=1e-4)
    elapsed = Published("exit", 65.29, 45.69, "s", False)   # shorter elapsed time is faster
    assert elapsed.ratio == pytest.approx(65.29 / 45.69)


def test_ratio_range_is_over_every_pair_of_repetitions():
    r = Ratio.of(Spread((10.0, 11.0, 12.0)), Spread((15.0, 16.0, 18.0)))
    assert r.mean == pytest.approx(16.3333 / 11.0, abs=1e-4)
    assert r.lo == pytest.approx(15 / 12) and r.hi == pytest.approx(18 / 10)
    assert r.sign == 1
    assert Ratio.of(Spread((10.0, 12.0)), Spread((11.0, 13.0))).sign == 0     # 11/12 < 1 < 13/10
    assert Ratio.of(Spread((10.0, 11.0)), Spread((5.0, 6.0))).sign == -1


@pytest.mark.parametrize("sim, reproduced, says", [
    (Ratio(1.5, 1.3, 1.7), True, "yes"),
    (Ratio(1.1, 0.95, 1.2), False, "within the spread"),
    (Ratio(0.8, 0.7, 0.9), False, "opposite sign"),
    (Ratio(4.0, 3.5, 4.5), True, "the change is 5.4x the published one"),     # +300% against +55.7%
    (Ratio(1.2, 1.1, 1.3), True, "the change is 0.4x the published one"),     # +20%: under half of it
])
def test_verdict_needs_the_sign_beyond_the_spread(sim, reproduced, says):
    v = verdict(PLUS_55, sim)
    assert v.reproduced is reproduced and says in v.text
    assert v.text == "yes" or says != "yes"


def test_a_small_published_gain_is_a_sign_not_no_change():
    """Seed 003's +3.9% is a gain: a simulated gain reproduces it in sign (and is called out as far larger)."""
    small = Published("fio", 16031, 16663, "MB/s", True)
    v = verdict(small, Ratio(2.2, 2.0, 2.4))
    assert v.reproduced and "x the published one" in v.text
    assert not verdict(small, Ratio(0.9, 0.85, 0.95)).reproduced
    # +12% published against +120% simulated: a ratio of speed-ups under 2, a change 10x as large: called out
    assert "10.0x" in verdict(Published("x", 1.0, 1.12, "ops/s", True), Ratio(2.2, 2.1, 2.3)).text


def test_a_published_no_change_is_reproduced_by_no_change_only():
    one_node = Published("1 node", 2442998, 2352103, "JPM", True, null=True)   # "the performance is similar"
    assert verdict(one_node, Ratio(1.02, 0.97, 1.06)).reproduced
    assert verdict(one_node, Ratio(1.03, 1.01, 1.05)).reproduced           # beyond the spread, but under 5%
    v = verdict(one_node, Ratio(1.3, 1.2, 1.4))
    assert not v.reproduced and "+30%" in v.text
    assert not verdict(one_node, Ratio(1.8, 0.95, 2.6)).reproduced        # a wide spread is not "no change"


def shown(v: float) -> set[str]:
    """How a published figure may be printed: 65.29, 520.1, 5038006."""
    return {f"{v:.0f}", f"{v:.1f}", f"{v:.2f}"} if v != int(v) else {f"{int(v)}"}


def every_published() -> list[Published]:
    pubs = [pub for e in EXPERIMENTS.values() for p in e.points for pub in p.published]
    return pubs + [pub for e in EXPERIMENTS.values() for s in e.series for pub in s.published]


def test_published_figures_are_in_the_lines_they_cite():
    """Every published base and new figure is printed in the lines quoted from its message (000's JPM, 001's
    seconds, 002's Mop/s, 003's MB/s, 004's ops/s), so none was typed wrong or made up; every message is cited."""
    for pub in every_published():
        assert pub.quote and pub.where and pub.source is not None, pub.configuration
        text = " ".join(pub.quote)
        for v in (pub.base, pub.new):
            assert any(re.search(rf"(?<![\d.]){re.escape(s)}(?!\d)", text) for s in shown(v)), (pub.configuration, v)
        src = pub.source
        assert src.subject and src.author and src.date and src.archive.startswith("https://"), src
    assert all(pub.null == (p.base.sockets == 1) for p in EXPERIMENTS["000"].points for pub in p.published)


# The seeds' messages as text (<seed>_*.txt): COHTB_SEED_MESSAGES, else the shared folder beside the checkout
SEED_MESSAGES = Path(os.environ.get("COHTB_SEED_MESSAGES") or ROOT.parent / "shared" / "seeds")


@pytest.mark.skipif(not SEED_MESSAGES.is_dir(), reason=f"no folder of the seeds' messages as text (<seed>_*.txt) at "
                    f"{SEED_MESSAGES}: set COHTB_SEED_MESSAGES")
def test_quotes_are_the_messages_own_lines():
    """With the messages at hand: every quoted line is a line of its message (white space folded)."""
    folder = SEED_MESSAGES
    for pub in every_published():
        message = next(folder.glob(f"{pub.source.seed}_*.txt")).read_text()
        lines = {" ".join(line.split()) for line in message.splitlines()}
        assert set(pub.quote) <= lines, (pub.source.seed, pub.configuration, set(pub.quote) - lines)
    for seed, profiles in PROFILES.items():
        for p in profiles:
            lines = {" ".join(line.split()) for line in next(folder.glob(f"{seed}_*.txt")).read_text().splitlines()}
            assert set(p.quote) <= lines, (seed, p.arm, set(p.quote) - lines)


def test_every_experiment_is_valid_runs_repeated_as_declared():
    for versions in HISTORY.values():
        for e in versions:
            d = e.declaration
            specs = e.specs()
            assert len({s.id for s in specs}) == len(specs)
            for s in specs:
                launch.check([s])
                assert s.timed and 1 <= s.seed <= d.repetitions and s.declaration == (d.runs_id if d.tagged else "")
            groups = {}
            for s in specs:
                groups.setdefault(s.repetition_of, []).append(s.seed)
            assert all(sorted(v) == list(range(1, d.repetitions + 1)) for v in groups.values())
    ticket = [p for p in EXPERIMENTS["000"].points if "ticket" in p.base.extra]
    assert sorted(p.base.sockets for p in ticket) == [1, 2, 4, 8]   # 3.10's lock at every size
    assert all(p.base.extra == p.new.extra for p in EXPERIMENTS["000"].points)   # only the policy changes
    assert {(p.base.policy, p.new.policy) for p in EXPERIMENTS["000"].points} == {("locked", "cmpxchg")}
    assert {(p.base.layout, p.new.layout) for p in EXPERIMENTS["004"].points} == {("pre611", "split")}   # 6.10 vs 6.11


def test_current_declarations_are_era_faithful_repeated_and_can_fail_on_magnitude():
    """Every current declaration: at least 5 repetitions varied by more than the start (on one socket, where no
    line's home can move, by the start alone, said in the declaration), a minimum effect, a rule that judges
    magnitude (a series alone: its series rule), and the seed era's lock (000: 3.10's ticket lock; 001: 4.4 and 004: 6.12, qspinlock)."""
    for e in EXPERIMENTS.values():
        d = e.declaration
        assert not d.reconstructed and d.repetitions >= 5 and d.min_effect > 0, d.id
        if e.points:   # a point rule that judges magnitude, or the shape over the socket counts
            assert d.rule.startswith("sign-effect-band") or d.rule in SHAPE_RULES, d.id
        else:   # a series alone (a collapse): judged by its series rule only
            assert d.rule == "none" and d.collapse_rule in SERIES_RULES and e.series, d.id
        assert len(d.repetition_sources) >= 2 or (d.sockets == (1,) and d.repetition_sources == ("start skew",)), d.id
    assert EXPERIMENTS["000"].declaration.lock == "ticket"
    assert EXPERIMENTS["001"].declaration.lock == EXPERIMENTS["004"].declaration.lock == "qspinlock"
    se = [s for k in ("000", "001", "004") for s in EXPERIMENTS[k].specs()]
    # repetitions 1-3 vary the start skew alone (its own spread), 4 and 5 rotate the home socket too
    assert [(s.seed, s.home_socket) for s in se if s.sockets == 8][:5] == [(1, 0), (2, 0), (3, 0), (4, 1), (5, 2)]
    fs = EXPERIMENTS["004-fs"].specs()
    assert [(s.seed, s.placement) for s in fs][:5] == [(1, 0), (2, 0), (3, 0), (4, 1), (5, 2)]
    assert len({s.repetition_of for s in fs}) == 2   # the placement is a repetition, not a configuration


def test_a_reconstructed_declarations_runs_are_all_kept():
    """Nothing recorded under a declaration leaves the bundle: every run a reconstructed declaration used (its runs
    predate declarations, so they are the bundle's) is in reference-runs/, and so is every tagged run there."""
    bundle = Path(__file__).parent.parent / "reference-runs"
    have = {p.name for p in bundle.iterdir() if (p / "manifest.json").exists()}
    for versions in HISTORY.values():
        for e in versions:
            d = e.declaration
            if d.reconstructed:
                used = {s.id for s in [*e.specs(), *e.sensitivity] if s.seed <= (d.recorded_repetitions or s.seed)}
                assert used <= have, (e.declaration.id, sorted(used - have)[:3])
    from cohtb.run.bundle import recorded

    import json

    tagged = {p.name for p in bundle.iterdir() if (p / "manifest.json").exists()
              and json.loads((p / "manifest.json").read_text())["spec"].get("declaration")}
    assert tagged <= set(recorded(bundle)) <= have   # every run bundled under a declaration is listed and there


def test_a_run_recorded_under_a_declaration_matches_it():
    """A tagged run's manifest holds the digest of the declaration it was recorded under: a declaration edited
    after its runs fails here (a change must be a new version)."""
    import json

    bundle = Path(__file__).parent.parent / "reference-runs"
    for m in bundle.glob("*/manifest.json"):
        doc = json.loads(m.read_text())
        if doc["spec"].get("declaration"):
            d = declarations.by_id(doc["spec"]["declaration"])
            assert doc["declaration"]["id"] == d.id and doc["declaration"]["digest"] == d.digest(), m.parent.name


def test_declarations_refuse_bad_fields(tmp_path, monkeypatch):

    text = seed_folders.declaration_file("001").read_text()
    for damage, field in [(text.replace("rule = ", "rules = ", 1), "field 'rule': Field required"),
                          (text + "\nfoo = 1\n", "field 'foo': Unexpected keyword argument"),
                          (text.replace('machine = "se-mesi-two-level"', 'machine = "nowhere"', 1), "machine"),
                          (text.replace('"start skew"]', '"the moon"]', 1), "repetition_sources"),
                          (text.replace("version = 2", "version = 3"), "version")]:
        (tmp_path / "001").mkdir(exist_ok=True)
        (tmp_path / "001" / "001.toml").write_text(damage)
        monkeypatch.setattr(seed_folders, "SEEDS", tmp_path)
        with pytest.raises(CohtbError, match=field):
            declarations.versions("001")


def fake_run(spec: RunSpec, throughput: float = 1.0, totals: list[int] | None = None,
             listings: int | None = None, seen: int | None = None):  # noqa: D103
    """What reproduce needs of a run: spec, throughput and, for a series, the workload's intervals (and listings;
    seen: those its trace shows in the window, as the lister's visits; the same as listings unless given)."""
    w = SimpleNamespace(measure=SimpleNamespace(mode="window", interval_ns=spec.interval_us * 1000),
                        intervals=SimpleNamespace(total=totals or [], min=[], max=[]), listings=listings)
    seen = listings if seen is None else seen
    visits = None if seen is None else [object()] * seen
    return SimpleNamespace(spec=spec, throughput=throughput, manifest=SimpleNamespace(workload=w),
                           analysis=SimpleNamespace(lister_visits=visits))


def test_points_pair_repetitions_by_configuration():
    p = E004.points[0]
    runs = [fake_run(RunSpec(**{**p.base.__dict__, "seed": k}), 5.0 + k) for k in (1, 2, 3)]
    runs += [fake_run(RunSpec(**{**p.new.__dict__, "seed": k}), 8.0 + k) for k in (1, 2, 3)]
    (res,) = point_results(E004.points, runs, 3)
    assert res.complete and res.base_throughput.values == (6.0, 7.0, 8.0)
    assert res.ratio.lo == pytest.approx(9 / 8) and res.ratio.hi == pytest.approx(11 / 6)
    (partial,) = point_results(E004.points, runs[:1] + runs[3:4], 3)   # one repetition each: no spread, no verdict
    assert not partial.complete


def test_runs_recorded_under_the_declaration_meet_the_points_and_series():
    """The experiment's own specs (tagged with the declaration's id) are what a launch records; the points and
    series, configurations without a declaration, must find them (a seed report once found none)."""
    for e in (EXPERIMENTS["004"], EXPERIMENTS["002"]):
        specs = e.specs()
        assert {s.declaration for s in specs} >= {e.declaration.id}
        runs = [fake_run(s, 1.0 + 0.1 * s.seed) for s in specs]
        assert all(p.complete for p in point_results(e.points, runs, e.repetitions))
        assert all(len(rs) == e.repetitions for sr in e.series for rs in series_result(sr, runs, e.repetitions).runs.values())


def _series_runs(levels: dict[str, tuple[float, float]], recover_at: int | None = None, experiment=None,
                 listings: dict[str, int] | None = None, blips: dict[str, float] | None = None,
                 seen: dict[str, int] | None = None):
    """Each label's (an SE series: each policy's) ops per interval: `early` before the transient holder, `low`
    from it on (back to `early` from interval `recover_at`, if given; the last interval at `blips[label]` times
    `early`, if given); repetitions 1-3 scaled by 1.01-1.03. Listings: the series' declared count for a label
    with a control, 0 for a control, unless `listings` says otherwise."""
    (series,) = (experiment or E004).series
    controls = dict(series.controls)
    runs = []
    for label, t in series.labelled().items():
        early, low = levels.get(label, (1000, 1000))
        n = t.window_us // t.interval_us
        at = int(series.event_at_us // t.interval_us)
        made = (listings or {}).get(label, series.event_count if label in controls else 0)
        for k in (1, 2, 3):
            totals = [int((low if at <= i < (recover_at or n) else early) * (1 + k / 100)) for i in range(n)]
            if label in (blips or {}):
                totals[-1] = int(early * blips[label])
            runs.append(fake_run(RunSpec(**{**t.__dict__, "seed": k}), totals=totals, listings=made,
                                 seen=(seen or {}).get(label)))
    return series_result(series, runs, 3)


def test_collapse_is_reproduced_when_only_retry100_falls():
    res = _series_runs({"retry100": (1000, 50), "trywait": (1000, 950), "unified": (1000, 990)})
    assert res.trough("retry100").mean == pytest.approx(0.05, abs=0.01)
    v = collapse_trough(res)
    assert v.reproduced and "retry100 falls to 0.05 of its level and stays there" in v.text


def test_a_collapse_that_recovers_is_said_to():
    res = _series_runs({"retry100": (1000, 50), "trywait": (1000, 950), "unified": (1000, 990)}, recover_at=8)
    v = collapse_trough(res)
    assert v.reproduced and "then recovers (last quarter 1.00; the published collapse lasted)" in v.text


@pytest.mark.parametrize("levels, why", [
    ({"retry100": (1000, 50), "trywait": (1000, 950), "unified": (1000, 150)}, "unified fall too"),
    ({"retry100": (1000, 1000)}, "retry100's lowest interval is 1.00"),
    ({"retry100": (1000, 600)}, "retry100's lowest interval is 0.60"),
])
def test_collapse_is_not_reproduced(levels, why):
    v = collapse_trough(_series_runs(levels))
    assert not v.reproduced and why in v.text


def test_the_locked_policy_is_a_reference_not_judged():
    v = collapse_trough(_series_runs({"retry100": (1000, 50), "locked": (100, 10)}))
    assert v.reproduced and "locked" not in v.text


def test_a_series_with_missing_repetitions_has_no_verdict():
    res = _series_runs({"retry100": (1000, 50)})
    res.runs["trywait"] = res.runs["trywait"][:2]
    assert collapse_trough(res).text == "no: runs missing"


def test_the_magnitude_prediction_is_amdahls_dilution():
    assert predicted(2.0, 1.0) == pytest.approx(2.0)                # the whole operation is the contended path
    assert predicted(2.0, 0.5) == pytest.approx(1 / (0.5 + 0.25))    # half of it
    assert predicted(1e9, 0.7837) == pytest.approx(1 / (1 - 0.7837), rel=1e-6)   # 000's limit: +362%


def test_declared_rule_judges_effect_and_magnitude():
    """sign-effect-band on seed 004's layout point (p = 0.8977 from the seed's perf top, minimum effect 10%)."""
    d = DECLARED_004
    pub = Published("20-way stat, tmpfs", 5038006, 7842883, "ops/s", True, SimpleNamespace(seed="004"))
    # +65% simulated: predicted 1/((1-p) + p/1.65) = +56.6%, band widened by 10%: +42% to +72%: in it
    v = verdict(pub, Ratio(1.65, 1.62, 1.68), sign_effect_band, d)
    assert v.reproduced and "yes: published +56% is in the predicted" in v.text
    # +300% simulated predicts +232% or more: the published +56% is outside, whatever the sign says
    v = verdict(pub, Ratio(4.0, 3.5, 4.5), sign_effect_band, d)
    assert not v.reproduced and v.text.startswith("sign only: published +56% is outside the predicted")
    # a change beyond the spread but under the minimum effect is no result
    v = verdict(pub, Ratio(1.05, 1.04, 1.06), sign_effect_band, d)
    assert not v.reproduced and "under the minimum effect (10%)" in v.text
    # nothing published to predict the magnitude from (002): said so, judged in sign and effect only
    other = Published("36 threads, locking rate", 1.0, 3.4, "Mop/s", True, SimpleNamespace(seed="002"))
    v = verdict(other, Ratio(1.5, 1.4, 1.6), sign_effect_band, d)
    assert v.reproduced and "magnitude not testable" in v.text
    # a published no change: the whole range within the minimum effect
    null = Published("1 node", 2442998, 2352103, "JPM", True, SimpleNamespace(seed="000"), null=True)
    assert verdict(null, Ratio(1.02, 0.95, 1.08), sign_effect_band, d).reproduced
    assert not verdict(null, Ratio(1.05, 0.95, 1.12), sign_effect_band, d).reproduced


def test_a_time_per_op_share_comes_from_the_published_rate():
    """003: 38 threads at 16031 MB/s of 4 KiB I/Os are 9.26 µs per I/O per thread. A simulated counter costing 1 µs
    of it, sped up 20-fold, predicts +11% (+1% to +23% with the 10% minimum effect): the published +3.9% is in it.
    One costing 3 µs predicts +44%: the published figure is not."""
    (share,) = SHARES["003"]
    pub = Published("38 threads, 2 shared files, read-only", 16031, 16663, "MB/s", True, SimpleNamespace(seed="003"))
    assert share.time_per_op(pub) == pytest.approx(4096 * 38 / (16031 * 2 ** 20))
    d = next(e.declaration for e in HISTORY["003"] if e.declaration.version == 4)   # its band takes p from the runs
    v = verdict(pub, Ratio(20.0, 19.0, 21.0), sign_effect_band, d, seconds_per_op=1e-6)
    assert v.reproduced and v.band == "+1% to +23%"
    v = verdict(pub, Ratio(20.0, 19.0, 21.0), sign_effect_band, d, seconds_per_op=3e-6)
    assert not v.reproduced and v.text.startswith("sign only")


def test_published_profiles_are_printed_in_the_lines_they_cite():
    """Each function's share is printed beside its name in the quoted lines, and the lines are the message's."""
    assert {seed for seed, ps in PROFILES.items() if ps} == {"000", "004"}
    pubs = {p.configuration for e in EXPERIMENTS.values() for pt in e.points for p in pt.published}
    for seed, profiles in PROFILES.items():
        for p in profiles:
            assert p.arm in ("base", "new") and p.configuration in pubs and p.where and p.functions, seed
            text = " ".join(p.quote)
            for symbol, share in p.functions:
                assert re.search(rf"{100 * share:.2f}% (\S+ )*\[?k?\]? ?{re.escape(symbol)}\b", text), (seed, symbol)


def test_shares_are_in_the_lines_they_cite():
    """Every share's numbers are printed in its quoted lines; 001's is recomputed from them."""
    for seed, shares in SHARES.items():
        for s in shares:
            assert s.quote and s.where and s.applies_to, seed
            text = " ".join(s.quote)
            if s.kind == "share" and seed != "001":   # a profile: its percentages are quoted and add up to it
                parts = [float(x) for x in re.findall(r"(\d+\.\d+)%", text)]
                assert parts and sum(parts) == pytest.approx(s.share * 100, abs=0.005), seed
    (s001,) = SHARES["001"]
    assert s001.share == pytest.approx((82 * 60 + 14) / (96 * 65.29), abs=1e-4)
    assert "65.29s 82m14s" in " ".join(s001.quote) and "96 threads" in " ".join(s001.quote)
    pubs = {p.configuration for e in EXPERIMENTS.values() for pt in e.points for p in pt.published}
    assert all(c in pubs for shares in SHARES.values() for s in shares for c in s.applies_to)


def test_the_collapse_rule_declared_before_the_runs_needs_a_lasting_fall():
    """collapse-locked-level: retry100's last quarter at the locked-only level, the waiting policies recovered."""
    lasting = _series_runs({"retry100": (1000, 60), "trywait": (1000, 950), "unified": (1000, 990),
                            "locked": (60, 60)})
    assert collapse_locked_level(lasting).reproduced
    recovering = _series_runs({"retry100": (1000, 60), "trywait": (1000, 950), "unified": (1000, 990),
                               "locked": (60, 60)}, recover_at=8)
    v = collapse_locked_level(recovering)
    assert not v.reproduced and "does not fall beyond its spread" in v.text
    assert collapse_trough(recovering).reproduced   # the rule that replaced it after the runs passes it


def test_the_full_system_collapse_needs_a_lasting_fall_caused_by_the_listings_and_no_fall_with_the_wait():
    """collapse-half-lasting: stock-6.12 under half its level to the end in every repetition with the listings,
    in none without them, and the wait kernel in none with them; each failure says which."""
    e = HISTORY["004-collapse-fs"][0]   # version 1 is judged by it
    base, new = e.declaration.kernels
    control = f"{base} {NO_INTRUDER}"
    judge = lambda levels, **kw: series_verdict(_series_runs(levels, experiment=e, **kw), e.declaration)
    v = judge({base: (1000, 150)})
    assert v.reproduced and f"{base}: last quarter 0.15" in v.text
    v = judge({base: (1000, 150)}, recover_at=(e.declaration.window_us // e.declaration.interval_us) * 3 // 4)
    assert not v.reproduced and "does not stay under 50%" in v.text   # recovered before the last quarter
    v = judge({base: (1000, 150), control: (1000, 300)})
    assert not v.reproduced and "falls without the intruder too" in v.text
    v = judge({base: (1000, 150), new: (1000, 400)})
    assert not v.reproduced and f"{new} collapses too" in v.text
    assert judge({base: (1000, 600)}).text.startswith(f"no: {base} does not stay under")


def test_a_rule_only_version_judges_the_earlier_versions_runs_and_the_listings_in_the_window():
    """004-collapse-fs v4 rejudges v3's runs (their ids and record are v3's) by collapse-stays-under-half-in-window:
    the listings the trace shows in the window count, so a control's listing after the window does not fail it,
    while one in the window, or a listing arm short of its listings there, still does."""
    e = HISTORY["004-collapse-fs"][3]
    d = e.declaration
    assert (d.version, d.rejudges, d.runs_id) == (4, 3, "004-collapse-fsv3")
    assert {s.declaration for s in e.specs()} == {"004-collapse-fsv3"}
    assert {s.id for s in e.specs()} == {s.id for s in HISTORY["004-collapse-fs"][2].specs()}
    assert d.collapse_rule == "collapse-stays-under-half-in-window"
    base, _ = d.kernels
    (series,) = e.series
    control = series.control(base)
    judge = lambda levels, **kw: series_verdict(_series_runs(levels, experiment=e, **kw), d)
    v = judge({base: (1000, 150)}, listings={control: 1}, seen={control: 0})   # listed after the window
    assert v.reproduced, v.text
    v = judge({base: (1000, 150)}, listings={control: 1}, seen={control: 1})
    assert not v.reproduced and f"{control}: [1, 1, 1] in the window, 0 declared" in v.text
    v = judge({base: (1000, 150)}, seen={base: 2})
    assert not v.reproduced and f"{base}: [2, 2, 2] in the window, 3 declared" in v.text
    # the earlier version's rule, on the same runs, counts the workload's listings
    v3 = HISTORY["004-collapse-fs"][2].declaration
    v = series_verdict(_series_runs({base: (1000, 150)}, experiment=e, listings={control: 1}, seen={control: 0}), v3)
    assert not v.reproduced and "listings were not as declared" in v.text


def test_the_collapse_controls_lister_never_lists_and_every_listing_is_counted_twice():
    """004-collapse-fs v5: the controls' lister runs on the listers' period and count with --idle-intruder (so it
    never lists), and collapse-stays-under-half-counted-twice wants the declared listings both in the workload's
    count and in the window's trace: a control that lists after the window fails it, as one in the window does."""
    e = HISTORY["004-collapse-fs"][4]
    d = e.declaration
    assert (d.version, d.rejudges, d.idle_control) == (5, 0, True)
    (series,) = e.series
    base, _ = d.kernels
    control = series.control(base)
    runs = series.labelled()
    assert "--idle-intruder" in runs[control].extra and "--idle-intruder" not in runs[base].extra
    assert runs[control].intruder_period_us == runs[base].intruder_period_us == d.intruder_period_us
    assert not {s.id for s in e.specs()} & {s.id for s in HISTORY["004-collapse-fs"][2].specs()}
    judge = lambda levels, **kw: series_verdict(_series_runs(levels, experiment=e, **kw), d)
    assert judge({base: (1000, 150)}).reproduced
    v = judge({base: (1000, 150)}, listings={control: 1}, seen={control: 0})   # listed after the window
    assert not v.reproduced and "the listings the workload made were not as declared" in v.text
    v = judge({base: (1000, 150)}, seen={control: 1})   # the workload says none, the trace one in the window
    assert not v.reproduced and f"{control}: [1, 1, 1] in the window, 0 declared" in v.text


def test_a_rule_only_version_records_no_runs(monkeypatch, tmp_path):
    """`cohtb seeds --launch` under a version that rejudges refuses when any of the runs it judges is missing:
    runs added after the earlier version's were seen would change that verdict's run set."""
    from cohtb.commands import seeds as seeds_command

    e = EXPERIMENTS["003"]
    monkeypatch.setattr(seeds_command, "kept", lambda specs, dirs: ([], [specs[0].id]))
    args = SimpleNamespace(launch=True, runs=str(tmp_path), jobs=1, timeout=60, dask=None, insecure=False)
    with pytest.raises(CohtbError, match="judges 003v4's runs again and records none; 1 of them"):
        seeds_command.one_seed(e.seed, args, [tmp_path])


def test_a_rule_only_version_may_change_the_rule_alone(tmp_path, monkeypatch):
    from cohtb.experiments import declarations

    text = seed_folders.declaration_file("004-collapse-fs").read_text()
    monkeypatch.setattr(seed_folders, "SEEDS", tmp_path)
    (tmp_path / "004").mkdir()
    head, _, tail = text.partition("version = 4\n")
    (tmp_path / "004" / "004-collapse-fs.toml").write_text(head + "version = 4\n" + tail.replace("window_us = 3000",
                                                                                         "window_us = 2900", 1))
    with pytest.raises(CohtbError, match="version 4: field 'rejudges': 'window_us' differs from version 3's"):
        declarations.versions("004-collapse-fs")
    (tmp_path / "004" / "004-collapse-fs.toml").write_text(text.replace("rejudges = 3", "rejudges = 4"))
    with pytest.raises(CohtbError, match="field 'rejudges': must name an earlier declared version"):
        declarations.versions("004-collapse-fs")


def test_the_full_system_collapse_must_stay_under_half_in_every_late_interval_after_listings_that_happened():
    """collapse-stays-under-half (004-collapse-fs v2 and v3): collapse-half-lasting's conditions, and: every run made
    the declared listings (controls none); stock-6.12 was not already collapsed before the first listing (its
    level under half the wait kernel's); no interval of its last quarter back at half its level or more."""
    e = HISTORY["004-collapse-fs"][2]
    assert e.declaration.collapse_rule == "collapse-stays-under-half"
    base, new = e.declaration.kernels
    (series,) = e.series
    control = series.control(base)
    judge = lambda levels, **kw: series_verdict(_series_runs(levels, experiment=e, **kw), e.declaration)
    v = judge({base: (1000, 150)})
    assert v.reproduced and f"{base}: last quarter 0.15" in v.text
    v = judge({base: (1000, 150)}, blips={base: 0.6})   # the mean of the last quarter stays under half; one does not
    assert not v.reproduced and "in every interval of the last quarter" in v.text
    v = judge({base: (400, 100)})   # a quarter of its level, but its level is under half the wait kernel's
    assert not v.reproduced and "not testable" in v.text and "collapsed before it" in v.text
    v = judge({base: (1000, 150)}, listings={base: 2})
    assert not v.reproduced and f"{base}: [2, 2, 2] made, 3 declared" in v.text
    v = judge({base: (1000, 150)}, listings={control: 1})
    assert not v.reproduced and "listings were not as declared" in v.text
    v = judge({base: (1000, 150), control: (1000, 300)})
    assert not v.reproduced and "falls without the listings too" in v.text
    v = judge({base: (1000, 150), new: (1000, 400)})
    assert not v.reproduced and f"{new} collapses too" in v.text


def test_seed_000s_shape_is_judged_per_curve_none_on_one_socket_level_from_4_to_8():
    """level-from-4: each path's points together; one socket within the minimum effect, gains at 4 and 8 beyond
    the spread, the 8-socket speed-up within LEVEL of the 4-socket one; 2 sockets only reported."""
    e = HISTORY["000-fs"][0]   # version 1 is judged by it
    d = e.declaration

    def curves(speedups: dict[int, float]):
        res = []
        for p in e.points:
            x = speedups[p.base.sockets]
            res.append(SimpleNamespace(point=p, complete=True, ratio=Ratio(x, x * 0.97, x * 1.03)))
        return curve_verdicts(res, d)

    shaped = curves({1: 1.0, 2: 4.0, 4: 1.5, 8: 1.6})
    assert set(shaped) == {p.curve for p in e.points} and all(v.reproduced for v in shaped.values())
    assert "8's speed-up 1.07x 4's" in next(iter(shaped.values())).text
    v = next(iter(curves({1: 1.3, 2: 1.5, 4: 1.5, 8: 1.6}).values()))
    assert not v.reproduced and "one socket changes beyond 10%" in v.text
    v = next(iter(curves({1: 1.0, 2: 1.5, 4: 1.05, 8: 1.6}).values()))
    assert not v.reproduced and "at 4 sockets" in v.text
    v = next(iter(curves({1: 1.0, 2: 1.5, 4: 1.5, 8: 2.5}).values()))
    assert not v.reproduced and "not level from 4 to 8" in v.text


def test_seed_000s_shape_in_logs_calls_a_small_gain_that_triples_not_level():
    """level-from-4-in-logs (000-fs v2 on): level-from-4 with ln r8 / ln r4 within LEVEL. +12% at 4 sockets then
    +38% at 8 passes the plain ratio (1.23) but not the logs (2.8); the published 8-node series (+434%, +546%)
    passes both; a pass says the magnitude is not judged."""
    e = EXPERIMENTS["000-fs"]
    d = e.declaration
    assert d.rule == "level-from-4-in-logs"

    def curve(speedups: dict[int, float], declaration=d):
        res = [SimpleNamespace(point=p, complete=True, ratio=Ratio(*(3 * [speedups[p.base.sockets]])))
               for p in e.points]
        return next(iter(curve_verdicts(res, declaration).values()))

    small_tripled = {1: 1.0, 2: 1.05, 4: 1.12, 8: 1.38}
    assert curve(small_tripled, HISTORY["000-fs"][0].declaration).reproduced   # the old rule's blind spot
    v = curve(small_tripled)
    assert not v.reproduced and "8's log speed-up 2.84x 4's" in v.text
    v = curve({1: 1.0, 2: 3.0, 4: 5.34, 8: 6.46})
    assert v.reproduced and v.text.startswith("yes in shape (the magnitude is not judged)")
    assert not curve({1: 1.2, 2: 3.0, 4: 5.34, 8: 6.46}).reproduced
    assert not curve({1: 1.0, 2: 3.0, 4: 1.05, 8: 1.5}).reproduced


def test_a_shape_rules_page_rows_and_disagreements_are_its_curves():
    """Under level-from-4 the verdict rows are one per curve, and the disagreements name the curves that fail, not
    every point (a point's own verdict is 'judged with its curve')."""
    from cohtb.experiments.judging import SeedResult
    from cohtb.report.results import disagreement, verdict_rows

    e = EXPERIMENTS["000-fs"]
    speedups = {"stat(2) of one file": {1: 1.0, 2: 3.0, 4: 1.5, 8: 1.6}}
    points = [SimpleNamespace(point=p, complete=True,
                              ratio=Ratio(*(3 * [speedups.get(p.curve, {1: 1.3, 2: 1.5, 4: 1.5, 8: 1.6})[p.base.sockets]])))
              for p in e.points]
    res = SeedResult(e, points, [], [])
    rows = verdict_rows(res)
    assert [r[0].split(", ")[-1] for r in rows] == [f"{c} (shape over the sockets)" for c in
                                                    dict.fromkeys(p.curve for p in e.points)]
    assert rows[0][-1].startswith("yes") and rows[1][-1].startswith("no: one socket changes")
    [line] = disagreement(res)
    assert line.startswith("open+close of each thread's own file in a watched directory: no: one socket")


@pytest.mark.parametrize("damage, error", [
    ({"intruder_period_us": 0}, "field 'intruder_listings' needs an 'intruder_period_us'"),
    ({"intruder_period_us": 550}, "field 'intruder_period_us': the first listing must come at least one interval"),
    ({"intruder_listings": 4}, "field 'intruder_listings': the last listing must come before the window's last"),
    ({"intruder_listings": "3"}, "field 'intruder_listings': Input should be a valid integer"),
    ({"interval_us": 0}, "field 'interval_us' out of range"),
])
def test_a_collapse_declaration_whose_listings_cannot_be_judged_is_refused(damage, error):
    """The collapse rule measures the level before the first listing and what lasts after the last: a declaration
    whose listings leave either out is refused, naming the field."""
    path = seed_folders.declaration_file("004-collapse-fs")
    raw = {**tomllib.loads(path.read_text())["version"][0], **damage}
    with pytest.raises(CohtbError, match=re.escape(error)):
        declarations._declaration(path, "004-collapse-fs", raw)


@pytest.mark.parametrize("damage, error", [
    ({"profile_counterparts": {"_raw_spin_lock": []}}, "field 'profile_counterparts' is not a table of function names"),
    ({"profile_counterparts": {"_raw_spin_lock": "queued_spin_lock_slowpath"}}, "field 'profile_counterparts' is not a"),
    ({"profile_counterparts": {"lockref_get": ["lockref_get"]}},
     "field 'profile_counterparts': 'lockref_get' is not one of the profile_functions"),
])
def test_a_profile_band_whose_counterparts_name_no_declared_function_is_refused(damage, error):
    path = seed_folders.declaration_file("000-fs-o3")
    raw = {**tomllib.loads(path.read_text())["version"][0], **damage}
    with pytest.raises(CohtbError, match=re.escape(error)):
        declarations._declaration(path, "000-fs-o3", raw)


def test_a_declared_subset_of_seed_000s_paths_records_those_alone_and_an_unknown_path_is_refused():
    from cohtb.experiments.seeds import BUILDERS

    e = EXPERIMENTS["000-fs-o3"]
    assert [(p.curve, p.base.sockets) for p in e.points] == [("stat(2) of one file", 8)]
    assert {p.curve for p in EXPERIMENTS["000-fs"].points} == {"stat(2) of one file",
                                                                "open+close of each thread's own file in a watched directory"}
    d = replace(e.declaration, fs_paths=("stat", "readdir"))
    with pytest.raises(CohtbError, match=re.escape("000-fs-o3.toml: version 1: field 'fs_paths': unknown path 'readdir'")):
        BUILDERS["000-fs-o3"](d)


def test_disagreement_lists_a_reproduced_change_called_out_by_its_rule():
    """A change reproduced in sign but 5.7x the published one (sign-2x) is a disagreement the page states; the old
    test of the verdict text ('differs') never matched one."""
    from cohtb.experiments.judging import SeedResult
    from cohtb.report.results import disagreement

    e = HISTORY["001"][0]
    point = e.points[0]
    res = SimpleNamespace(point=point, complete=True, ratio=Ratio(3.44, 3.19, 3.82), base_seconds_per_op=None)
    lines = disagreement(SeedResult(e, [res], [], []))
    assert len(lines) == 1 and "5.7x the published one" in lines[0]


def test_a_run_is_recorded_only_under_a_committed_declaration(tmp_path, monkeypatch):
    """launch records the declaration (id, digest, commit) in each run's manifest, and refuses one with changes
    that are not committed: declare, commit, then run."""
    import subprocess

    from cohtb.experiments.declarations import record as declaration_record

    rec = declaration_record(EXPERIMENTS["003"].declaration.id)
    assert rec["id"] == EXPERIMENTS["003"].declaration.id and rec["digest"] == EXPERIMENTS["003"].declaration.digest() and len(rec["commit"]) == 40
    repo = tmp_path / "repo"
    declared = repo / "cohtb" / "experiments" / "seed_data"
    (declared / "003").mkdir(parents=True)
    (declared / "003" / "003.toml").write_text(seed_folders.declaration_file("003").read_text())
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "d"],
                   check=True)
    monkeypatch.setattr(seed_folders, "SEEDS", declared)
    assert declaration_record(EXPERIMENTS["003"].declaration.id)["commit"]
    (declared / "003" / "003.toml").write_text((declared / "003" / "003.toml").read_text().replace("min_effect = 0.10", "min_effect = 0.05"))
    with pytest.raises(CohtbError, match="not committed"):
        declaration_record(EXPERIMENTS["003"].declaration.id)


# What a verdict depends on besides the runs and the code (reference-runs/verdicts.json pins every verdict the code
# gives; tests/test_results.py fails when one changes): the rules' thresholds, every reconstructed declaration, and
# every rule-only version (no run records its digest). A change here re-judges old runs: add a declaration version
# (and a method-change row) instead of editing one in place.
THRESHOLDS = {"NULL_EFFECT": 0.05, "RATIO_FACTOR": 2.0, "COLLAPSED": 1.25, "RECOVERED": 0.9, "COLLAPSED_TO": 0.5,
              "LEVEL": 1.25}
RECONSTRUCTED_PINS = {"000v1": "a913f15f9608b6f3", "000v2": "385ce324ed1b6ecb", "001v1": "850e999114d9123c",
                      "002v1": "3f263dcce682fc4a", "003v1": "4d454e28f7c34753", "004v1": "33826232ab37230b",
                      "004v2": "493295bc8b377003", "004-fsv1": "8a720de593e85b92", "004-fsv2": "83823a358ab224a5"}
REJUDGING_PINS = {"004-collapse-fsv4": "a6149686bccfaf1b", "000v6": "30742105c2551308", "003v5": "0ef02a3d203ba881",
                  "003v6": "7f3fed6729ed23e9"}


def test_declarations_without_runs_recording_them_are_pinned():
    from cohtb.experiments import rules

    assert {k: getattr(rules, k) for k in THRESHOLDS} == THRESHOLDS
    reconstructed = {e.declaration.id: e.declaration.digest() for h in HISTORY.values() for e in h
                     if e.declaration.reconstructed}
    assert reconstructed == RECONSTRUCTED_PINS
    rejudging = {e.declaration.id: e.declaration.digest() for h in HISTORY.values() for e in h if e.declaration.rejudges}
    assert rejudging == REJUDGING_PINS


def test_declarations_name_known_rules_and_every_change_has_a_row():
    """Every declaration names a rule, series rule and magnitude that exist; every step from one version to the
    next has a method-change row whose versions exist and whose commits are in the history."""
    import subprocess

    from cohtb.experiments import method_changes, rules

    for h in HISTORY.values():
        for e in h:
            d = e.declaration
            assert (d.rule in {**rules.POINT_RULES, **rules.SHAPE_RULES} if e.points else d.rule == "none"), d.id
            assert d.magnitude in ("none", "dilution", "direct"), d.id
            assert (d.collapse_rule in rules.SERIES_RULES) == bool(e.series), d.id
    changes = method_changes.load()
    steps = {(c.experiment, c.before, c.after) for c in changes}
    for seed, h in HISTORY.items():
        for k in range(2, len(h) + 1):
            assert (seed, k - 1, k) in steps, (seed, k)
    for c in changes:
        assert c.experiment == "all" or 0 <= c.before < c.after <= len(HISTORY[c.experiment]), c
        for commit in c.commit.split(", "):
            subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], check=True, cwd=Path(__file__).parent)


def test_every_change_of_a_runs_input_has_a_row_that_names_it():
    """Between two declarations whose runs are all kept, an input whose digest changed in the manifests (workload binary, gem5
    build, kernel, machine) is named by the rows of the steps between them, and no row names one that did not."""
    from cohtb.experiments import method_changes

    rows: dict[tuple[str, int, int], set[str]] = {}
    for c in method_changes.load():
        rows.setdefault((c.experiment, c.before, c.after), set()).update(c.inputs)
    for seed, h in HISTORY.items():
        kept_before = None
        for e in h:
            if e.declaration.rejudges:
                continue
            runs = [json.loads((REFERENCE_RUNS / s.id / "manifest.json").read_text()) for s in e.specs()
                    if (REFERENCE_RUNS / s.id / "manifest.json").exists()]
            if len(runs) < len(e.specs()):   # none, or some: an arm not recorded yet would look like a change
                continue
            if kept_before:
                named = set().union(*(rows.get((seed, k, k + 1), set()) for k in range(kept_before[0],
                                                                                    e.declaration.version)))
                assert named == set(method_changes.changed_inputs(kept_before[1], runs)), (seed, e.declaration.id)
            kept_before = (e.declaration.version, runs)


def test_a_declared_machine_names_the_runs_machine_file_and_wiring():
    """The socket-machine versions run the calibrated machine file, wired as its declared name says per socket count;
    the flat versions keep the flat machine and the complete wiring (so their run ids did not change)."""
    wiring = {s.sockets: (s.machine, s.topology) for s in HISTORY["000"][3].specs()}
    assert wiring == {8: ("westmere-ex-8s-c2", "glueless-8s"), 4: ("westmere-ex-8s-c2", "glueless-8s-nodes0-3"),
                      2: ("westmere-ex-8s-c2", ""), 1: ("westmere-ex-8s-c2", "")}
    assert {(s.machine, s.topology) for s in HISTORY["000"][2].specs()} == {("flat", "")}
    assert {(s.sockets, s.cores_per_socket) for s in HISTORY["004"][3].specs()} == {(1, 20)}


@pytest.mark.parametrize("damage, error", [
    (lambda d: d["declared_as"].update(x={"about": "a", "wiring": {}}), r"field 'declared_as.x.wiring': unknown"),
    (lambda d: d["declared_as"].update(x={"about": "a", "topologies": {"eight": "glueless-8s"}}),
     r"field 'declared_as.x.topologies': keys are socket counts"),
    (lambda d: d["declared_as"].update(x={"about": "a", "topologies": {"4": "glueless-8s"}}),
     r"field 'declared_as.x.topologies': 'glueless-8s' does not wire 4 sockets"),
    (lambda d: d["declared_as"].update(x={"topologies": {}}), r"field 'declared_as.x.about': missing"),
    (lambda d: d["declared_as"].update({"se-mesi-two-level": {"about": "a"}}),
     r"field 'declared_as.se-mesi-two-level': also declared by machine 'flat'"),
])
def test_a_damaged_declared_machine_is_refused_naming_the_file_and_field(tmp_path, monkeypatch, damage, error):
    for f in machines.FILES.glob("*.json"):
        (tmp_path / f.name).write_text(f.read_text())
    doc = json.loads((tmp_path / "westmere-ex-8s-c3.json").read_text())
    damage(doc)
    (tmp_path / "westmere-ex-8s-c3.json").write_text(json.dumps(doc, indent=1) + "\n")
    monkeypatch.setattr(machines.machine_file, "DIRECTORY", tmp_path)
    with pytest.raises(CohtbError, match=error) as e:
        declarations.simulated_machine("fs-chi-c3-glueless")
    assert "westmere-ex-8s-c3.json" in str(e.value) and "\n" not in str(e.value)


def test_a_declaration_naming_no_declared_machine_is_refused():
    with pytest.raises(CohtbError, match="machine 'nowhere': no machine file declares it"):
        declarations.simulated_machine("nowhere")


@pytest.mark.parametrize("damage, error", [
    (lambda d: d["figures"][0].pop("base"), r"field 'figures.0.base': Field required"),
    (lambda d: d.pop("subject"), r"field 'subject': Field required"),
    (lambda d: d["figures"][0].update(quote=None), r"field 'figures.0.quote': "),
    (lambda d: d["figures"][0].update(base="1.5"), r"field 'figures.0.base': "),
    (lambda d: d.update(figure=[]), r"field 'figure': Extra inputs are not permitted"),
    (lambda d: d["figures"][0].update(seed="003"), r"field 'figures.0.seed': Unexpected keyword argument"),
    (lambda d: d["figures"][0].update(source="mine"), r"field 'figures.0.source': not the file's to give"),
    (lambda d: d["figures"][0].pop("quote"), r"field 'figures.0.quote': Field required"),
    (None, r"not valid JSON"),
])
def test_a_damaged_published_file_is_refused_naming_the_file_and_field(tmp_path, monkeypatch, damage, error):
    """Each seed's published figures (seed_data/<seed>/published.json): a field missing or of another type, or a
    file that is not JSON, is one line naming the file, never a traceback."""
    for path in seed_folders.SEEDS.glob("*/published.json"):
        (tmp_path / path.parent.name).mkdir()
        (tmp_path / path.parent.name / path.name).write_text(path.read_text())
    target = tmp_path / "003" / "published.json"
    if damage is None:
        target.write_text(target.read_text()[:100])
    else:
        doc = json.loads(target.read_text())
        damage(doc)
        target.write_text(json.dumps(doc))
    monkeypatch.setattr(seed_folders, "SEEDS", tmp_path)
    with pytest.raises(CohtbError, match=error) as e:
        published.load()
    assert str(target) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("damage, error", [(lambda x: x.update(share="0.78"), r"field 'shares.0.share': "),
                                           (lambda x: x.update(seed="004"), r"field 'shares.0.seed': not the file's"),
                                           (lambda x: x.pop("kind"), r"field 'shares.0.kind': Field required")])
def test_a_damaged_published_share_is_refused_naming_the_file_and_field(tmp_path, monkeypatch, damage, error):
    for path in seed_folders.SEEDS.glob("*/published.json"):
        (tmp_path / path.parent.name).mkdir()
        (tmp_path / path.parent.name / path.name).write_text(path.read_text())
    target = tmp_path / "000" / "published.json"
    doc = json.loads(target.read_text())
    damage(doc["shares"][0])
    target.write_text(json.dumps(doc))
    monkeypatch.setattr(seed_folders, "SEEDS", tmp_path)
    with pytest.raises(CohtbError, match=error) as e:
        published.load_shares()
    assert str(target) in str(e.value) and "\n" not in str(e.value)


def test_a_declared_field_of_the_wrong_type_is_refused_naming_it(tmp_path, monkeypatch):
    text = seed_folders.declaration_file("003").read_text().replace("repetitions = 5", 'repetitions = "5"')
    (tmp_path / "003").mkdir()
    (tmp_path / "003" / "003.toml").write_text(text)
    monkeypatch.setattr(seed_folders, "SEEDS", tmp_path)
    with pytest.raises(CohtbError, match=r"003.toml: version 2: field 'repetitions': Input should be a valid integer"):
        declarations.versions("003")


def test_seeds_launch_asks_for_the_build_of_the_experiments_own_machine(tmp_path):
    """A seed whose current declaration has runs to record on a socket machine: without GEM5_CHI the launch says
    so, in one line, whatever GEM5 is."""
    seed = seed_with_runs_to_record("socket")
    if seed is None:
        pytest.skip("every socket-machine declaration has all its runs kept")
    env = {k: v for k, v in os.environ.items() if k not in ("GEM5", "GEM5_CHI")}
    env["GEM5"] = sys.executable   # an executable: the flat machine's build would be found
    proc = subprocess.run([sys.executable, "-m", "cohtb.cli", "seeds", "--seed", seed, "--launch", "--runs",
                           str(tmp_path / "runs")], capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "GEM5_CHI" in proc.stderr and "socket machine" in proc.stderr


@pytest.mark.parametrize("damage, error", [
    (lambda t: t.replace("before = 1\n", 'before = "1"\n', 1), r"field 'change.1.before': Input should be a valid integer"),
    (lambda t: t.replace("reason = ", "why = ", 1), r"field 'change.0.reason': Field required"),
    (lambda t: t + "[[change]\n", r"not valid TOML"),
])
def test_a_damaged_method_changes_file_is_one_line_naming_the_field(tmp_path, damage, error):
    bad = tmp_path / "method_changes.toml"
    bad.write_text(damage(method_changes.DATA.read_text()))
    with pytest.raises(CohtbError, match=error) as e:
        method_changes.load(bad)
    assert str(bad) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("damage, error", [
    (lambda t: t.replace("max_size = 192", 'max_size = "192"'), r"field 'advice.0.max_size': "),
    (lambda t: t.replace('kernel = "pre611"\n', ""), r"field 'advice.0.kernel': Field required"),
    (lambda t: t.replace("seed_patch", "patch_of_the_seed"), r"field 'advice.0.patch_of_the_seed': Extra inputs"),
])
def test_a_damaged_advice_file_is_one_line_naming_the_field(tmp_path, monkeypatch, damage, error):
    for path in seed_folders.SEEDS.glob("*/published.json"):
        (tmp_path / path.parent.name).mkdir()
    target = tmp_path / "004" / "advice.toml"
    target.write_text(damage((seed_folders.SEEDS / "004" / "advice.toml").read_text()))
    monkeypatch.setattr(seed_folders, "SEEDS", tmp_path)
    with pytest.raises(CohtbError, match=error) as e:
        advice.declared()
    assert str(target) in str(e.value) and "\n" not in str(e.value)
