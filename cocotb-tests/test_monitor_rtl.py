"""pytest entry points of the RTL verification (cocotb 2 Python runner; Verilator and Icarus)."""

from __future__ import annotations

import json

import pytest

from conftest import COVERAGE_DIR

VARIANTS = ["default", "small", "lru"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_directed_verilator(rtl_sim, variant):
    rtl_sim("verilator", variant).run("tb_directed")


@pytest.mark.parametrize("variant", VARIANTS)
def test_directed_icarus(rtl_sim, variant):
    rtl_sim("icarus", variant).run("tb_directed")


@pytest.mark.parametrize("sim", ["verilator", "icarus"])
@pytest.mark.parametrize("variant", VARIANTS)
def test_counting_rule_table(rtl_sim, sim, variant):
    """The counting rules (cohtb/monitor/counting_rules.toml), row by row."""
    rtl_sim(sim, variant).run("tb_rules")


# Seeds are fixed so every failure reproduces: COHTB_SEED=<seed> with the same variant.
RANDOM_PLAN = {
    # simulator: (seeds, events per seed)
    "verilator": ([11, 12, 13], 40_000),
    "icarus": ([21], 6_000),
}


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("sim", ["verilator", "icarus"])
def test_random_differential(rtl_sim, sim, variant, coverage_report):
    seeds, events = RANDOM_PLAN[sim]
    for seed in seeds:
        out = COVERAGE_DIR / f"{sim}-{variant}-{seed}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.unlink(missing_ok=True)
        rtl_sim(sim, variant).run("tb_random", extra_env={
            "COHTB_SEED": str(seed), "COHTB_EVENTS": str(events), "COHTB_CHECK_EVERY": "10000",
            "COHTB_COVERAGE_OUT": str(out)})
        coverage_report.add(variant, json.loads(out.read_text()), events)
    if sim == "verilator":
        missing = coverage_report.missing(variant)
        assert not missing, f"{variant}: kind x line-state bins never hit: {missing}"


# The CSR port under traffic (tb_csr_traffic): every variant on Verilator, the default one on Icarus.
# About 35 s in all on 2 idle cores once the simulators are built (70 s with the machine loaded).
CSR_TRAFFIC_PLAN = [("verilator", "default", 41), ("verilator", "small", 42), ("verilator", "lru", 43),
                    ("icarus", "default", 44)]


@pytest.mark.parametrize("sim, variant, seed", CSR_TRAFFIC_PLAN)
def test_csr_under_traffic(rtl_sim, sim, variant, seed):
    """Snapshot, read-and-clear and clear-state over AXI4-Lite while events flow (COHTB_SEED=<seed> reproduces);
    coverage: each command must have landed with an event in the pipeline."""
    out = COVERAGE_DIR / f"csr-{sim}-{variant}-{seed}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.unlink(missing_ok=True)
    rtl_sim(sim, variant).run("tb_csr_traffic", extra_env={"COHTB_SEED": str(seed), "COHTB_COVERAGE_OUT": str(out)})
    bins = json.loads(out.read_text()) if out.exists() else {}
    missing = [b for b in ("snapshot", "read-and-clear", "clear-state") if not bins.get(f"CSR/{b}-under-traffic")]
    assert not missing, f"{sim}/{variant}: CSR commands never landed under traffic: {missing} (bins: {bins})"
