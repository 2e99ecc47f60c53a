"""The guest kernels of full-system runs: Debian's linux-source-6.12, the project's config fragment and
patches (kernel/), and the initramfs built into vmlinux, made into one cached build per variant.

A variant is a list of patches on top of the ones every variant gets. Builds are cached under
`kernel_cache()`, keyed by everything that goes into them: the source tarball, the fragment, the
patches and the initramfs. The patched tree and the object directory of a variant are kept (keyed
without the initramfs), so a new initramfs only relinks."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pydantic import ConfigDict, NonNegativeInt, PositiveInt

from cohtb.atomic import atomic_dir, write_json_atomic
from cohtb.data_file import Record, read_json, validated
from cohtb.digest import inputs_digest
from cohtb.errors import CohtbError
from cohtb.fs import dwarf
from cohtb.places import kernel_cache
from cohtb.run.kernels import KERNEL_DIR, Variant, patch_digest, patch_path, variant, variant_dentry

FRAGMENT = KERNEL_DIR / "config-fragment"
SOURCE_TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")   # Debian's linux-source-6.12
# What the kernel's build would otherwise take from the day, the user, the host and the build count (the version
# string, and the initramfs files' times): fixed, so that two builds of the same inputs in the same place
# (kernel_cache(): DWARF keeps the tree's absolute path) with the same toolchain give the same vmlinux, and runs
# recorded in different sessions name the same kernel.
REPRODUCIBLE_BUILD = {"KBUILD_BUILD_TIMESTAMP": "1970-01-01 00:00:00 UTC", "KBUILD_BUILD_USER": "cohtb",
                      "KBUILD_BUILD_HOST": "cohtb", "KBUILD_BUILD_VERSION": "1"}


# Options the runs depend on: a build whose .config lacks one is refused (merge_config only warns).
REQUIRED = {"CONFIG_SMP": "y", "CONFIG_ARCH_USE_CMPXCHG_LOCKREF": "y", "CONFIG_TMPFS": "y", "CONFIG_SHMEM": "y",
            "CONFIG_BLK_DEV_INITRD": "y", "CONFIG_SERIAL_8250_CONSOLE": "y", "CONFIG_DEBUG_INFO": "y",
            "CONFIG_X86_MPPARSE": "y", "CONFIG_PREEMPT_NONE": "y", "CONFIG_HZ": "100", "CONFIG_SLUB_TINY": "n",
            "CONFIG_CC_OPTIMIZE_FOR_PERFORMANCE": "y", "CONFIG_INOTIFY_USER": "y", "CONFIG_PROC_PAGE_MONITOR": "y",
            "CONFIG_RWSEM_SPIN_ON_OWNER": "y"}


def source_tarball() -> Path:
    path = Path(os.environ.get("COHTB_LINUX_SOURCE", SOURCE_TARBALL))
    if not path.exists():
        raise CohtbError(f"{path}: no Linux source (install Debian's linux-source-6.12: `make kernel` does)")
    return path


def tree_key(v: Variant, tarball: Path) -> str:
    """What the patched tree and its objects are made from (not the initramfs)."""
    st = tarball.stat()
    parts = [("source", f"{tarball.name} {st.st_size} {int(st.st_mtime)}".encode()), ("fragment", FRAGMENT.read_bytes())]
    parts += [(f"patch{i}:{p}", patch_path(p).read_bytes()) for i, p in enumerate(v.all_patches())]
    return inputs_digest(parts)[:16]


def work_dir(v: Variant, tarball: Path) -> Path:
    """The variant's build directory: its patched tree (src/) and objects (out/), kept between builds."""
    return kernel_cache() / "build" / f"{v.name}-{tree_key(v, tarball)}"


def _say(msg: str) -> None:
    sys.stdout.write(f"cohtb kernel: {msg}\n")
    sys.stdout.flush()


def pristine_source(tarball: Path) -> Path:
    """The tarball, extracted once into the cache (into a temporary name, then renamed)."""
    st = tarball.stat()
    final = kernel_cache() / "src" / f"{tarball.name.split('.tar')[0]}-{st.st_size}"
    if final.exists():
        return final
    _say(f"extracting {tarball} (about a minute)")
    with atomic_dir(final) as tmp:
        subprocess.run(["tar", "-xf", str(tarball), "-C", str(tmp), "--strip-components=1"], check=True)
    return final


def patched_tree(v: Variant, tarball: Path, into: Path) -> None:
    """A hard-linked copy of the pristine tree with the variant's patches applied (patch writes new
    files, so the pristine tree's links are never written through)."""
    with atomic_dir(into) as tmp:
        shutil.rmtree(tmp)
        subprocess.run(["cp", "-al", str(pristine_source(tarball)), str(tmp)], check=True)
        for p in v.all_patches():
            r = subprocess.run(["patch", "-p1", "-s", "-N", "-i", str(patch_path(p))], cwd=tmp, capture_output=True,
                               text=True)
            if r.returncode != 0:
                raise CohtbError(f"{patch_path(p)}: does not apply to {tarball.name}: {r.stdout.strip() or r.stderr.strip()}")


def read_config(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        m = re.match(r"(CONFIG_\w+)=(.*)", line)
        if m:
            out[m.group(1)] = m.group(2).strip('"')
        m = re.match(r"# (CONFIG_\w+) is not set", line)
        if m:
            out[m.group(1)] = "n"
    return out


def _make(args: list[str], cwd: Path, log, what: str) -> None:
    """Runs make, its output to the log; prints a progress line every 30 s (the compile count)."""
    proc = subprocess.Popen(["make", *args], cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, **REPRODUCIBLE_BUILD})
    compiled, last = 0, time.monotonic()
    assert proc.stdout is not None
    for line in proc.stdout:
        log.write(line)
        if line.lstrip().startswith(("CC ", "AS ", "LD ")):
            compiled += 1
        if time.monotonic() - last > 30:
            _say(f"{what}: {compiled} objects so far")
            last = time.monotonic()
    if proc.wait() != 0:
        log.flush()
        raise CohtbError(f"kernel {what} failed (make {' '.join(args)}); see {log.name}")


