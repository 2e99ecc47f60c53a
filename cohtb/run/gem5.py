"""gem5 itself: finding it (the GEM5 environment variable, the path of a gem5.opt, else gem5.opt on PATH) and
its command line, the same for every run and boot (each config adds its own arguments)."""

from __future__ import annotations

import functools
import mmap
import os
import shutil
import subprocess
from pathlib import Path

from cohtb.digest import file_sha256
from cohtb.errors import CohtbError
from cohtb.places import ROOT
from cohtb.run.machines import PROTOCOL_OF, gem5_patches, hierarchy_of

# hierarchy -> (the environment variable naming its gem5.opt, the name looked for on PATH, what it must be). Each
# hierarchy needs gem5 built with its protocol (gem5-configs/multisocket/machine.py; docs/gem5.md says how), and
# a machine is found by its hierarchy (cohtb/run/machines.py).
BUILDS = {
    "flat": ("GEM5", "gem5.opt", "gem5 v24.0.0.1, X86 build (build/X86/gem5.opt, protocol MESI_Two_Level)"),
    **{h: ("GEM5_CHI", None, "gem5 v24.0.0.1 built for X86 with the CHI protocol (build-gem5.sh SOURCE X86_CHI)")
       for h in ("socket", "mesh")},
}
# The project's patches to gem5 (gem5-configs/build/patches/<name>.patch, each documented in its header), each
# with what a build that has it shows: a file of the build tree, relative to gem5.opt's directory, and a string in
# it. The binary itself where the patch adds a string (a debug message), so an older binary is not taken for a
# patched one; SLICC's generated code for a protocol patch, which adds none.
PATCHES = ROOT / "gem5-configs" / "build" / "patches"
PATCH_MARKERS = {"chi-locked-rmw": ("mem/ruby/protocol/Cache_Wakeup.cc", "(*m_snpRdy_ptr).delayHead"),
                 "x86-sti-shadow": ("gem5.opt", "In the STI interrupt shadow")}
# Patches that add a way to look at a run, not a change to what it simulates: build-gem5.sh applies them to every
# build, whatever its machine, and the machine check leaves them out. pc-profile: PcProfile, the window's profile
# (cohtb/run/pc_profile.py), which every full-system run records. The patches a machine's build must have are its
# machine file's `gem5_patches` (cohtb/run/machines.py).
INSTRUMENTS = {"pc-profile": "PcProfile: cannot write"}   # name -> a string the binary has when built with it
TRACE = "trace.gz"   # ProtocolTrace, in gem5's output directory (gzip: gem5 compresses a .gz debug file itself)


def _build(machine: str) -> tuple[str, str | None, str]:
    return BUILDS[hierarchy_of(machine)]


def find(machine: str = "flat") -> Path | None:
    """The gem5.opt of this machine: its environment variable's file, else (the flat machine) gem5.opt on PATH."""
    variable, on_path, _ = _build(machine)
    env = os.environ.get(variable)
    if env:
        return Path(env) if Path(env).is_file() and os.access(env, os.X_OK) else None
    found = shutil.which(on_path) if on_path else None
    return Path(found) if found else None


def why_missing(machine: str = "flat") -> str:
    variable, on_path, wanted = _build(machine)
    env = os.environ.get(variable)
    if env:
        return f"{variable}={env} is not an executable file; it must name {wanted}"
    where = f"set {variable} to the path of a gem5.opt" + (f", or put {on_path} on PATH" if on_path else "")
    return f"gem5 for the {hierarchy_of(machine)} machine not found: {where} ({wanted}; no package registry ships gem5, build it " \
           "from its source: docs/gem5.md)"


def patches_in(gem5: Path) -> set[str] | None:
    """The project's patches a CHI build has, read from the build tree beside its gem5.opt; None when there is
    no build tree there (a binary copied elsewhere)."""
    tree = Path(gem5).resolve().parent
    found = set()
    for name, (marked_file, marker) in PATCH_MARKERS.items():
        try:
            text = (tree / marked_file).read_bytes()
        except OSError:
            return None
        if marker.encode() in text:
            found.add(name)
    return found


@functools.cache
def _has(path: str, size: int, mtime_ns: int, marker: bytes) -> bool:
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return m.find(marker) >= 0


def has_profile(gem5: Path) -> bool:
    """Whether this gem5 was built with the pc-profile patch (read once per process and file version)."""
    st = Path(gem5).stat()
    return _has(str(Path(gem5).resolve()), st.st_size, st.st_mtime_ns, INSTRUMENTS["pc-profile"].encode())


def _chi(machine: str) -> bool:
    """Whether the machine runs on a CHI build, the only builds the project patches."""
    return PROTOCOL_OF[hierarchy_of(machine)] == "CHI"


def patches_needed(machine: str) -> set[str]:
    return set(gem5_patches(machine)) if _chi(machine) else set()


def require(machine: str = "flat") -> Path:
    """The machine's gem5.opt; a CHI build whose patches are not the machine's is refused, so a run never names a
    machine it did not run on (a binary without its build tree passes only for a stock machine)."""
    path = find(machine)
    if path is None:
        raise CohtbError(why_missing(machine))
    if _chi(machine):
        needed, have = patches_needed(machine), patches_in(path)
        if have is None and needed:
            raise CohtbError(f"{path}: no build tree beside it, so cohtb cannot tell whether it has the patches "
                             f"machine {machine} needs ({', '.join(sorted(needed))}; docs/gem5.md)")
        if have is not None and have != needed:
            raise CohtbError(f"{path}: built with patches [{', '.join(sorted(have))}], machine {machine} needs "
                             f"[{', '.join(sorted(needed))}] (docs/gem5.md: build each machine's gem5)")
    return path


def unusable(machine: str = "flat") -> str | None:
    """Why this machine's gem5 cannot run here (require's refusal, one line), or None: a test's reason to skip."""
    try:
        require(machine)
    except CohtbError as e:
        return str(e)
    return None


def reap(proc: subprocess.Popen) -> float | None:
    """gem5's CPU seconds (user + system) once it has exited, its exit status then in proc.returncode; None while
    it runs. Cost tables want CPU time: the wall time also counts whatever else shared the host's cores."""
    pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
    if pid == 0:
        return None
    proc.returncode = os.waitstatus_to_exitcode(status)
    return round(usage.ru_utime + usage.ru_stime, 2)


def command(gem5: Path, run_dir: Path, config: Path, args: list[str], trace: str | None = TRACE) -> list[str]:
    """gem5 running `config` with `args`, its own files in run_dir/gem5 (-re: stdout and stderr there too), the
    trace into run_dir/gem5/<trace> (a name, /dev/null, or None: no debug file)."""
    return [str(gem5), "-re", f"--outdir={run_dir / 'gem5'}", *([f"--debug-file={trace}"] if trace else []),
            str(config), *args]


@functools.cache
def _digest(path: str, size: int, mtime_ns: int) -> str:
    return file_sha256(Path(path))[:16]


def identity(path: Path) -> str:
    """Which gem5 build this is: a digest of the binary (computed once per process and file version). Workers of a
    cluster must run the client's build."""
    st = Path(path).stat()
    return _digest(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
