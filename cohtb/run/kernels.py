"""The guest kernel variants a full-system run can name, and the struct dentry each build had: the run layer's
vocabulary for kernels (as run/machines.py is for machines), read by the analysis and the report to label a run
without the kernel build (cohtb/fs/kernel.py builds them)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.places import ROOT

KERNEL_DIR = ROOT / "kernel"
PATCHES = KERNEL_DIR / "patches"
COMMON_PATCHES = ("boot-lapic-timer-period", "dcache-report-objects")


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
                                 "cohtb/run/kernels.py's RECORDED_DENTRIES: add it, with the layout it makes, so runs "
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



def variant(name: str) -> Variant:
    if name not in VARIANTS:
        raise CohtbError(f"kernel variant '{name}': unknown (known: {', '.join(VARIANTS)})")
    return VARIANTS[name]


def patch_path(name: str) -> Path:
    return PATCHES / f"{name}.patch"
