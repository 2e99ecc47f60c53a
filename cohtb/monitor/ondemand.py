"""A monitor sized for a trace: when the default configuration (rtl/variants.txt) is too small for a trace's cores
or sockets, the Chisel emitter builds a variant with just those two parameters changed, once, into
build/rtl/<name>/ (Mill + Chisel + firtool, about a minute); the Verilated library follows on first replay. A
variant is rebuilt when the RTL sources change."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cohtb.digest import tree_digest
from cohtb import contract as ct
from cohtb.errors import CohtbError
from cohtb.monitor.config import MonitorConfig, MonitorParams, admits, load, variant as load_variant
from cohtb.toolchain import ROOT, RTL_BUILD

CORES, SOCKETS = ct.MONITOR_LIMITS["cores"], ct.MONITOR_LIMITS["sockets"]   # the limits a built monitor has


def rtl_sources_digest() -> str:
    return tree_digest(sorted((ROOT / "rtl" / "src").rglob("*.scala")) + [ROOT / "build.sc", ROOT / ".mill-version"],
                       ROOT)


def mill() -> Path:
    m = ROOT / ".tools" / f"mill-{(ROOT / '.mill-version').read_text().strip()}"
    if not m.exists():
        raise CohtbError(f"{m}: Mill is not installed (run the set-up: make setup)")
    return m


def variant_for(cores: int, sockets: int, base: str = "default") -> str:
    """The name of a monitor variant with room for `cores` and `sockets`: `base` when it has, else one built here."""
    cfg = load_variant(base)
    if cores <= cfg.params.cores and sockets <= cfg.params.sockets:
        return base
    wanted = {"cores": cores, "sockets": sockets}
    if not all(admits(limit, wanted) for limit in (CORES, SOCKETS)):
        raise CohtbError(f"a trace of {cores} cores / {sockets} sockets: the monitor can be built for at most "
                         f"{CORES.most} cores and {SOCKETS.most} sockets")
    name = f"{base}-c{cores}s{sockets}"
    out = RTL_BUILD / name
    digest = rtl_sources_digest()
    stamp = out / "sources.sha256"
    if (out / "monitor.json").exists() and stamp.exists() and stamp.read_text() == digest:
        return name
    print(f"building a monitor for {cores} cores / {sockets} sockets ({name}: Chisel and firtool now, about a minute; "
          f"Verilator on first replay; cached in {out})", file=sys.stderr, flush=True)
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(dir=RTL_BUILD.parent, prefix=".ondemand-") as tmp:
        variants = Path(tmp) / "variants.txt"
        variants.write_text(f"{name} {_overrides(cfg, cores, sockets)}\n")
        # the Mill launcher is a shell script glued to a jar, without a #! line: run it through sh
        proc = subprocess.run(["sh", str(mill()), "--no-server", "--ticker", "false", "rtl.run", f"--out={tmp}/out",
                               f"--variants={variants}"], cwd=ROOT, capture_output=True, text=True)
        if proc.returncode != 0 or not (Path(tmp) / "out" / name / "monitor.json").exists():
            raise CohtbError(f"building the {name} monitor failed:\n" + (proc.stdout + proc.stderr)[-2000:])
        (Path(tmp) / "out" / name / "sources.sha256").write_text(digest)
        if out.exists():
            shutil.rmtree(out)
        (Path(tmp) / "out" / name).rename(out)
    print(f"  {name} emitted in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    return name


def _overrides(cfg: MonitorConfig, cores: int, sockets: int) -> str:
    """The base variant's parameters with cores and sockets replaced, as the emitter's key=value words."""
    p = cfg.params
    kv = {f: getattr(p, f) for f in MonitorParams.__dataclass_fields__}
    kv.update(cores=cores, sockets=sockets)
    return " ".join(f"{k}={v}" for k, v in kv.items())


def config_for(cores: int, sockets: int, base: str = "default") -> tuple[str, MonitorConfig]:
    name = variant_for(cores, sockets, base)
    return name, load(RTL_BUILD / name / "monitor.json")
