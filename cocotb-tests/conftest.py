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
            for bad in list(case.iter("failure")) + list(case.iter("error")):
                failures.append(f"{case.get('name')}: {(bad.get('message') or bad.text or '').strip()[:400]}")
        if not list(ET.parse(results).getroot().iter("testcase")):
            pytest.fail(f"{module} on {self.sim}/{self.variant}: no cocotb test ran")
        assert not failures, f"{module} on {self.sim}/{self.variant}:\n" + "\n".join(failures)


_sims: dict[tuple[str, str], RtlSim] = {}


@pytest.fixture(scope="session")
def rtl_sim():
    def get(sim: str, variant: str) -> RtlSim:
        key = (sim, variant)
        if key not in _sims:
            _sims[key] = RtlSim(sim, variant)
        return _sims[key]

    return get
