"""A declared verdict's answers and the simulated outcomes that give each, found before any run
(cohtb/experiments/power.py); a rule that cannot give each of its answers is refused a launch."""

import random
from pathlib import Path
from dataclasses import replace

import pytest

from cohtb import cli
from cohtb.experiments import power, published
from cohtb.experiments.published import Share
from cohtb.experiments.rules import point_verdict
from cohtb.experiments.seeds import EXPERIMENTS, HISTORY


def version(seed: str, n: int):
    return next(e for e in HISTORY[seed] if e.declaration.version == n)


def test_every_current_declaration_can_give_each_of_its_answers():
    for seed, e in EXPERIMENTS.items():
        found = power.powers(e)
        assert found and not [p.lacks for p in found if p.lacks], seed


def test_the_regions_are_the_rules_own_answers():
    """Any outcome, judged by the rule itself, gets the answer of the region it falls in."""
    e = EXPERIMENTS["004"]
    [p, *_] = power.powers(e)
    point, pub = power.headline(e)
    rng = random.Random(1)
    for r in [rng.uniform(0.5, 3.0) for _ in range(200)]:
        region = next(x for x in p.regions if x.lo <= r <= x.hi)
        answer = power.answer_of(point_verdict(pub, power._point_result(point, r, e.declaration.repetitions),
                                               e.declaration).text)
        near_edge = min(abs(r - region.lo), abs(r - region.hi)) < 1e-3 * r
        assert answer == region.answer or near_edge, (r, answer, region)


def test_a_band_that_cannot_reach_the_published_figure_has_no_power():
    """000v5: with the seed's share 0.7837 the band's top is 1.1 / (1 - 0.7837) = 5.09x, under the published 6.46x."""
    [p] = power.powers(version("000", 5))
    assert p.lacks == "no simulated outcome gives yes"
    assert max(r.hi for r in p.regions if r.answer.startswith("sign only")) == pytest.approx(100)
    [direct] = power.powers(version("000", 6))   # the same runs held to the published figure directly
    [yes] = [r for r in direct.regions if r.answer.startswith("yes")]
    assert not direct.lacks and yes.lo == pytest.approx(6.456 / 1.1, rel=1e-3) and yes.hi == pytest.approx(6.456 * 1.1, rel=1e-3)


def test_a_band_whose_p_comes_from_the_runs_has_no_region_before_them():
    [p] = power.powers(version("003", 4))
    assert "taken from the runs" in p.lacks and not p.regions
    [sign] = power.powers(version("003", 5))
    assert not sign.lacks and [r.answer for r in sign.regions][-1] == "yes in sign"


def test_a_magnitude_test_passed_by_every_outcome_of_the_right_sign_has_no_power(monkeypatch):
    """A published +4% against a share of 0.104: every simulated gain past the minimum effect puts it in the band
    (003v4's test, with p declared)."""
    e = version("004", 5)
    point, pub = power.headline(e)
    small = replace(pub, new=pub.base * 1.04)
    e = replace(e, points=tuple(replace(q, published=(small,)) if q == point else q for q in e.points))
    monkeypatch.setitem(published.SHARES, "004", (Share("004", "share", "made up", (small.configuration,), "", (),
                                                         share=0.104),))
    [p] = [x for x in power.powers(e) if x.regions and x.outcome.startswith("the simulated change")]
    assert p.lacks.startswith("its magnitude test is passed by every outcome")


def test_a_series_rule_falls_from_yes_to_no_at_its_threshold():
    [p] = power.powers(EXPERIMENTS["004-collapse-fs"])
    [yes] = [r for r in p.regions if r.answer.startswith("yes")]
    assert yes.lo == 0 and yes.hi == pytest.approx(0.5, abs=1e-3)   # COLLAPSED_TO
    assert any(a.startswith("no") for _, a in p.examples)


def test_a_launch_under_a_rule_without_power_is_refused(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(EXPERIMENTS, "000", version("000", 5))
    code = cli.main(["seeds", "--seed", "000", "--launch", "--runs", str(tmp_path / "runs")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "has no power" in err[0] and "no simulated outcome gives yes" in err[0]
    assert not (tmp_path / "runs").exists()


def test_seeds_prints_what_each_answer_takes(capsys):
    assert cli.main(["seeds", "--seed", "000"]) == 0
    out = capsys.readouterr().out
    assert "what its rule can say, found before any run" in out and "+486.9% to +610.1%: yes" in out


def test_launch_and_run_refuse_runs_under_a_rule_without_power_too(monkeypatch, capsys, tmp_path):
    """Every way of recording declared runs goes through the power check, not only seeds --launch."""
    fake = Path(__file__).with_name("fake_gem5.py")
    monkeypatch.setenv("GEM5", str(fake))
    monkeypatch.setenv("GEM5_CHI", str(fake))
    monkeypatch.setitem(EXPERIMENTS, "000", version("000", 5))
    code = cli.main(["launch", "--matrix", "seed000", "--runs", str(tmp_path / "runs")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "000v5's rule has no power" in err[0], err
    assert not (tmp_path / "runs").exists()
