"""FPGA readiness of the emitted monitor: Yosys synthesis to Xilinx 7-series primitives (an estimate; the
real place-and-route flow, on a Lattice ECP5, is cohtb/fpga/ecp5.py).

Fails on simulation-only constructs outside `ifndef SYNTHESIS` guards and on any inferred latch;
reports LUTs, flip-flops, carry chains and distributed/block RAM cells.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.toolchain import find_tool, monitor_dir

SIM_ONLY = re.compile(r"(\$(display|write|fwrite|fatal|finish|stop|random|urandom|readmem[hb])\b|^\s*initial\b|#\s*\d|\bforce\b|\brelease\b)")


def sources(variant: str) -> list[Path]:
    d = monitor_dir(variant)
    return [d / n for n in (d / "filelist.f").read_text().split()]


def simulation_only_constructs(path: Path) -> list[str]:
    """Lines with simulation-only constructs that a synthesis run would see (outside `ifndef SYNTHESIS`)."""
    found, stack = [], []  # stack of "is this branch hidden from synthesis"
    for n, line in enumerate(path.read_text().splitlines(), 1):
        s = line.strip()
        if s.startswith("`ifndef"):
            stack.append(s.split()[1] == "SYNTHESIS")
        elif s.startswith("`ifdef"):
            stack.append(False)
        elif s.startswith("`else") and stack:
            stack[-1] = not stack[-1] if stack[-1] else False
        elif s.startswith("`endif") and stack:
            stack.pop()
        elif not any(stack) and not s.startswith("//") and SIM_ONLY.search(line):
            found.append(f"{path.name}:{n}: {s}")
    return found


def checked_sources(variant: str) -> list[Path]:
    """The emitted RTL of a variant, refused if a synthesis run would see a simulation-only construct."""
    files = sources(variant)
    bad = [hit for f in files for hit in simulation_only_constructs(f)]
    if bad:
        raise CohtbError("simulation-only constructs in synthesizable RTL:\n  " + "\n  ".join(bad[:20]))
    return files


# The line table's RAMs (rtl/src/cohtb/LineTable.scala): Yosys makes the register after each one's read (s1Read)
# the block RAM's own, so the RAM reads a set in S0's clock; when the RAM writes that set in the same clock, the
# row read is never used, S3 takes that write (w4) from its forwarding registers. Marked no_rw_check (a read/write
# collision returns don't-care), they map without the logic that would make a block RAM return the old row
# (emulate_read_first: a mux after the RAM's late output and a delayed write). Marked by their modules' names,
# before flattening (flattening first changed Yosys' mapping: 720 LUT4s more on the same RTL), and found in the log
# by their instances' (monitor.lineTable.wayRams_0_ext.Memory). The counter bank's rows (CounterBank.scala) likewise:
# the RAM write of their clock is w1's, which the CSR read takes from w1 itself and the increment's read from w4.
COLLISION_DONT_CARE = ("wayRams_", "replRam_", "rows_")


def read_rtl(files: list[Path], top: str = "CoherenceMonitor") -> list[str]:
    """The Yosys commands that read the emitted RTL, mark the RAMs whose collisions are don't-care and refuse
    latches."""
    return [
        "read_verilog -sv -DSYNTHESIS " + " ".join(str(f) for f in files),
        f"hierarchy -check -top {top}",
        "proc",
        "setattr -set no_rw_check 1 " + " ".join(f"{m}*/m:*" for m in COLLISION_DONT_CARE),
        # A latch here means a combinational path that does not assign on every branch.
        "select -assert-none t:$dlatch t:$adlatch t:$dlatchsr t:$_DLATCH_*",
    ]


def collision_ports_checked(log: str) -> list[str]:
    """The read ports of the marked RAMs whose register Yosys did not take as the RAM's output register: there
    the read would happen in another clock than the one whose RAM write the RTL forwards. Yosys's memory_dff says
    per port which register it merged."""
    bad, seen = [], set()
    for m in re.finditer(r"Checking read port `\\(\S+)'\[(\d+)\][^:]*: (.*)", log):
        memory, port, what = m.groups()
        for name in COLLISION_DONT_CARE:
            if name in memory:
                seen.add(name)
                if "output FF" not in what:
                    bad.append(f"{memory}[{port}]: {what.strip()}")
    return bad + [f"no read port of {name}* in the log" for name in COLLISION_DONT_CARE if name not in seen]


def require_forwarded_collisions(log: Path) -> None:
    """Stop a synthesis whose log shows a marked RAM's collision that the RTL would not forward."""
    refused = collision_ports_checked(log.read_text())
    if refused:
        raise CohtbError(f"{log}: Yosys did not make the register after the read of a RAM marked no_rw_check its "
                         "output register, so a collision there would not be forwarded: " + "; ".join(refused))


def yosys_cells(stat: str) -> dict[str, int]:
    """Cell counts from Yosys' `stat` output (the flattened top's table)."""
    cells: Counter = Counter()
    for line in stat.splitlines():
        m = re.match(r"\s+([A-Z][A-Z0-9_]+)\s+(\d+)$", line)
        if m:
            cells[m.group(1)] += int(m.group(2))
    return dict(cells)


@dataclass
class SynthReport:
    cells: dict[str, int]
    seconds: float

    @property
    def luts(self) -> int:
        return sum(v for k, v in self.cells.items() if re.fullmatch(r"LUT\d", k))

    @property
    def flip_flops(self) -> int:
        return sum(v for k, v in self.cells.items() if re.fullmatch(r"FD[A-Z]*", k))

    @property
    def rams(self) -> dict[str, int]:
        return {k: v for k, v in self.cells.items() if k.startswith("RAM")}

    def summary(self) -> str:
        total = sum(self.cells.values())
        rams = ", ".join(f"{v} {k}" for k, v in sorted(self.rams.items())) or "none"
        return (f"cells {total}, LUTs {self.luts}, flip-flops {self.flip_flops}, "
                f"CARRY4 {self.cells.get('CARRY4', 0)}, RAM {rams}, latches 0 ({self.seconds:.0f} s)")


def synthesize(variant: str = "default", log: Path | None = None) -> SynthReport:
    import time

    yosys = find_tool("yosys")
    if yosys is None:
        raise CohtbError("yosys not found (the set-up installs Debian's yosys: make setup)")
    files = checked_sources(variant)
    script = "\n".join([
        *read_rtl(files),
        "synth_xilinx -top CoherenceMonitor -flatten -noiopad -family xc7",
        "select -assert-none t:LD* t:$_DLATCH_*",
        "tee -o {stat} stat",
    ])
    with tempfile.TemporaryDirectory() as tmp:
        stat = Path(tmp) / "stat.txt"
        ys = Path(tmp) / "synth.ys"
        ys.write_text(script.replace("{stat}", str(stat)))
        t0 = time.monotonic()
        log = log or Path(tmp) / "yosys.log"
        proc = subprocess.run([yosys, "-q", "-l", str(log), str(ys)], capture_output=True, text=True)
        if proc.returncode != 0:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-15:]
            raise CohtbError("yosys synthesis failed:\n  " + "\n  ".join(tail))
        require_forwarded_collisions(log)
        cells = yosys_cells(stat.read_text())
    return SynthReport(cells, time.monotonic() - t0)
