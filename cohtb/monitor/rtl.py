"""The Verilated monitor in this process: the emitted Verilog and native/replay/monitor_lib.cpp built into a
shared library (once per variant and host CPU, cached in build/replay/), driven through ctypes.

Events go in as the event file's own records (a NumPy array, no copy); the CSR space is configured and read
back over the AXI4-Lite port at the addresses of the variant's monitor.json, as a driver of the real
hardware would.
"""

from __future__ import annotations

import ctypes
import fcntl
import hashlib
import platform
import subprocess
import time
from pathlib import Path

import numpy as np

from cohtb.errors import CohtbError
from cohtb.monitor import csr
from cohtb.monitor.config import MonitorConfig, variant as load_variant
from cohtb.monitor.counters import Counters
from cohtb.toolchain import ROOT, monitor_dir, verilator_env
from cohtb.trace.events import RECORD

LIB_SRC = ROOT / "native" / "replay" / "monitor_lib.cpp"
CONTRACT_H = ROOT / "native" / "include" / "cohtb_contract.h"


def library_path(variant: str = "default") -> Path:
    return ROOT / "build" / "replay" / variant / "libcohtb_monitor.so"


def host_cpu() -> str:
    """What -march=native compiles for: a library built on another CPU may use instructions this one lacks."""
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.machine()
    return platform.machine() + "".join(sorted({l for l in lines if l.startswith(("model name", "flags", "Features"))}))


def build_library(variant: str = "default", quiet: bool = True) -> Path:
    """Verilate the emitted monitor with the library source; rebuilt when either, the flags or the host CPU change."""
    rtl = monitor_dir(variant)
    sources = [rtl / n for n in (rtl / "filelist.f").read_text().split()]
    out = library_path(variant)
    # -DSYNTHESIS: the RTL self-checks (SelfCheck.scala) stay out of replay, as out of synthesis; cocotb runs them.
    # -march=native: built on the machine that runs it (about 10% more events/s here); -fPIC for a shared object.
    cflags = f"-O3 -march=native -fPIC -I{CONTRACT_H.parent}"
    cmd = ["verilator", "--cc", "--exe", "--build", "-j", "2", "-O3", "--x-assign", "fast", "--x-initial", "fast",
           "--noassert", "-DSYNTHESIS", "-Wno-fatal", "-Wno-lint", "--top-module", "CoherenceMonitor", "-Mdir", str(out.parent / "obj"),
           "-o", str(out), "-CFLAGS", cflags, "-LDFLAGS", "-shared -Wl,-Bsymbolic", *map(str, sources), str(LIB_SRC)]
    inputs = b"".join(p.read_bytes() for p in sources + [LIB_SRC, CONTRACT_H])
    # The command's paths relative to the checkout: another checkout (a worktree whose build/ is this one's) with the
    # same sources finds the library built, instead of building it again over this one's.
    digest = hashlib.sha256(inputs + " ".join(cmd).replace(str(ROOT), "").encode() + host_cpu().encode()).hexdigest()
    stamp = out.parent / "sources.sha256"
    if out.exists() and stamp.exists() and stamp.read_text() == digest:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    # One build at a time on this machine: a large monitor's C++ takes gigabytes per compiler, so parallel replays
    # that each need a new variant would run out of memory together; a process that waited finds it built.
    with open(out.parent.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if out.exists() and stamp.exists() and stamp.read_text() == digest:
            return out
        env = verilator_env()
        env["MAKEFLAGS"] += " OPT_FAST=-O3 OPT_SLOW=-O1 OPT_GLOBAL=-O2"
        proc = subprocess.run(cmd, env=env, capture_output=quiet, text=True)
        if proc.returncode != 0:
            raise CohtbError(f"building the Verilated monitor ({variant}) failed:\n" + (proc.stderr or "")[-3000:])
        stamp.write_text(digest)
    return out


_libs: dict[str, ctypes.CDLL] = {}


def _library(variant: str) -> ctypes.CDLL:
    if variant not in _libs:
        lib = ctypes.CDLL(str(build_library(variant)))
        lib.cohtb_monitor_new.restype = ctypes.c_void_p
        lib.cohtb_monitor_free.argtypes = [ctypes.c_void_p]
        lib.cohtb_monitor_write.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint32]
        lib.cohtb_monitor_read.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]
        lib.cohtb_monitor_stream.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64]
        lib.cohtb_monitor_drain.argtypes = [ctypes.c_void_p]
        lib.cohtb_monitor_cycles.argtypes = [ctypes.c_void_p]
        lib.cohtb_monitor_cycles.restype = ctypes.c_uint64
        if lib.cohtb_record_size() != RECORD.itemsize:
            raise CohtbError(f"{library_path(variant)}: record size {lib.cohtb_record_size()}, the package's is "
                             f"{RECORD.itemsize} (rebuild: make setup)")
        _libs[variant] = lib
    return _libs[variant]