def configure(src: Path, out: Path, initramfs_list: Path, log) -> dict[str, str]:
    """tinyconfig + the fragment + the initramfs source, checked against REQUIRED."""
    # The list is copied to a fixed path: a new initramfs then changes no option (which would rebuild
    # everything) and only relinks.
    fixed_list = out / "cohtb-initramfs.list"
    shutil.copyfile(initramfs_list, fixed_list)
    fragment = out / "cohtb.fragment"
    fragment.write_text(FRAGMENT.read_text() + f'\nCONFIG_INITRAMFS_SOURCE="{fixed_list}"\n')
    _make([f"O={out}", "tinyconfig"], src, log, "tinyconfig")
    r = subprocess.run([str(src / "scripts/kconfig/merge_config.sh"), "-m", "-O", str(out), str(out / ".config"),
                        str(fragment)], cwd=src, capture_output=True, text=True)
    log.write(r.stdout + r.stderr)
    if r.returncode != 0:
        raise CohtbError(f"merge_config.sh failed; see {log.name}")
    _make([f"O={out}", "olddefconfig"], src, log, "olddefconfig")
    config = read_config(out / ".config")
    wrong = {k: config.get(k, "unset") for k, want in REQUIRED.items() if config.get(k, "n") != want}
    if wrong:
        raise CohtbError(f"{FRAGMENT}: the built .config lacks {', '.join(f'{k}={REQUIRED[k]} (is {v})' for k, v in wrong.items())}")
    return config


@dataclass(frozen=True)
class Built:
    variant: Variant
    dir: Path

    @property
    def vmlinux(self) -> Path:
        return self.dir / "vmlinux"

    @property
    def layout(self) -> dict:
        """The built kernel's structs by DWARF (dwarf.dentry_layout): name -> size and fields."""
        path = self.dir / "layout.json"
        doc = read_json(path)
        validated(dict[str, _Struct], doc, path)   # a damaged cache file: one line naming its field
        return doc

    @property
    def inputs(self) -> dict:
        """What the kernel was built from (the manifest keeps it): variant, patches, tree, initramfs, config."""
        path = self.dir / "inputs.json"
        doc = read_json(path)
        validated(_Inputs, doc, path)
        return doc


class _Field(Record):
    name: str
    offset: NonNegativeInt
    size: NonNegativeInt   # 0: a flexible array member


class _Struct(Record):
    size: PositiveInt
    fields: tuple[_Field, ...]


class _Inputs(Record):
    model_config = ConfigDict(extra="allow", frozen=True, strict=True)   # more may follow; these are read
    variant: str
    patches: tuple[str, ...]


def build(name: str, initramfs_list: Path, initramfs_digest: str, jobs: int | None = None) -> Built:
    """The variant's vmlinux with this initramfs, from the cache or built (minutes the first time)."""

    v = variant(name)
    dentry = variant_dentry(v)   # refuses a dcache.h patch missing from RECORDED_DENTRIES
    if (dentry.d_lockref_offset, dentry.size) != (v.d_lockref_offset, v.dentry_size):
        raise CohtbError(f"kernel variant {v.name} promises d_lockref at {v.d_lockref_offset} and {v.dentry_size} "
                         f"bytes, its patches make {dentry.name} ({dentry.d_lockref_offset}, {dentry.size})")
    tarball = source_tarball()
    key = tree_key(v, tarball)
    inputs = [("tree", key.encode()), ("initramfs", initramfs_digest.encode()),
              ("build environment", json.dumps(REPRODUCIBLE_BUILD, sort_keys=True).encode())]
    final = kernel_cache() / f"{v.name}-{inputs_digest(inputs)[:16]}"
    if (final / "vmlinux").exists() and (final / "layout.json").exists():
        return Built(v, final)
    work = work_dir(v, tarball)
    src, out = work / "src", work / "out"
    if not (src / "Makefile").exists():
        _say(f"{v.name}: patched tree ({', '.join(v.all_patches())})")
        patched_tree(v, tarball, src)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with open(work / "build.log", "w") as log:
        config = configure(src, out, initramfs_list, log)
        _say(f"{v.name}: make vmlinux (log: {work / 'build.log'}; about 3 minutes on 2 cores the first time)")
        _make([f"O={out}", f"-j{jobs or os.cpu_count() or 1}", "vmlinux"], src, log, f"{v.name} vmlinux")
    layout = dwarf.dentry_layout(out / "vmlinux")
    dwarf.check_promise(v, layout)
    with atomic_dir(final) as tmp:
        shutil.copy2(out / "vmlinux", tmp / "vmlinux")
        shutil.copy2(out / ".config", tmp / "config")
        write_json_atomic(tmp / "layout.json", layout)
        write_json_atomic(tmp / "inputs.json", {
            "variant": v.name, "about": v.about, "source": str(tarball), "patches": list(v.all_patches()),
            "patch_digests": {p: patch_digest(p) for p in v.all_patches()}, "dentry": dentry.name, "tree_key": key, "initramfs": initramfs_digest, "build_seconds": round(time.monotonic() - t0, 1),
            "config": {k: config.get(k) for k in sorted(REQUIRED)}})
    _say(f"{v.name}: built in {time.monotonic() - t0:.0f} s -> {final}")
    return Built(v, final)
