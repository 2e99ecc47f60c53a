"""Replay: a run's event file through the Verilated monitor (native C++ harness) and/or the model.

Both give the same counter structure (BoundedModel.snapshot()'s shape), so a run can be checked
bit for bit: `cohtb replay RUN --check`.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import events as ev
from .errors import CohtbError
from .model import BoundedModel
from .monitor_config import MonitorConfig, load
from .toolchain import ROOT, monitor_dir, verilator_env

HARNESS_SRC = ROOT / "native" / "replay" / "replay_main.cpp"


@dataclass(frozen=True)
class Region:
    """One programmable address region (line-address base/mask) and the field it stands for."""

    index: int
    name: str
    base: int
    mask: int


def harness_path(variant: str = "default") -> Path:
    return ROOT / "build" / "replay" / variant / "cohtb-replay"


def build_harness(variant: str = "default", quiet: bool = True) -> Path:
    """Verilate the emitted monitor with the replay harness; rebuilt when either changes."""
    rtl = monitor_dir(variant)
    sources = [rtl / n for n in (rtl / "filelist.f").read_text().split()]
    out = harness_path(variant)
    # -march=native: the harness is built on the machine that runs it (about 10% more events/s here).
    cmd = ["verilator", "--cc", "--exe", "--build", "-j", "2", "-O3", "--x-assign", "fast", "--x-initial", "fast",
           "--noassert", "-Wno-fatal", "-Wno-lint", "--top-module", "CoherenceMonitor", "-Mdir", str(out.parent / "obj"),
           "-o", str(out), "-CFLAGS", "-O3 -march=native", *map(str, sources), str(HARNESS_SRC)]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources + [HARNESS_SRC]) + " ".join(cmd).encode()).hexdigest()
    stamp = out.parent / "sources.sha256"
    if out.exists() and stamp.exists() and stamp.read_text() == digest:
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    env = verilator_env()
    env["MAKEFLAGS"] += " OPT_FAST=-O3 OPT_SLOW=-O1 OPT_GLOBAL=-O2"
    proc = subprocess.run(cmd, env=env, capture_output=quiet, text=True)
    if proc.returncode != 0:
        raise CohtbError("building the replay harness failed:\n" + (proc.stderr or "")[-3000:])
    stamp.write_text(digest)
    return out


def check_fits(header: ev.Header, cfg: MonitorConfig, where: str) -> None:
    """An event file from a larger system than the monitor was built for cannot be replayed honestly."""
    p = cfg.params
    if header.num_cores > p.cores or header.num_sockets > p.sockets:
        raise CohtbError(f"{where}: events from {header.num_cores} cores / {header.num_sockets} sockets, "
                         f"but the monitor was built for {p.cores} cores / {p.sockets} sockets")


def counters_from_words(cfg: MonitorConfig, words: dict[int, int], status: int) -> dict:
    from .monitor_config import STATUS_DROPPED, STATUS_SATURATED
    from .model import empty_counters

    out = empty_counters(cfg.params)
    for addr, key in cfg.regmap.counter_slots():
        v = words[addr] | words[addr + 4] << 32
        target = out[key[0]]
        for k in key[1:-1]:
            target = target[k]
        target[key[-1]] = v
    out["status"] = {"saturated": bool(status & STATUS_SATURATED), "dropped": bool(status & STATUS_DROPPED)}
    return out


def replay_rtl(events_path: Path, regions: list[Region], variant: str = "default", repeat: int = 1) -> tuple[dict, dict]:
    """Counters from the Verilated monitor, and the harness's own numbers (events, cycles, seconds)."""
    cfg = load(monitor_dir(variant) / "monitor.json")
    header, _ = ev.read(events_path)
    check_fits(header, cfg, str(events_path))
    if len(regions) > cfg.params.regions:
        raise CohtbError(f"{len(regions)} regions asked for, the monitor has {cfg.params.regions}")
    exe = build_harness(variant)
    addrs = sorted({a for slot, _ in cfg.regmap.counter_slots() for a in (slot, slot + 4)})
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as lst:
        lst.write("\n".join(str(a) for a in addrs))
        lst.flush()
        cmd = [str(exe), str(events_path), "--read-list", lst.name, "--repeat", str(repeat)]
        for r in regions:
            cmd += ["--region", f"{r.index}:{r.base}:{r.mask}"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CohtbError(f"replay of {events_path} failed: {proc.stderr.strip()}")
    doc = json.loads(proc.stdout)
    words = {int(k): v for k, v in doc.pop("words").items()}
    return counters_from_words(cfg, words, doc["status"]), doc


def replay_model(events_path: Path, regions: list[Region], variant: str = "default") -> dict:
    cfg = load(monitor_dir(variant) / "monitor.json")
    header, chunks = ev.read(events_path)
    check_fits(header, cfg, str(events_path))
    model = BoundedModel(cfg.params)
    for r in regions:
        model.set_region(r.index, r.base, r.mask)
    for recs in chunks:
        model.apply_array(recs)
    return model.snapshot()
