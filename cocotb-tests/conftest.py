"""Builds the emitted monitor Verilog once per (simulator, variant) and runs cocotb modules on it."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from cohtb import toolchain

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
RTL = ROOT / "build" / "rtl"
SIM_BUILD = ROOT / "build" / "sim"


def sources(variant: str) -> list[Path]:
    d = RTL / variant
    if not (d / "filelist.f").exists():
        pytest.fail(f"{d}/filelist.f missing: run `make rtl` (the set-up emits the monitor Verilog)")
    return [d / name.strip() for name in (d / "filelist.f").read_text().split() if name.strip()]


class RtlSim:
    """One built simulator for one variant."""

    def __init__(self, sim: str, variant: str):
        from cocotb_tools.runner import get_runner

        self.sim, self.variant = sim, variant
        self.build_dir = SIM_BUILD / f"{sim}-{variant}"
        if sim == "verilator":
            os.environ.update(toolchain.verilator_env())
        self.runner = get_runner(sim)
        build_args = ["-Wno-fatal", "-Wno-WIDTHEXPAND", "-Wno-WIDTHTRUNC", "-O2"] if sim == "verilator" else []
        self.runner.build(sources=sources(variant), hdl_toplevel="CoherenceMonitor", build_dir=self.build_dir,
                          build_args=build_args, timescale=("1ns", "1ps"), always=False)

    def run(self, module: str, extra_env: dict[str, str] | None = None, testcase: str | None = None) -> None:
        env = {"COHTB_MONITOR_JSON": str(RTL / self.variant / "monitor.json"),
               "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT)])}
        env.update(extra_env or {})
        results = self.runner.test(hdl_toplevel="CoherenceMonitor", test_module=module, build_dir=self.build_dir,
                                   test_dir=self.build_dir, extra_env=env, testcase=testcase,
                                   results_xml=str(self.build_dir / f"results-{module}.xml"))
        failures = []
        for case in ET.parse(results).getroot().iter("testcase"):
            if list(case.iter("skipped")):
                SKIPPED.append(f"{module}.{case.get('name')} on {self.sim}/{self.variant}")
            for bad in list(case.iter("failure")) + list(case.iter("error")):
                failures.append(f"{case.get('name')}: {(bad.get('message') or bad.text or '').strip()[:400]}")
        if not list(ET.parse(results).getroot().iter("testcase")):
            pytest.fail(f"{module} on {self.sim}/{self.variant}: no cocotb test ran")
        assert not failures, f"{module} on {self.sim}/{self.variant}:\n" + "\n".join(failures)


_sims: dict[tuple[str, str], RtlSim] = {}
# cocotb tests a variant skips (their decorators say why: a parameter the scenario needs), listed after the run so
# that a skip is never invisible.
SKIPPED: list[str] = []


@pytest.fixture(scope="session")
def rtl_sim():
    def get(sim: str, variant: str) -> RtlSim:
        key = (sim, variant)
        if key not in _sims:
            _sims[key] = RtlSim(sim, variant)
        return _sims[key]

    return get


COVERAGE_DIR = ROOT / "build" / "coverage"


def _bins() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The coverage bins: every kind that changes line state (the contract's) x every line state."""
    from cohtb.contract import STATE_KINDS
    from cohtb.monitor.models import LINE_STATES

    return tuple(k.name for k in STATE_KINDS), LINE_STATES


def structural_bins(variant: str) -> tuple[str, ...]:
    """The structural bins a variant's random streams must hit (cohtb.monitor.models.STRUCTURAL_BINS): saturation
    only where counters are narrow enough for a random stream to fill one."""
    import json

    from cohtb.monitor.models import STRUCTURAL_BINS

    width = json.loads((RTL / variant / "monitor.json").read_text())["params"]["counterWidth"]
    return tuple(b for b in STRUCTURAL_BINS if b != "saturation" or width <= 12)


class CoverageReport:
    """Functional coverage of event kind x line state (as the model saw it before each event), for every kind
    that changes line state (READ, WRITE, EVICT)."""

    def __init__(self) -> None:
        self.bins: dict[str, dict[str, int]] = {}
        self.events: dict[str, int] = {}

    def add(self, variant: str, bins: dict[str, int], events: int) -> None:
        mine = self.bins.setdefault(variant, {})
        for k, n in bins.items():
            mine[k] = mine.get(k, 0) + n
        self.events[variant] = self.events.get(variant, 0) + events

    def missing(self, variant: str) -> list[str]:
        kinds, states = _bins()
        have = self.bins.get(variant, {})
        missing = [f"{k}/{s}" for k in kinds for s in states if not have.get(f"{k}/{s}")]
        return missing + [f"EVENT/{b}" for b in structural_bins(variant) if not have.get(f"EVENT/{b}")]

    def table(self) -> str:
        kinds, states = _bins()
        lines = []
        for variant, bins in sorted(self.bins.items()):
            lines.append(f"coverage, variant {variant} ({self.events[variant]} random events): kind x line state")
            lines.append(f"  {'state':24s}" + "".join(f"{k:>9s}" for k in kinds))
            for s in states:
                lines.append(f"  {s:24s}" + "".join(f"{bins.get(f'{k}/{s}', 0):9d}" for k in kinds))
            hit = sum(1 for k in kinds for s in states if bins.get(f"{k}/{s}"))
            lines.append(f"  bins hit: {hit}/{len(kinds) * len(states)}")
            need = structural_bins(variant)
            lines.append("  structural: " + ", ".join(f"{b} {bins.get(f'EVENT/{b}', 0)}" for b in need))
        return "\n".join(lines)


_coverage = CoverageReport()


@pytest.fixture(scope="session")
def coverage_report() -> CoverageReport:
    return _coverage


def pytest_terminal_summary(terminalreporter) -> None:
    if SKIPPED:
        terminalreporter.write_sep("-", f"cocotb tests skipped for a variant's parameters ({len(SKIPPED)})")
        for line in SKIPPED:
            terminalreporter.write_line("  " + line)
    if _coverage.bins:
        text = _coverage.table()
        terminalreporter.write_sep("-", "functional coverage (RTL random differential tests)")
        terminalreporter.write_line(text)
        COVERAGE_DIR.mkdir(parents=True, exist_ok=True)
        (COVERAGE_DIR / "report.txt").write_text(text + "\n")
