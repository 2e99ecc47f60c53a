"""Layout advice as text: the fields on the hottest lines, classified (cohtb/analysis/advice.py), and the
false-sharing pairs; of a simulated run (misses per operation) or of a real machine's perf c2c report (counts)."""

from __future__ import annotations

from cohtb.analysis.advice import FalseSharing, FieldTraffic
from cohtb.analysis.layout_proposal import Layout, Proposal
from cohtb.experiments.advice import AdviceResult
from cohtb.tables import Table, count


def _rate(n: int, ops: float | None) -> str:
    return f"{n / ops:.3f}" if ops else f"{n:,}"


def fields_table(what: str, fields: list[FieldTraffic], ops: float | None = None) -> Table:
    """ops: the run's operations, for rates per operation; None (a perf c2c report): counts."""
    unit = "/op" if ops else ""
    body = [[f"{f.object}.{f.field}", f"{f.address - f.offset:#x}+{f.offset:#x}", str(f.size), f.kind,
             _rate(f.loads, ops), _rate(f.stores, ops), str(f.load_cores), str(f.store_cores)] for f in fields]
    return Table(f"Fields on the hottest lines, by the misses their bytes took: {what}",
                 ["field", "line+offset", "bytes", "class", f"load misses{unit}", f"store misses{unit}",
                  "cores loading", "cores storing"], body,
                 "Simulated: a miss is the line's event when its bytes came from another cache, given to the "
                 "instruction that waited for it and the bytes it accessed (docs/gem5.md, 'The profile of the "
                 "window'). From perf c2c: loads are the HITMs sampled on the field's bytes, stores an estimate. "
                 "Classes: cohtb/analysis/advice.py.")


def pairs_text(pairs: list[FalseSharing], ops: float | None = None) -> str:
    if not pairs:
        return "False sharing: none (no field only read on a line that another field's stores take away)."
    unit = "read misses/op" if ops else "read misses"
    return "False sharing (a written field beside a field only read, on one line):\n" + \
        "\n".join(f"  line {p.written.address - p.written.offset:#x}: {p.written.object}.{p.written.field} "
                  f"({p.written.kind}) takes the line from {p.read.object}.{p.read.field} ({p.read.kind}): "
                  f"{_rate(p.read.loads, ops)} {unit}" for p in pairs)


def pahole(title: str, layout: Layout, moved: set[str] = frozenset()) -> str:
    """A layout as pahole prints one (offset and size as its comments, its cache line boundaries), each field's
    role beside it and a * on those the proposal moved; lines counted from the object's place in its first."""
    width = max(len(m.name) for m in layout.members) + 2
    out = [f"{title} {{"]
    line, end = layout.base // layout.line_size, 0
    for m in layout.members:
        if m.offset > end:
            out.append(f"\t/* XXX {m.offset - end} bytes hole, padding */")
        end = m.end
        start = layout.base + m.offset
        if start // layout.line_size > line:
            line = start // layout.line_size
            edge = line * layout.line_size - layout.base
            ago = start - line * layout.line_size
            out.append(f"\t/* --- cacheline {line} boundary ({edge} bytes)"
                       + (f" was {ago} bytes ago" if ago else "") + " --- */")
        out.append(f"\t{m.name:<{width}}/* {m.offset:5} {m.size:5} */  {m.role}{' *' if m.name in moved else ''}")
    lines = (layout.base + layout.size - 1) // layout.line_size + 1
    out.append(f"\t/* size: {layout.size}, cachelines: {lines} */")
    return "\n".join(out + ["};"])


