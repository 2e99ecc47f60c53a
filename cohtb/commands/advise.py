"""`cohtb advise`: the first step of layout advice: the fields on the hottest lines classified by the misses their
bytes took, and the false-sharing pairs (cohtb/analysis/advice.py); of simulated runs, or of a real machine's
`perf c2c report --stdio` with the layout and address of the object to read it by."""

from __future__ import annotations

import argparse
from pathlib import Path

from cohtb.analysis.advice import false_sharing, fields_from_c2c, fields_on_hot_lines
from cohtb.analysis.c2c import read as read_c2c
from cohtb.commands._shared import RUNS_HELP
from cohtb.errors import CohtbError
from cohtb.fs import dwarf
from cohtb.report.advice import fields_table, pairs_text
from cohtb.report.profile import describe
from cohtb.run.runs import discover


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="*", help=f"runs recorded with a profile: {RUNS_HELP}")
    p.add_argument("--c2c", type=Path, help="a real machine's `perf c2c report --stdio --no-call-graph` output")
    p.add_argument("--struct", help="with --c2c: the struct whose fields the report's offsets are read by")
    p.add_argument("--at", help="with --c2c: the address (hex) of the object the report's lines hold")
    p.add_argument("--pahole", type=Path, help="with --c2c: the struct's layout as `pahole -C STRUCT` printed it")
    p.add_argument("--vmlinux", type=Path, help="with --c2c: else the kernel whose DWARF pahole reads it from")


def run(args: argparse.Namespace) -> int:
    if not args.runs and not args.c2c:
        raise CohtbError("advise needs runs, or --c2c REPORT")
    for n, r in enumerate(discover([Path(p) for p in args.runs])):
        fields = fields_on_hot_lines(r)
        print(("\n" if n else "") + fields_table(describe(r), fields, r.region_ops).text())
        print(pairs_text(false_sharing(fields), r.region_ops))
    if args.c2c:
        fields = fields_from_c2c(read_c2c(args.c2c), args.struct, struct_fields(args), address(args.at))
        print(("\n" if args.runs else "") + fields_table(f"{args.c2c} ({args.struct} at {args.at})", fields).text())
        print(pairs_text(false_sharing(fields)))
    return 0


def address(text: str | None) -> int:
    try:
        return int(text, 16)
    except (TypeError, ValueError):
        raise CohtbError(f"--at {text}: want the object's address in hex (with --c2c)") from None


def struct_fields(args: argparse.Namespace) -> list[dict]:
    """The struct's top-level fields (name, offset, size), from a saved pahole output or the vmlinux's DWARF."""
    if not args.struct:
        raise CohtbError("--c2c needs --struct (and --at, and --pahole or --vmlinux)")
    if args.pahole:
        try:
            layouts = dwarf.parse_pahole(args.pahole.read_text())
        except OSError as e:
            raise CohtbError(f"{args.pahole}: {e}") from None
    elif args.vmlinux:
        layouts = dwarf.layouts(args.vmlinux, (args.struct,))
    else:
        raise CohtbError("--c2c needs the struct's layout: --pahole FILE or --vmlinux VMLINUX")
    if args.struct not in layouts:
        raise CohtbError(f"{args.pahole or args.vmlinux}: no struct {args.struct} in it")
    return layouts[args.struct]["fields"]
