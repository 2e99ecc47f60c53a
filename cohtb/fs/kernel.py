"""The guest kernels of full-system runs: Debian's linux-source-6.12, the project's config fragment and
patches (kernel/), and the initramfs built into vmlinux, made into one cached build per variant.

A variant is a list of patches on top of the ones every variant gets. Builds are cached under
`kernel_cache()`, keyed by everything that goes into them: the source tarball, the fragment, the
patches and the initramfs. The patched tree and the object directory of a variant are kept (keyed
without the initramfs), so a new initramfs only relinks."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from cohtb.atomic import atomic_dir, write_json_atomic
from cohtb.digest import inputs_digest
from cohtb.errors import CohtbError
from cohtb.fs import dwarf
from cohtb.places import ROOT, kernel_cache

KERNEL_DIR = ROOT / "kernel"
FRAGMENT = KERNEL_DIR / "config-fragment"
PATCHES = KERNEL_DIR / "patches"
SOURCE_TARBALL = Path("/usr/src/linux-source-6.12.tar.xz")   # Debian's linux-source-6.12
COMMON_PATCHES = ("boot-lapic-timer-period", "dcache-report-objects")
# What the kernel's build would otherwise take from the day, the user, the host and the build count (the version
# string, and the initramfs files' times): fixed, so that two builds of the same inputs in the same place
# (kernel_cache(): DWARF keeps the tree's absolute path) with the same toolchain give the same vmlinux, and runs
# recorded in different sessions name the same kernel.
REPRODUCIBLE_BUILD = {"KBUILD_BUILD_TIMESTAMP": "1970-01-01 00:00:00 UTC", "KBUILD_BUILD_USER": "cohtb",
                      "KBUILD_BUILD_HOST": "cohtb", "KBUILD_BUILD_VERSION": "1"}


@dataclass(frozen=True)
class Variant:
    name: str
    patches: tuple[str, ...]   # beyond COMMON_PATCHES, in order
    about: str
    d_lockref_offset: int      # what the variant promises struct dentry looks like (tests check the DWARF)
    dentry_size: int
    policy: str                # the SE lockref policy it corresponds to (run specs, labels, compare)
    layout: str                # the SE layout: split (6.11 on) or shared (before)

    def all_patches(self) -> tuple[str, ...]:
        return COMMON_PATCHES + self.patches


VARIANTS = {v.name: v for v in (
    Variant("stock-6.12", (), "6.12 as shipped: d_lockref on its own cache line (6.11 on)", 128, 192, "retry100",
            "split"),
    Variant("pre611", ("dentry-pre611-layout",),
            "6.8 .. 6.10's dentry: d_lockref at 96 on the line with the inline name's tail", 96, 192, "retry100",
            "shared"),
    Variant("wait", ("lockref-wait-for-unlock",), "stock layout; lockref waits for a held lock in its cmpxchg loop",
            128, 192, "unified", "split"),
    Variant("pre611-wait", ("dentry-pre611-layout", "lockref-wait-for-unlock"),
            "6.8 .. 6.10's dentry (pre611) with the wait", 96, 192, "unified", "shared"),
    Variant("rspin", ("rwsem-bench", "rwsem-reader-spin"),
            "stock 6.12 with a benchmark rwsem (/proc/cohtb-rwsem) and reader optimistic spinning (5.3 on) as the "
            "tree had it just before its removal for 5.11, behind a switch (seed 002; off: 6.12's rwsem)", 128, 192, "retry100", "split"),
    Variant("lockref-off", ("lockref-off",), "stock layout; every lockref operation takes d_lock (seed 000's baseline)",
            128, 192, "locked", "split"),
    Variant("hybrid184", ("dentry-hybrid184-layout",),
            "a 184-byte dentry no kernel shipped: 6.1's 32-byte inline name with 6.8's hlists, d_lockref at 88 "
            "(a sensitivity study of where the dentry starts in its line)", 88, 184, "retry100", "shared"),
    Variant("hybrid184-wait", ("dentry-hybrid184-layout", "lockref-wait-for-unlock"),
            "the hypothetical 184-byte dentry (hybrid184) with the wait", 88, 184, "unified", "shared"),
)}


@dataclass(frozen=True)
class Dentry:
    """A struct dentry a build can have (x86-64)."""
    name: str
    d_lockref_offset: int
    size: int
    about: str


DENTRY_611 = Dentry("6.11-on", 128, 192, "as shipped from 6.11 on (stock 6.12): d_lockref at 128, a line of its own")
DENTRY_68 = Dentry("6.8-6.10", 96, 192, "as 6.8 .. 6.10 shipped it: d_lockref at 96, on the line with the inline "
                   "name's tail; every dentry starts a line")
DENTRY_HYBRID184 = Dentry("hybrid184", 88, 184, "no kernel shipped it: 6.1's 32-byte inline name with 6.8's hlists, "
                          "d_lockref at 88; a dentry starts at any 8-byte offset of a line")
DENTRY_HEADER = "include/linux/dcache.h"   # a patch that touches it sets the build's struct dentry

# What struct dentry a recorded kernel build had: the one record that tells runs apart whose variant
# name meant different layouts over time. Until the fix of issue 32, variant "pre611" was built with
# a patch of the same name that made the hypothetical 184-byte dentry (now hybrid184); the bundled
# runs reference-runs/fs-stat_file-pre611-* are those. Since then "pre611" is 6.8 .. 6.10's 192-byte
# dentry. A run's manifest names the patches, not their contents, so the name cannot tell them apart.
#
# The key is the digest of the patch's diff (`patch_digest`: the text from its first "--- a/" on,
# which is all `patch` applies; the notes above it can be edited freely). Of what a manifest could
# key on, it is the only one that depends on exactly what sets the layout:
#   - the tree key (manifest["kernel"]["tree_key"], `tree_key`) also covers the source tarball's
#     size and mtime (a Debian point release changes it), the config fragment, every other patch
#     and the patch names: it names one build's inputs, not a layout, and every such edit would
#     need a new entry;
#   - vmlinux_sha256 differed between two builds of the same inputs before REPRODUCIBLE_BUILD (kernel
#     builds embedded timestamps: stock-6.12 rebuilt from the bundled runs' inputs, tree key
#     f5c128f14e3facf0, hashed differently), and it still names the build directory (DWARF's absolute
#     paths hold the tree key); the checkpoint's build directory digest also covers the initramfs.
# Builds record their patches' digests since this record exists (inputs.json "patch_digests",
# copied into each run's manifest); a build from before does not, and is matched by its tree key
# (`tree_keys`). The bundled pre611 runs' tree keys are what `tree_key` computes from
# config-fragment and the patches of the commit that bundled them, with Debian's linux-source-6.12
# 6.12.117-1~deb12u1 (151931384 bytes): 7852084c4332aadd at 85a8e47 (the 2,000 µs runs),
# 97f3a23e369f00cd at a63630f (the first two 300 µs runs, a SLUB_TINY fragment); both with the
# diff ca007cf6701d49ab. `build` refuses a patch touching struct dentry that is not here, so
# every build from now on is covered.
@dataclass(frozen=True)
class RecordedPatch:
    dentry: Dentry
    what: str
    tree_keys: tuple[str, ...] = ()   # builds recorded before manifests listed patch digests


RECORDED_DENTRIES = {
    "ca007cf6701d49ab": RecordedPatch(DENTRY_HYBRID184, "dentry-pre611-layout.patch until issue 32's fix (variant "
                                      "pre611 then): the bundled runs fs-stat_file-pre611-*",
                                      tree_keys=("7852084c4332aadd", "97f3a23e369f00cd")),
    "cc75a7f36e81db6a": RecordedPatch(DENTRY_HYBRID184, "dentry-hybrid184-layout.patch (variant hybrid184)"),
    "023d87b710ac39d6": RecordedPatch(DENTRY_68, "dentry-pre611-layout.patch since issue 32's fix (variant pre611)"),
}


def patch_body(text: str) -> str:
    """The diff of a patch file: from its first '--- a/' line on (the notes above it are not applied)."""
    at = text.find("\n--- a/")
    if not text.startswith("--- a/") and at < 0:
        raise CohtbError("not a patch: no '--- a/' line")
    return text if text.startswith("--- a/") else text[at + 1:]


def patch_digest(name: str) -> str:
    return hashlib.sha256(patch_body(patch_path(name).read_text()).encode()).hexdigest()[:16]


def touches_dentry(name: str) -> bool:
    return f"+++ b/{DENTRY_HEADER}" in patch_path(name).read_text()


def variant_dentry(v: Variant) -> Dentry:
    """The struct dentry the variant's patches make, from the record (6.12's own without a dcache.h patch)."""
    found = []
    for p in v.all_patches():
        if touches_dentry(p):
            digest = patch_digest(p)
            if digest not in RECORDED_DENTRIES:
                raise CohtbError(f"{patch_path(p)} changes struct dentry, and its diff (digest {digest}) is not in "
                                 "cohtb/fs/kernel.py's RECORDED_DENTRIES: add it, with the layout it makes, so runs "
                                 "built with it can be told apart from runs of the same variant name built before")
            found.append(RECORDED_DENTRIES[digest].dentry)
    if len(found) > 1:
        raise CohtbError(f"kernel variant {v.name}: more than one patch sets struct dentry")
    return found[0] if found else DENTRY_611


def recorded_dentry(kernel_inputs: dict) -> Dentry:
    """The struct dentry of a recorded build: a run manifest's "kernel" (or a build's inputs.json)."""
    digests = kernel_inputs.get("patch_digests")
    if digests is not None:
        found = [RECORDED_DENTRIES[d].dentry for d in digests.values() if d in RECORDED_DENTRIES]
        return found[0] if found else DENTRY_611   # `build` refused any unrecorded dcache.h patch
    for rec in RECORDED_DENTRIES.values():
        if kernel_inputs.get("tree_key") in rec.tree_keys:
            return rec.dentry
    names = kernel_inputs.get("patches", [])
    if any(patch_path(p).exists() and touches_dentry(p) for p in names) or "dentry-pre611-layout" in names:
        raise CohtbError(f"kernel build {kernel_inputs.get('tree_key')} ({kernel_inputs.get('variant')}): built "
                         "before builds recorded their patch digests, with a patch that sets struct dentry, and its "
                         "tree key is not in RECORDED_DENTRIES: which dentry it had is unknown (the run's layout "
                         "map has the real offsets)")
    return DENTRY_611


def built_label(variant_name: str, kernel_inputs: dict) -> str:
    """A recorded run's kernel variant, with the dentry its build had when the name means another now (the
    bundled pre611 runs were built with the hypothetical 184-byte dentry): "pre611 (built as hybrid184)"."""
    built = recorded_dentry(kernel_inputs).name
    return variant_name if built == variant_dentry(variant(variant_name)).name else f"{variant_name} (built as {built})"


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


def variant(name: str) -> Variant:
    if name not in VARIANTS:
        raise CohtbError(f"kernel variant '{name}': unknown (known: {', '.join(VARIANTS)})")
    return VARIANTS[name]


def patch_path(name: str) -> Path:
    return PATCHES / f"{name}.patch"


def tree_key(v: Variant, tarball: Path) -> str:
    """What the patched tree and its objects are made from (not the initramfs)."""
    st = tarball.stat()
    parts = [("source", f"{tarball.name} {st.st_size} {int(st.st_mtime)}".encode()), ("fragment", FRAGMENT.read_bytes())]
    parts += [(f"patch{i}:{p}", patch_path(p).read_bytes()) for i, p in enumerate(v.all_patches())]
    return inputs_digest(parts)[:16]


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
        return json.loads((self.dir / "layout.json").read_text())

    @property
    def inputs(self) -> dict:
        return json.loads((self.dir / "inputs.json").read_text())


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
    work = kernel_cache() / "build" / f"{v.name}-{key}"
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
