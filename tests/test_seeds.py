"""The seed experiments and the rule that calls a comparison a reproduction, on hand-made numbers."""

from types import SimpleNamespace

import pytest

from cohtb.experiments.reproduce import Ratio, Spread, collapse_verdict, point_results, series_result, verdict
from cohtb.experiments.seeds import E004, EXPERIMENTS, REPETITIONS, Published
from cohtb.sim.plans import RunSpec

PLUS_55 = Published("20-way stat", 5038006, 7842883, "ops/s", True, "004")


def test_published_ratio_is_a_speed_up_either_way():
    assert PLUS_55.ratio == pytest.approx(1.5567, abs=1e-4)
    elapsed = Published("exit", 65.29, 45.69, "s", False, "001")   # shorter elapsed time is faster
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
    (Ratio(4.0, 3.5, 4.5), True, "differs by 2.6x"),
])
def test_verdict_needs_the_sign_beyond_the_spread(sim, reproduced, says):
    v = verdict(PLUS_55, sim)
    assert v.reproduced is reproduced and says in v.text


def test_a_published_null_effect_is_reproduced_by_no_effect():
    one_node = Published("1 node", 2442998, 2352103, "JPM", True, "000")   # -3.7%: no effect
    assert verdict(one_node, Ratio(1.02, 0.97, 1.06)).reproduced
    assert verdict(one_node, Ratio(1.03, 1.01, 1.05)).reproduced           # beyond the spread, but under 5%
    v = verdict(one_node, Ratio(1.3, 1.2, 1.4))
    assert not v.reproduced and "+30%" in v.text


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
    assert sorted(p.base.sockets for p in EXPERIMENTS["000"].points) == [1, 2, 4, 8]
    assert {(p.base.policy, p.new.policy) for p in EXPERIMENTS["000"].points} == {("locked", "cmpxchg")}
    assert {(p.base.layout, p.new.layout) for p in E004.points} == {("shared", "split")}


def fake_run(spec: RunSpec, throughput: float = 1.0, totals: list[int] | None = None):
    """What reproduce needs of a run: spec, throughput and, for a series, the workload's intervals."""
    w = SimpleNamespace(measure=SimpleNamespace(mode="window", interval_ns=spec.interval_us * 1000),
                        intervals=SimpleNamespace(total=totals or []))
    return SimpleNamespace(spec=spec, throughput=throughput, manifest=SimpleNamespace(workload=w))


def test_points_pair_repetitions_by_configuration():
    p = E004.points[0]
    runs = [fake_run(RunSpec(**{**p.base.__dict__, "seed": k}), 5.0 + k) for k in (1, 2, 3)]
    runs += [fake_run(RunSpec(**{**p.new.__dict__, "seed": k}), 8.0 + k) for k in (1, 2, 3)]
    (res,) = point_results(E004.points, runs)
    assert res.complete and res.base_throughput.values == (6.0, 7.0, 8.0)
    assert res.ratio.lo == pytest.approx(9 / 8) and res.ratio.hi == pytest.approx(11 / 6)


def _series_runs(levels: dict[str, tuple[float, float]]):
    (series,) = E004.series
    runs = []
    for t in series.runs:
        early, late = levels[t.policy]
        for k in (1, 2, 3):
            n = t.window_us // t.interval_us
            totals = [int(early * (1 + k / 100)) if i < n // 2 else int(late * (1 + k / 100)) for i in range(n)]
            runs.append(fake_run(RunSpec(**{**t.__dict__, "seed": k}), totals=totals))
    return series_result(series, runs)


def test_collapse_is_reproduced_when_only_retry100_falls():
    res = _series_runs({"retry100": (1000, 200), "trywait": (1000, 950), "unified": (1000, 990)})
    assert res.falls("retry100").mean == pytest.approx(0.2, abs=0.01)
    v = collapse_verdict(res)
    assert v.reproduced and "retry100 falls to 0.20" in v.text


def test_collapse_is_not_reproduced_when_a_waiting_policy_falls_too():
    res = _series_runs({"retry100": (1000, 200), "trywait": (1000, 950), "unified": (1000, 150)})
    v = collapse_verdict(res)
    assert not v.reproduced and "unified" in v.text
    assert not collapse_verdict(_series_runs({"retry100": (1000, 1000), "trywait": (1000, 1000), "unified": (1000, 1000)})).reproduced
