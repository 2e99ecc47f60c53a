"""`cohtb kernel`: the full-system guest kernels: list the variants, or build them."""

from __future__ import annotations

import argparse

from cohtb.fs import initramfs, kernel
from cohtb.run import kernels



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("action", choices=["list", "build"], help="list the variants, or build them")
    p.add_argument("--variant", action="append", help="a variant to build (repeatable; default: every variant)")
    p.add_argument("--jobs", type=int, default=None, help="make -j (default: the machine's cores)")


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        for v in kernels.VARIANTS.values():
            print(f"{v.name:12s} d_lockref at {v.d_lockref_offset:3d}, dentry {v.dentry_size} bytes: {v.about}")
        return 0
    names = args.variant or list(kernels.VARIANTS)
    for n in names:
        kernels.variant(n)   # an unknown name fails before anything is built
    ramfs = initramfs.build()
    for n in names:
        built = kernel.build(n, ramfs.list_path, ramfs.digest, args.jobs)
        d = built.layout["dentry"]
        lockref = next(f for f in d["fields"] if f["name"] == "d_lockref")
        print(f"{n}: {built.vmlinux} (struct dentry {d['size']} bytes, d_lockref at {lockref['offset']})")
    return 0