def proposal_text(p: Proposal) -> str:
    if p.after is None:
        return p.impossible() + "."
    if p.after is p.before:
        return (f"{p.object}: no line holds a written field and a field only read: the layout is kept. Its "
                f"written fields' own misses, {p.writer_misses_per_op:.3f} per operation on "
                "their hottest line, are true sharing: every core writes them, and no order of fields takes a "
                "field away from itself; fewer misses there need fewer writes (the algorithm), not a layout.")
    moved = set(p.moved)
    before = pahole(f"{p.object}, as the run had it", p.before)
    after = pahole(f"{p.object}, proposed", p.after, moved)
    size = p.before.line_size
    estimate = (f"{p.saved_misses_per_op:.3f} read misses per operation on line(s) "
                f"{', '.join(f'{n * size:#x}' for n in p.shared_lines)} go, each a turn of the line")
    if p.saved_ns_per_op is not None:
        estimate += (f" ({p.turn_ns:.0f} ns, its mean turn to another core): about {p.saved_ns_per_op:.0f} ns of "
                     f"the line's {p.line_ns_per_op:.0f} ns per operation")
        if p.estimated_speedup is not None:
            estimate += f"; if the line bounds the run, {p.estimated_speedup - 1:+.0%} throughput"
    return "\n".join([
        before, "", after, "",
        f"Moved (*): {', '.join(p.moved)}; size {p.before.size} -> {p.after.size} bytes (at most {p.bound}).",
        f"Estimated saving: {estimate}. The writers' own misses there ({p.writer_misses_per_op:.3f} per operation) "
        "stay: no layout takes them away. A run of the proposed layout is the proof (cohtb/analysis/"
        "layout_proposal.py says what the estimate assumes).",
        f"Cold: no misses in the window, or off the profile's hot lines (at most {p.cold_at_most} miss{'' if p.cold_at_most == 1 else 'es'} each); a "
        "field every core reads and finds in its cache looks the same: name fields read together with --together."
        + (f" Kept together: {'; '.join(','.join(g) for g in p.groups)}." if p.groups else "")])


def patch_notes(p: Proposal, struct: str, run_id: str, variant: str, checked: str) -> str:
    """The notes above a proposed layout's kernel patch (kernel/patches/ style: patch reads from the first
    "--- a/" on), each moved field on a line of its own."""
    width = max(len(n) for n in p.moved)
    rows = [f"  {n:<{width}} {p.before.offset_of(n):6} -> {p.after.offset_of(n):5}  "
            + next(f"{m.role}" for m in p.after.members if m.name == n)
            + (": moved off the read fields' lines" if next(m.role for m in p.after.members if m.name == n) == "writer"
               else ": moved to make room") for n in p.moved]
    estimate = f"{p.saved_misses_per_op:.3f} read misses per operation"
    if p.saved_ns_per_op is not None:
        estimate += f", about {p.saved_ns_per_op:.0f} ns of the line's {p.line_ns_per_op:.0f} ns per operation"
    return "\n".join([
        f"cohtb advise: struct {struct} proposed from run {run_id} (on kernel variant {variant})",
        "",
        "Written by `cohtb advise --patch`, not by hand: the fields written by several cores are moved off the",
        "cache lines of the fields only read there, the fewest fields moved (cohtb/analysis/layout_proposal.py).",
        f"Size {p.before.size} -> {p.after.size} bytes (at most {p.bound})"
        + (f"; kept together: {'; '.join(','.join(g) for g in p.groups)}." if p.groups else "."),
        "",
        f"  {'field':<{width}} before -> after  role",
        *rows,
        "",
        f"Estimated saving: {estimate} (a run of the patched kernel is the proof).",
        f"Checked: {checked}",
        "", ""])


def _changes(pairs: list, what: str) -> str:
    """Each point's measured change, or that its repetitions are not all kept."""
    return "; ".join(f"{label}: {what} {r.text() if r else 'not yet measured (its repetitions are not all kept)'}"
                     for label, r in pairs)


