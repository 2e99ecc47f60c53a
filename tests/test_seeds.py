"""The seed experiments and the rule that calls a comparison a reproduction, on hand-made numbers."""

import os
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from cohtb.experiments.published import Published
from cohtb.experiments.reproduce import Ratio, Spread, collapse_verdict, point_results, series_result, verdict
from cohtb.experiments.seeds import E004, EXPERIMENTS, REPETITIONS
from cohtb.sim.plans import RunSpec

PLUS_55 = Published("20-way stat", 5038006, 7842883, "ops/s", True)


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


@pytest.mark.skipif(not os.environ.get("COHTB_SEED_MESSAGES"),
                    reason="COHTB_SEED_MESSAGES (a folder of the seeds' messages as text, <seed>_*.txt) is not set")
def test_quotes_are_the_messages_own_lines():
    """With the messages at hand: every quoted line is a line of its message (white space folded)."""
    folder = Path(os.environ["COHTB_SEED_MESSAGES"])
    for pub in every_published():
        message = next(folder.glob(f"{pub.source.seed}_*.txt")).read_text()
        lines = {" ".join(line.split()) for line in message.splitlines()}
        assert set(pub.quote) <= lines, (pub.source.seed, pub.configuration, set(pub.quote) - lines)


def test_every_experiment_is_valid_runs_repeated_with_seeds():
    for e in EXPERIMENTS.values():
        specs = e.specs()
        assert len({s.id for s in specs}) == len(specs)
        for s in specs:
            s.validate()
            assert s.timed and 1 <= s.seed <= REPETITIONS
        groups = {}
        for s in specs:
            groups.setdefault(s.repetition_of, []).append(s.seed)
        assert all(sorted(v) == list(range(1, REPETITIONS + 1)) for v in groups.values())
    ticket = [p for p in EXPERIMENTS["000"].points if "ticket" in p.base.extra]
    assert sorted(p.base.sockets for p in ticket) == [1, 2, 4, 8]   # 3.10's lock at every size
    assert all(p.base.extra == p.new.extra for p in EXPERIMENTS["000"].points)   # only the policy changes
    assert {(p.base.policy, p.new.policy) for p in EXPERIMENTS["000"].points} == {("locked", "cmpxchg")}
    assert {(p.base.layout, p.new.layout) for p in E004.points} == {("shared", "split")}


def fake_run(spec: RunSpec, throughput: float = 1.0, totals: list[int] | None = None):
    """What reproduce needs of a run: spec, throughput and, for a series, the workload's intervals."""
    w = SimpleNamespace(measure=SimpleNamespace(mode="window", interval_ns=spec.interval_us * 1000),
                        intervals=SimpleNamespace(total=totals or [], min=[], max=[]))
    return SimpleNamespace(spec=spec, throughput=throughput, manifest=SimpleNamespace(workload=w))


def test_points_pair_repetitions_by_configuration():
    p = E004.points[0]
    runs = [fake_run(RunSpec(**{**p.base.__dict__, "seed": k}), 5.0 + k) for k in (1, 2, 3)]
    runs += [fake_run(RunSpec(**{**p.new.__dict__, "seed": k}), 8.0 + k) for k in (1, 2, 3)]
    (res,) = point_results(E004.points, runs)
    assert res.complete and res.base_throughput.values == (6.0, 7.0, 8.0)
    assert res.ratio.lo == pytest.approx(9 / 8) and res.ratio.hi == pytest.approx(11 / 6)
    (partial,) = point_results(E004.points, runs[:1] + runs[3:4])   # one repetition each: no spread, no verdict
    assert not partial.complete


def _series_runs(levels: dict[str, tuple[float, float]], recover_at: int | None = None):
    """Each policy's ops per interval: `early` before the transient holder, `low` from it on (back to `early`
    from interval `recover_at`, if given); repetitions 1-3 scaled by 1.01-1.03."""
    (series,) = E004.series
    runs = []
    for t in series.runs:
        early, low = levels.get(t.policy, (1000, 1000))
        n = t.window_us // t.interval_us
        at = int(series.event_at_us // t.interval_us)
        for k in (1, 2, 3):
            totals = [int((low if at <= i < (recover_at or n) else early) * (1 + k / 100)) for i in range(n)]
            runs.append(fake_run(RunSpec(**{**t.__dict__, "seed": k}), totals=totals))
    return series_result(series, runs)


def test_collapse_is_reproduced_when_only_retry100_falls():
    res = _series_runs({"retry100": (1000, 50), "trywait": (1000, 950), "unified": (1000, 990)})
    assert res.trough("retry100").mean == pytest.approx(0.05, abs=0.01)
    v = collapse_verdict(res)
    assert v.reproduced and "retry100 falls to 0.05 of its level and stays there" in v.text


def test_a_collapse_that_recovers_is_said_to():
    res = _series_runs({"retry100": (1000, 50), "trywait": (1000, 950), "unified": (1000, 990)}, recover_at=8)
    v = collapse_verdict(res)
    assert v.reproduced and "then recovers (last quarter 1.00; the published collapse lasted)" in v.text


@pytest.mark.parametrize("levels, why", [
    ({"retry100": (1000, 50), "trywait": (1000, 950), "unified": (1000, 150)}, "unified fall too"),
    ({"retry100": (1000, 1000)}, "retry100's lowest interval is 1.00"),
    ({"retry100": (1000, 600)}, "retry100's lowest interval is 0.60"),
])
def test_collapse_is_not_reproduced(levels, why):
    v = collapse_verdict(_series_runs(levels))
    assert not v.reproduced and why in v.text


def test_the_locked_policy_is_a_reference_not_judged():
    v = collapse_verdict(_series_runs({"retry100": (1000, 50), "locked": (100, 10)}))
    assert v.reproduced and "locked" not in v.text


def test_a_series_with_missing_repetitions_has_no_verdict():
    res = _series_runs({"retry100": (1000, 50)})
    res.runs["trywait"] = res.runs["trywait"][:2]
    assert collapse_verdict(res).text == "no: runs missing"
