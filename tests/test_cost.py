"""What runs cost before they run (cohtb/run/cost.py): a run predicted from the kept runs nearest to it, the wall
time of a set on a number of slots, and the dry runs that print both."""

from dataclasses import replace

import pytest

from cohtb import cli
from cohtb.places import REFERENCE_RUNS
from cohtb.run import cost
from cohtb.run.runs import discover
from cohtb.run.spec import RunSpec

BASE = RunSpec("lockref", "locked", "shared", 2, 2, warmup_us=50, window_us=200, interval_us=10)


def test_a_run_of_a_kept_configuration_is_its_repetitions_mean():
    kept = [cost.KeptCost(replace(BASE, seed=s, declaration="d1"), c) for s, c in ((1, 100.0), (2, 140.0))]
    kept.append(cost.KeptCost(replace(BASE, policy="retry100", seed=1), 1000.0))   # another configuration
    p = cost.predict(replace(BASE, seed=7, declaration="d2"), kept)
    assert p.seconds == 120.0 and "2 kept runs of its configuration" in p.basis


def test_a_run_whose_other_arm_was_kept_is_that_arms_mean_before_any_fit():
    """The other kernel (or policy) on the same machine, workload and size is nearer than a fit over sizes."""
    fs = replace(BASE, workload="stat_file", kernel="pre611", policy="retry100", layout="shared")
    kept = [cost.KeptCost(replace(fs, seed=s), c) for s, c in ((1, 1400.0), (2, 1500.0))]
    kept.append(cost.KeptCost(replace(fs, kernel="stock-6.12", layout="split", sockets=8), 700.0))   # another size
    p = cost.predict(replace(fs, kernel="stock-6.12", layout="split", seed=3), kept)
    assert p.seconds == 1450.0 and "2 kept runs of its configuration with another lock or layout" in p.basis


def test_a_new_configuration_is_fitted_over_the_nearest_group_by_size():
    # a fixed 10 s per run and 0.5 s per unit of size (CPUs x simulated µs)
    kept = [cost.KeptCost(replace(BASE, sockets=n, window_us=w), 10 + 0.5 * (2 * n) * (50 + w))
            for n, w in ((1, 200), (2, 200), (4, 400))]
    p = cost.predict(replace(BASE, sockets=8, window_us=1000), kept)
    assert p.seconds == pytest.approx(10 + 0.5 * 16 * 1050) and "of its workload and kernel" in p.basis
    assert p.basis.endswith("none of them ran 8x2")   # no kept run of its size
    assert "none of them" not in cost.predict(replace(BASE, sockets=4, window_us=1000), kept).basis
    fs = [cost.KeptCost(replace(k.spec, workload="stat_file", kernel="pre611"), k.seconds) for k in kept]
    assert cost.predict(replace(BASE, workload="stat_file", kernel="lockref-off", sockets=4), fs).basis.endswith(
        "fitted over 3 kept runs of its workload; none of them ran kernel lockref-off")
    # another workload on the same machine and mode: the coarsest group; another mode: none
    assert "its machine and mode" in cost.predict(replace(BASE, workload="rwsem"), kept).basis
    assert cost.predict(replace(BASE, ops=1000, warmup_us=0, window_us=0), kept).seconds is None
    assert cost.predict(replace(BASE, machine="westmere-ex-8s-c3"), kept).seconds is None   # another hierarchy
    on_c3 = [cost.KeptCost(replace(k.spec, machine="westmere-ex-8s-c3"), k.seconds) for k in kept]
    assert "its hierarchy, core and mode" in cost.predict(replace(BASE, machine="westmere-ex-8s-c4"), on_c3).basis
    # never across core models: an o3 machine has no kept run of its core
    assert cost.predict(replace(BASE, machine="westmere-ex-8s-c4-o3"), on_c3).seconds is None


def test_wall_time_puts_the_longest_runs_first_on_the_slot_free_soonest():
    assert cost.wall_seconds([30, 20, 20, 10], 2) == 40
    assert cost.wall_seconds([30, 20, 20, 10], 1) == 80
    assert cost.wall_seconds([], 2) == 0


def test_the_bundled_runs_predict_their_own_repetitions_within_a_quarter_mostly():
    """Each bundled run predicted from the others: most within 25% of what it cost (a repetition varies)."""
    kept = cost.kept_costs(discover([REFERENCE_RUNS]))
    errors = []
    for i, k in enumerate(kept):
        p = cost.predict(k.spec, kept[:i] + kept[i + 1:])
        if "of its configuration" in p.basis:
            errors.append(abs(p.seconds / k.seconds - 1))
    assert len(errors) > 400
    assert sum(e < 0.25 for e in errors) / len(errors) > 0.75


def test_a_seed_s_dry_run_prints_each_missing_run_s_cost_and_stops(capsys, tmp_path):
    assert cli.main(["seeds", "--seed", "004-fs-8x4", "--launch", "--dry-run", "--jobs", "2",
                     "--runs", str(tmp_path / "runs")]) == 0
    out = capsys.readouterr().out
    assert "runs to record" in out and "of gem5 CPU (" in out and "of wall time on 2 slots" in out
    assert not (tmp_path / "runs").exists()
    assert cli.main(["seeds", "--seed", "004-fs-8x4", "--dry-run"]) == 2   # only with --launch
    assert "--dry-run goes with --launch" in capsys.readouterr().err
