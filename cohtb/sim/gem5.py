"""Finding gem5: the GEM5 environment variable (path of a gem5.opt), else gem5.opt on PATH."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.toolchain import ROOT

CONFIG = ROOT / "gem5-configs" / "cohtb_se.py"
WANTED = "gem5 v24.0.0.1, X86 build (build/X86/gem5.opt, protocol MESI_Two_Level)"


def find() -> Path | None:
    env = os.environ.get("GEM5")
    if env:
        return Path(env) if Path(env).is_file() and os.access(env, os.X_OK) else None
    found = shutil.which("gem5.opt")
    return Path(found) if found else None


def why_missing() -> str:
    env = os.environ.get("GEM5")
    if env:
        return f"GEM5={env} is not an executable file; it must name {WANTED}"
    return (f"gem5 not found: set GEM5 to the path of a gem5.opt, or put gem5.opt on PATH ({WANTED}; "
            "no package registry ships gem5, build it from its source)")


def require() -> Path:
    path = find()
    if path is None:
        raise CohtbError(why_missing())
    return path
