"""`cohtb advise`: layout advice: the fields on the hottest lines classified by the misses their bytes took, the
false-sharing pairs (cohtb/analysis/advice.py), and a proposed layout with its estimated saving
(cohtb/analysis/layout_proposal.py), written as a kernel patch for a full-system run's struct or as a layout map
for a user-space one; of simulated runs, or of a real machine's `perf c2c report --stdio` with the layout and
address of the object to read it by."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from cohtb.analysis.advice import false_sharing, fields_from_c2c, fields_on_hot_lines
from cohtb.analysis.c2c import read as read_c2c
from cohtb.analysis.layout_proposal import Proposal, proposals
from cohtb.atomic import write_text_atomic
from cohtb.commands._shared import RUNS_HELP
from cohtb.errors import CohtbError
from cohtb.experiments.advice import SeedAdvice
from cohtb.experiments.advice import advise as advise_seed
from cohtb.experiments.declarations import by_id
from cohtb.experiments.judging import history_in
from cohtb.experiments.seeds import HISTORY
from cohtb.fs import dwarf, struct_patch
from cohtb.fs.runner import STRUCT_OF
from cohtb.places import REFERENCE_RUNS, RUNS
from cohtb.report.advice import fields_table, pairs_text, patch_notes, proof_text, proposal_text
from cohtb.report.profile import describe
from cohtb.run.runs import Run, discover


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="*", help=f"runs recorded with a profile: {RUNS_HELP}")
    p.add_argument("--together", action="append", default=[], metavar="F1,F2,...",
                   help="adjacent fields (in the struct's order) read or written together, kept so: a field every "
                        "core reads and finds in its cache takes no misses, so name it with one that does (repeatable)")
    p.add_argument("--max-size", type=int, help="the most bytes the proposed object may take (default: its size)")
    p.add_argument("--patch", type=Path, help="write the first run's proposal here: a kernel patch of the struct "
                   "(full system) or the proposed layout map (JSON, user space)")
    p.add_argument("--check-build", action="store_true",
                   help="with --patch of a full-system run: compile the struct's object with the patch on the run's "
                        "kernel variant and read its layout back with pahole (minutes)")
    p.add_argument("--prove", metavar="DECLARATION",
                   help="a declaration (e.g. 004-fsv6) whose arms are the first run's kernel and one whose object has "
                        "the proposed layout: its measured change beside the estimate")
    p.add_argument("--runs-dir", type=Path, action="append", default=[],
                   help="with --prove: where the declaration's runs are kept (default: results/runs and the bundled "
                        "reference runs)")
    p.add_argument("--c2c", type=Path, help="a real machine's `perf c2c report --stdio --no-call-graph` output")
    p.add_argument("--struct", help="with --c2c: the struct whose fields the report's offsets are read by")
    p.add_argument("--at", help="with --c2c: the address (hex) of the object the report's lines hold")
    p.add_argument("--pahole", type=Path, help="with --c2c: the struct's layout as `pahole -C STRUCT` printed it")
    p.add_argument("--vmlinux", type=Path, help="with --c2c: else the kernel whose DWARF pahole reads it from")


def run(args: argparse.Namespace) -> int:
    if not args.runs and not args.c2c:
        raise CohtbError("advise needs runs, or --c2c REPORT")
    if args.max_size is not None and args.max_size < 1:
        raise CohtbError(f"--max-size {args.max_size}: want a positive number of bytes")
    groups = tuple(tuple(n.strip() for n in g.split(",") if n.strip()) for g in args.together)
    if any(len(g) < 2 for g in groups):
        raise CohtbError("--together wants two or more field names, comma-separated")
    if args.check_build and not args.patch:
        raise CohtbError("--check-build checks the patch --patch writes: give --patch FILE")
    if args.prove and not args.runs:
        raise CohtbError("--prove needs a run to take the proposal from")
    runs = discover([Path(p) for p in args.runs])
    for n, r in enumerate(runs):
        fields = fields_on_hot_lines(r)
        print(("\n" if n else "") + fields_table(describe(r), fields, r.region_ops).text())
        print(pairs_text(false_sharing(fields), r.region_ops))
        found = proposals(r, args.max_size, groups)
        for p in found:
            if p.after is None and (args.max_size is not None or groups):
                raise CohtbError(p.impossible())   # the user's constraints, not the object, rule every layout out
            print("\n" + proposal_text(p))
        if n == 0 and args.patch:
            write_patch(r, found, args)
        if n == 0 and args.prove:
            prove(r, found, groups, args)
    if args.c2c:
        fields = fields_from_c2c(read_c2c(args.c2c), args.struct, struct_fields(args), address(args.at))
        print(("\n" if args.runs else "") + fields_table(f"{args.c2c} ({args.struct} at {args.at})", fields).text())
        print(pairs_text(false_sharing(fields)))
    return 0


def write_patch(run: Run, found: list[Proposal], args: argparse.Namespace) -> None:
    """The first proposal that moves fields, as a kernel patch (full system) or a layout map (user space)."""
    p = next((p for p in found if p.moved), None)
    if p is None:
        raise CohtbError(f"--patch: {run.id}: no proposal moves a field (no line holds a written field and a "
                         "field only read), so there is no patch to write")
    if run.manifest.kernel is None:
        write_text_atomic(args.patch, json.dumps(layout_map(run, p), indent=1) + "\n")
        print(f"\nwrote {args.patch}: {p.object}'s proposed layout as a layout map (the workloads' format)")
        return
    if p.after.padded:
        raise CohtbError(f"--patch: the proposal pads before {', '.join(p.after.padded)} to start a line, which a "
                         "reordering of the header cannot say (an alignment attribute would change the struct's "
                         "alignment): give --max-size to keep the size, or write that patch by hand")
    variant, struct = run.manifest.kernel["variant"], STRUCT_OF.get(p.object)
    if struct not in struct_patch.HEADERS:
        raise CohtbError(f"--patch: {run.id}: no kernel header known for object {p.object}")
    path = struct_patch.HEADERS[struct][0]
    old = struct_patch.variant_file(variant, path)
    diff = struct_patch.diff(old, struct_patch.reorder(old, struct, [m.name for m in p.after.members]), path)
    checked = "not compiled (cohtb advise --patch --check-build compiles it and reads its layout back)"
    if args.check_build:
        got = struct_patch.built_layout(variant, diff, struct)
        want = [(m.name, m.offset, m.size) for m in p.after.members]
        have = [(f["name"], f["offset"], f["size"]) for f in got["fields"]]
        if have != want or got["size"] != p.after.size:
            raise CohtbError(f"--check-build: the compiler laid struct {struct} out otherwise than proposed: {have}")
        checked = (f"{struct_patch.HEADERS[struct][1]} compiled with it on {variant}'s tree and config; pahole reads "
                   f"every field at its proposed offset, {got['size']} bytes")
    write_text_atomic(args.patch, patch_notes(p, struct, run.id, variant, checked) + diff)
    print(f"\nwrote {args.patch}: struct {struct}'s proposed layout as a patch of {path} on {variant} ({checked})")


def prove(run: Run, found: list[Proposal], groups: tuple, args: argparse.Namespace) -> None:
    """The run's first proposal that moves fields, held against the declaration the user names: its arm of the
    run's kernel and the arm whose runs hold the proposed layout."""
    p = next((p for p in found if p.moved), None)
    if p is None:
        raise CohtbError(f"--prove: {run.id}: no proposal moves a field: nothing to prove")
    d = by_id(args.prove)
    e = next(e for e in HISTORY[d.experiment] if e.declaration.id == d.id)
    kernels = {s.kernel for pt in e.points for s in (pt.base, pt.new)}
    if run.spec.kernel not in kernels:
        raise CohtbError(f"--prove {d.id}: it has no arm of the run's kernel ({run.spec.kernel or 'user space'}; "
                         f"its arms: {', '.join(sorted(k or 'user space' for k in kernels))})")
    history = history_in(d.experiment, args.runs_dir or [RUNS, REFERENCE_RUNS])
    res = next(v for v in history if v.declaration.id == d.id)
    a = SeedAdvice(seed=d.experiment, declaration=d.id, kernel=run.spec.kernel, object=p.object, question="",
                   together=p.groups, max_size=args.max_size)
    print("\n" + proof_text(advise_seed(a, res.points, p), len(res.missing)))


def layout_map(run: Run, p: Proposal) -> dict:
    """The proposal in the workloads' layout-map format (cache_line, objects with address, size and fields), at the
    object's address in the run; bytes no field named are left out, as the workload left them."""
    mapped = run.manifest.workload.layout_map or {}
    obj = next((o for o in mapped.get("objects", []) if o.get("name") == p.object), None)
    start = obj["address"] if obj else min(r.vaddr for r in run.manifest.layout if r.object == p.object)
    named = {r.name for r in run.manifest.layout if r.object == p.object}
    return {"cache_line": p.after.line_size, "layout": "proposed", "proposed_from": run.id,
            "objects": [{"name": p.object, "address": start, "size": p.after.size,
                         "fields": [{"name": m.name, "address": start + m.offset, "size": m.size}
                                    for m in p.after.members if m.name in named]}]}


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