_ANSWERS = {1: "answered SLVERR", 2: "got no handshake"}


class VerilatedMonitor:
    """One freshly reset monitor of a variant."""

    def __init__(self, variant: str = "default", cfg: MonitorConfig | None = None):
        self.variant = variant
        self.cfg = cfg or load_variant(variant)
        self.lib = _library(variant)
        self.handle = self.lib.cohtb_monitor_new()
        if not self.handle:
            raise CohtbError("out of memory creating the Verilated monitor")
        self.drain()

    def close(self) -> None:
        if self.handle:
            self.lib.cohtb_monitor_free(self.handle)
            self.handle = None

    def __enter__(self) -> "VerilatedMonitor":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ CSR port
    def write32(self, addr: int, value: int) -> None:
        rc = self.lib.cohtb_monitor_write(self.handle, addr, value & 0xFFFFFFFF)
        if rc:
            raise CohtbError(f"CSR write {addr:#06x} {_ANSWERS[rc]}")

    def read32(self, addr: int) -> int:
        word = ctypes.c_uint32()
        rc = self.lib.cohtb_monitor_read(self.handle, addr, ctypes.byref(word))
        if rc:
            raise CohtbError(f"CSR read {addr:#06x} {_ANSWERS[rc]}")
        return word.value

    def csr(self, op: csr.Op):
        """A CSR operation (cohtb/monitor/csr.py) through this port."""
        return csr.run(op, self.read32, self.write32)

    # ------------------------------------------------------------------ driver
    def set_ctrl(self, enable: bool = True, tap: bool = False) -> None:
        self.csr(csr.set_ctrl(self.cfg.regmap, enable, tap))

    def set_regions(self, regions: list[tuple[int, int]]) -> None:
        """(base, mask) line-address pairs into regions 0..n-1, and enable exactly those."""
        rm = self.cfg.regmap
        if len(regions) > len(rm.region_base):
            raise CohtbError(f"{len(regions)} regions asked for, the monitor has {len(rm.region_base)}")
        self.write32(rm.region_enable, 0)
        for r, (base, mask) in enumerate(regions):
            self.csr(csr.set_region(rm, r, base, mask))

    def stream(self, recs: np.ndarray) -> None:
        recs = np.ascontiguousarray(recs, dtype=RECORD)
        if self.lib.cohtb_monitor_stream(self.handle, recs.ctypes.data, len(recs)):
            raise CohtbError("the monitor stopped taking events (paused in flow mode?)")

    def drain(self) -> None:
        if self.lib.cohtb_monitor_drain(self.handle):
            raise CohtbError("the monitor stayed busy")

    @property
    def cycles(self) -> int:
        return self.lib.cohtb_monitor_cycles(self.handle)

    def snapshot(self) -> Counters:
        """CMD.snapshot, then every counter read back."""
        return self.csr(csr.snapshot(self.cfg))


def replay(recs: np.ndarray, regions: list[tuple[int, int]], variant: str = "default",
           repeat: int = 1) -> tuple[Counters, dict]:
    """Counters of a stream through a fresh monitor, and how fast it went (events, cycles, seconds)."""
    with VerilatedMonitor(variant) as mon:
        mon.set_regions(regions)
        c0 = mon.cycles
        t0 = time.perf_counter()
        for _ in range(repeat):
            mon.stream(recs)
        mon.drain()
        seconds = time.perf_counter() - t0
        perf = {"events": len(recs) * repeat, "cycles": mon.cycles - c0, "seconds": round(seconds, 6),
                "eventsPerSecond": round(len(recs) * repeat / seconds, 1) if seconds > 0 else 0.0}
        return mon.snapshot(), perf
