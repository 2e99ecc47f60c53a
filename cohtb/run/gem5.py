"""gem5 itself: finding it (the GEM5 environment variable, the path of a gem5.opt, else gem5.opt on PATH) and
its command line, the same for every run and boot (each config adds its own arguments)."""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
from pathlib import Path

from cohtb.errors import CohtbError

WANTED = "gem5 v24.0.0.1, X86 build (build/X86/gem5.opt, protocol MESI_Two_Level)"
TRACE = "trace.gz"   # ProtocolTrace, in gem5's output directory (gzip: gem5 compresses a .gz debug file itself)


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


def command(gem5: Path, run_dir: Path, config: Path, args: list[str], trace: str | None = TRACE) -> list[str]:
    """gem5 running `config` with `args`, its own files in run_dir/gem5 (-re: stdout and stderr there too), the
    trace into run_dir/gem5/<trace> (a name, /dev/null, or None: no debug file)."""
    return [str(gem5), "-re", f"--outdir={run_dir / 'gem5'}", *([f"--debug-file={trace}"] if trace else []),
            str(config), *args]


@functools.cache
def _digest(path: str, size: int, mtime_ns: int) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            h.update(block)
    return h.hexdigest()[:16]


def identity(path: Path) -> str:
    """Which gem5 build this is: a digest of the binary (computed once per process and file version). Workers of a
    cluster must run the client's build."""
    st = Path(path).stat()
    return _digest(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
