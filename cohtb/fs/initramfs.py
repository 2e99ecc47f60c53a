"""The guest's userland, built into vmlinux as its initramfs: Debian's busybox-static, the project's /init and
its m5 tool (kernel/guest/). The benchmark is not in it: each run hands the guest a payload (a tar of run/,
the benchmark and its script), so a changed benchmark needs no new kernel and no new boot. Written as a gen_init_cpio list (the format
CONFIG_INITRAMFS_SOURCE takes), so no root and no cpio archive are needed, and the kernel build reads
copies kept in the cache under the list's digest."""

from __future__ import annotations

import io
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from cohtb.atomic import atomic_dir
from cohtb.digest import file_sha256, inputs_digest
from cohtb.errors import CohtbError
from cohtb.fs.kernel import kernel_cache
from cohtb.run.kernels import KERNEL_DIR
from cohtb.toolchain import ROOT

GUEST = KERNEL_DIR / "guest"
GUEST_BUILD = ROOT / "build" / "guest"
BUSYBOX_PATHS = (Path("/usr/bin/busybox"), Path("/bin/busybox"))
DIRS = ("/bin", "/sbin", "/dev", "/proc", "/sys", "/tmp", "/usr", "/usr/bin", "/usr/sbin")
# The workloads a run's payload can carry (built by kernel/guest/Makefile as the targets named here, each with its
# --guest flag):
# stat_file, whose objects the kernel reports; rwsem, the SE workload with the kernel's futex; kernel_rwsem,
# the kernel's own rwsem (variant rspin).
GUEST_WORKLOADS = ("stat_file", "rwsem", "kernel_rwsem")


@dataclass(frozen=True)
class Initramfs:
    list_path: Path
    digest: str
    files: dict[str, Path]   # guest path -> the cached copy


def is_static(path: Path) -> bool:
    """An ELF without a program interpreter runs with no libc in the guest."""
    r = subprocess.run(["readelf", "-l", str(path)], capture_output=True, text=True)
    return r.returncode == 0 and "INTERP" not in r.stdout


def busybox() -> Path:
    for p in BUSYBOX_PATHS:
        if p.exists() and is_static(p):
            return p
    raise CohtbError("no static busybox (install Debian's busybox-static: `make kernel` does)")


def build_guest_programs() -> dict[str, Path]:
    programs = {f"/bin/{name}": GUEST_BUILD / name for name in (*GUEST_WORKLOADS, "cohtb-m5")}
    r = subprocess.run(["make", "-s", "-C", str(GUEST), f"OUT={GUEST_BUILD}", *map(str, programs.values())],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise CohtbError(f"{GUEST}: the guest programs do not build:\n{r.stdout}{r.stderr}")
    for guest_path, p in programs.items():
        if not is_static(p):
            raise CohtbError(f"{p}: not a static binary (the initramfs has no libc)")
    return programs


def contents() -> dict[str, tuple[Path, int]]:
    """Guest path -> (host file, mode)."""
    files = {"/init": (GUEST / "init", 0o755), "/bin/busybox": (busybox(), 0o755)}
    files["/bin/cohtb-m5"] = (build_guest_programs()["/bin/cohtb-m5"], 0o755)
    return files


def payload(script: str, workload: str, into: Path) -> Path:
    """The run's payload: run/run.sh and run/<workload> in a tar (what /init unpacks after the restore)."""
    programs = build_guest_programs()
    with tarfile.open(into, "w") as tar:
        tar.add(programs[f"/bin/{workload}"], arcname=f"run/{workload}")
        data = script.encode()
        info = tarfile.TarInfo("run/run.sh")
        info.size, info.mode = len(data), 0o755
        tar.addfile(info, io.BytesIO(data))
    return into


def build() -> Initramfs:
    files = contents()
    digest = inputs_digest([(g, file_sha256(p).encode() + f" {mode:o}".encode()) for g, (p, mode) in files.items()])[:16]
    final = kernel_cache() / "initramfs" / digest
    copies = {g: final / "files" / g.lstrip("/").replace("/", "_") for g in files}
    if not (final / "initramfs.list").exists():
        with atomic_dir(final) as tmp:
            (tmp / "files").mkdir()
            lines = [f"dir {d} 0755 0 0" for d in DIRS] + ["nod /dev/console 0600 0 0 c 5 1", "nod /dev/null 0666 0 0 c 1 3",
                                                            "slink /bin/sh busybox 0777 0 0"]
            for g, (p, mode) in files.items():
                shutil.copy2(p, tmp / "files" / copies[g].name)
                lines.append(f"file {g} {copies[g]} {mode:o} 0 0")
            (tmp / "initramfs.list").write_text("\n".join(lines) + "\n")
    return Initramfs(final / "initramfs.list", digest, copies)