def seed_advice_section(r: AdviceResult) -> list[str]:
    """A seed page's layout advice: what was asked, under which constraints, the proposal, its estimate and proof."""
    a = r.advice
    out = ["## Layout advice", "",
           f"**Asked** of `cohtb advise` on the {a.kernel} arm's runs under {a.declaration}: {a.question}.", ""]
    if a.together:
        out += [f"**Kept together:** {'; '.join(', '.join(g) for g in a.together)}: {a.together_why}.", ""]
    if a.max_size is not None:
        out += [f"**At most** {a.max_size} bytes: {a.max_size_why}.", ""]
    if not r.runs:
        return out + [f"Not answered yet: no run of {a.kernel} under {a.declaration} is kept.", ""]
    if r.unadvised:
        out += ["Runs with a profile that gave no proposal: " + "; ".join(r.unadvised) + ".", ""]
    if not r.proposals:
        return out + [f"Not answered: none of the {len(r.runs)} kept runs of {a.kernel} under {a.declaration} gave a "
                      "proposal (a profile with its hot lines' bytes is needed: runs recorded before gem5's "
                      "pc-profile patch have none, docs/gem5.md, 'The profile of the window').", ""]
    run_id, first = r.proposals[0]
    together = " ".join(f"--together {','.join(g)}" for g in a.together)
    size = f" --max-size {a.max_size}" if a.max_size is not None else ""
    out += [f"From {len(r.proposals)} of the {count(len(r.runs), 'run')} (each with a profile); "
            + ("every one proposes the same layout." if r.agree else "they do not all propose the same layout: "
               "the first run's is shown.")
            + f" The first, `{run_id}`, as `cohtb advise RUN {together}{size}` prints it:", "", "```",
            proposal_text(first), "```", ""]
    estimated = [p for _, p in r.proposals if p.saved_ns_per_op is not None]
    if estimated:
        saved, line = [p.saved_ns_per_op for p in estimated], [p.line_ns_per_op for p in estimated]
        out += [f"**Estimated saving** over the {count(len(estimated), 'run')}: {min(saved):.0f}-{max(saved):.0f} ns per "
                f"operation of the line's {min(line):.0f}-{max(line):.0f}.", ""]
    if r.unconstrained is not None and r.unconstrained.moved != first.moved:
        u = r.unconstrained
        where = ", ".join(f"{n} {u.before.offset_of(n)} -> {u.after.offset_of(n)}" for n in u.moved) if u.after else \
            "none within the bound"
        out += [f"**Without the groups** the same run's proposal moves {where}: onto fields the runs see no misses "
                "on, which the group names as read by every lookup.", ""]
    if first.moved:
        if r.proof_kernel is None:
            why = ("no other arm of the declaration has kept runs yet, to read its layout from" if not r.others_kept
                   else "no arm of the declaration has the proposed layout; it needs a kernel variant of the "
                        "proposal's patch (`cohtb advise RUN --patch FILE --check-build`) and a declaration of the pair")
            out += [f"**Proof:** none yet: {why}.", ""]
        else:
            same = r.proof_kernel == a.seed_patch
            out += [f"**Proof:** the {r.proof_kernel} arm's runs hold `{a.object}` with the proposed layout, field "
                    f"for field (their layout maps, from the kernel's DWARF): the proposal is "
                    + ("the seed's own patch's layout, so its proven gain is that patch's, measured once. "
                       if same else "measured by that arm. ")
                    + _changes(r.proof, f"throughput {r.proof_kernel} over {a.kernel}") + ".", ""]
        if a.seed_patch and r.proof_kernel != a.seed_patch:
            out += [f"**The seed's own patch** ({a.seed_patch}): "
                    + _changes(r.seed_patch, f"throughput {a.seed_patch} over {a.kernel}") + ".", ""]
    return out


def proof_text(r: AdviceResult, missing: int) -> str:
    """`cohtb advise --prove`: the proposal's estimate beside what the declaration measured at each point."""
    a = r.advice
    first = r.proposals[0][1]
    estimate = (f"{first.estimated_speedup - 1:+.0%} if the line bounds the run"
                if first.estimated_speedup is not None else "none (no turns measured on the line)")
    if r.proof_kernel is None:
        why = "no other arm of it has kept runs yet" if not r.others_kept else \
            f"no arm of it holds {a.object} with the proposed layout"
        return (f"--prove {a.declaration}: {why} (estimated {estimate}): a declaration of the pair with a kernel of "
                "the proposal's patch (--patch) proves it.")
    measured = "; ".join(f"{label}: {x.mean - 1:+.0%} ({x.lo - 1:+.0%} to {x.hi - 1:+.0%})" if x else
                         f"{label}: not yet ({missing} of its runs are missing: cohtb seeds --seed {a.seed} --launch "
                         "records them)" for label, x in r.proof)
    return (f"Proof by {a.declaration}: its {r.proof_kernel} arm holds {a.object} with the proposed layout; "
            f"throughput {r.proof_kernel} over {a.kernel}, measured: {measured}; estimated {estimate}.")


def proposal_table(run_id: str, p: Proposal) -> Table:
    """A proposal as a table (the report's form of the pahole listing): each field's offset and line before and
    after, its role, whether it moved; the estimate in the note."""
    def line(layout: Layout, m) -> str:
        return ", ".join(map(str, layout.lines(m)))
    after = {m.name: m for m in p.after.members} if p.after is not None else {}
    rows = [[m.name, m.role, str(m.size), str(m.offset), line(p.before, m),
             str(after[m.name].offset) if m.name in after else "-", line(p.after, after[m.name]) if m.name in after
             else "-", "yes" if m.name in p.moved else ""] for m in p.before.members]
    return Table(f"Proposed layout of {p.object}: {run_id}",
                 ["field", "role", "bytes", "offset", "line", "proposed offset", "proposed line", "moved"], rows,
                 proposal_text(p).split("\n\n")[-1] if p.after is None or p.after is p.before else
                 " ".join(proposal_text(p).split("\n")[-3:]))
