"""A proposed layout for one object: its written fields moved off the lines its only-read fields are on, under the
user's constraints, with the saving it is estimated to buy.

The rule, one step a line:
  1. Each field of the object takes its class from the run (cohtb/analysis/advice.py), added over the hot lines
     it is on: a writer (contended or one writer), a reader (read by many or by one), or cold (no misses, or on
     none of the profile's hot lines: it took at most as many misses as the least of them, which the proposal
     prints). The fields of a group the user keeps together share its strongest role (writer, then reader):
     fields read together are read where one of them is. A group must be adjacent, in its order, already: only
     the written fields move. A field every core reads and finds in its cache takes
     no misses and looks cold: the trace has misses, not hits, so such fields must be named in a group with a
     field that misses (the RCU walk's fields of a dentry, say), or the writers may be moved onto them.
  2. A layout is allowed when no line holds bytes of both a writer and a reader, its size (rounded up to its
     largest alignment) is at most the bound, and every group of fields the user keeps together is adjacent in
     its order. A group that holds both a writer and a reader can never be allowed, and is refused.
  3. The candidates: the object's order with the writers (and their groups' fields) taken out as one block, in
     their order, and put back at every place; each field at the next offset its alignment allows, or, where the
     bound leaves room, the block (and the field after it) at the next line's start, padded before.
  4. The proposal is the allowed candidate that changes the fewest fields' offsets (the smallest patch), then
     the smallest, then the earliest, then the least padded. None allowed: no layout within the bound.

A field's alignment is not in the layout map: it is taken as the largest power of two, at most 8, that divides
both its offset and its size (what x86-64 gives its scalars and pointers; a build checks it: the patch's pahole).
The object's lines are counted from its own first byte's place in its line, so a layout is judged where the run
placed the object.

The estimate: each read miss of a reader on a writer's line was a turn of that line (the line went to the reader,
and back to the next writer); with the reader moved away that turn is gone. Saved per operation: the reader's
read misses on the writers' lines per operation times the line's mean turn to another core (its chain of
owners: cohtb/analysis/line_chain.py). It assumes the other turns stay as long as they were, which a contended
line need not do (fewer cores queue for it, each turn may lengthen): the proof is a run of the proposed layout."""

from __future__ import annotations

from dataclasses import dataclass

from cohtb.analysis import line_chain
from cohtb.analysis.advice import CONTENDED, ONE_WRITER, READ_BY_MANY, READ_BY_ONE, FieldTraffic, fields_on_hot_lines
from cohtb.errors import CohtbError
from cohtb.run.runs import Run

WRITER, READER, COLD = "writer", "reader", "cold"
MAX_ALIGN = 8


@dataclass(frozen=True)
class Member:
    """A field of the object as one layout places it."""
    name: str
    offset: int
    size: int
    align: int
    role: str            # WRITER, READER or COLD

    @property
    def end(self) -> int:
        return self.offset + self.size


@dataclass(frozen=True)
class Layout:
    members: tuple[Member, ...]
    size: int
    base: int            # the object's first byte's offset in its line
    line_size: int
    padded: tuple[str, ...] = ()   # members put at a line's start with padding before them

    def lines(self, m: Member) -> range:
        """The object's lines (0: the one its first byte is on) that hold bytes of m."""
        return range((self.base + m.offset) // self.line_size, (self.base + m.end - 1) // self.line_size + 1)

    def shared_lines(self) -> set[int]:
        """The lines that hold bytes of both a writer and a reader."""
        by_role = {WRITER: set(), READER: set()}
        for m in self.members:
            if m.role in by_role:
                by_role[m.role].update(self.lines(m))
        return by_role[WRITER] & by_role[READER]

    def offset_of(self, name: str) -> int:
        return next(m.offset for m in self.members if m.name == name)


@dataclass(frozen=True)
class Proposal:
    object: str
    before: Layout
    after: Layout | None          # None: no allowed layout within the bound
    bound: int
    groups: tuple[tuple[str, ...], ...]
    cold_at_most: int             # misses in the window of any field counted cold for being off the hot lines
    shared_lines: list[int]       # the run's lines that held a writer and a reader (before)
    saved_misses_per_op: float    # the readers' read misses on those lines, per operation
    turn_ns: float | None         # the first of those lines' mean turn to another core (None: no chain)
    line_ns_per_op: float | None  # all that line's turns, per operation
    writer_misses_per_op: float   # the writers' own misses there, per operation: what no layout takes away

    @property
    def moved(self) -> list[str]:
        if self.after is None:
            return []
        return [m.name for m in self.after.members if m.offset != self.before.offset_of(m.name)]

    def impossible(self) -> str:
        """Why no layout is proposed, in one line."""
        writers = ", ".join(m.name for m in self.before.members if m.role == WRITER)
        return (f"{self.object}: no layout of at most {self.bound} bytes keeps its written fields ({writers}) off "
                "the lines of its read fields" + (" with the groups kept together" if self.groups else "")
                + ": allow more bytes (--max-size)")

    @property
    def saved_ns_per_op(self) -> float | None:
        return None if self.turn_ns is None else self.saved_misses_per_op * self.turn_ns

    @property
    def estimated_speedup(self) -> float | None:
        """Throughput after over before if the line bounds the run (its turns are the time per operation)."""
        saved, line = self.saved_ns_per_op, self.line_ns_per_op
        return line / (line - saved) if saved is not None and line and line > saved else None


def alignment(offset: int, size: int) -> int:
    a = 1
    while a < MAX_ALIGN and offset % (2 * a) == 0 and size % (2 * a) == 0:
        a *= 2
    return a


def roles(traffic: list[FieldTraffic]) -> dict[str, str]:
    """Each field's role, its traffic added over the hot lines it is on (a field on two lines is one field)."""
    added: dict[str, list[int]] = {}
    for f in traffic:
        a = added.setdefault(f.field, [0, 0])
        a[0], a[1] = max(a[0], f.store_cores), max(a[1], f.load_cores)
    out = {}
    for name, (store_cores, load_cores) in added.items():
        kind = CONTENDED if store_cores >= 2 else ONE_WRITER if store_cores else \
            READ_BY_MANY if load_cores >= 2 else READ_BY_ONE if load_cores else None
        out[name] = WRITER if kind in (CONTENDED, ONE_WRITER) else READER if kind else COLD
    return out


def place(order: list[Member], base: int, line_size: int, new_lines: tuple[str, ...] = ()) -> Layout:
    """The members in this order, each at the next offset its alignment allows; those named in new_lines at the
    next line's first byte (padding before them)."""
    out, at = [], 0
    for m in order:
        at = -(-at // m.align) * m.align
        if m.name in new_lines:
            at = -(-(base + at) // line_size) * line_size - base
        out.append(Member(m.name, at, m.size, m.align, m.role))
        at += m.size
    align = max((m.align for m in order), default=1)
    return Layout(tuple(out), -(-at // align) * align, base, line_size, new_lines)


def _adjacent(layout: Layout, group: tuple[str, ...]) -> bool:
    names = [m.name for m in layout.members]
    at = names.index(group[0])
    return tuple(names[at:at + len(group)]) == group


def propose(obj: str, fields: list[dict], traffic: list[FieldTraffic], address: int, line_size: int,
            bound: int | None = None, groups: tuple[tuple[str, ...], ...] = ()) -> tuple[Layout, Layout | None]:
    """The object's layout as the run had it and the proposed one (fields: [{"name", "offset", "size"}] in
    offset order; traffic: advice's for this object; address: its first byte's). `after` is `before` when no
    line holds a writer and a reader, None when no candidate is allowed; a group that can never be is refused in
    one line."""
    names = [f["name"] for f in fields]
    role = roles(traffic)
    for g in groups:
        unknown = [n for n in g if n not in names]
        if unknown:
            raise CohtbError(f"--together {','.join(g)}: {obj} has no field {unknown[0]} (its fields: {', '.join(names)})")
        kinds = {role.get(n, COLD) for n in g}
        if {WRITER, READER} <= kinds:
            raise CohtbError(f"--together {','.join(g)}: the group holds a written field and a field only read, "
                             "which no layout can put on different lines")
        for n in g:   # read (or written) together: where one is, the others are
            role[n] = WRITER if WRITER in kinds else READER if READER in kinds else COLD
        at = names.index(g[0])
        if tuple(names[at:at + len(g)]) != g:
            raise CohtbError(f"--together {','.join(g)}: these fields are not adjacent in this order in {obj} "
                             f"({', '.join(names)}): the proposal moves only the written fields, so a group must "
                             "be together already")
    members = tuple(Member(f["name"], f["offset"], f["size"], alignment(f["offset"], f["size"]),
                           role.get(f["name"], COLD)) for f in fields)
    before = Layout(members, max(m.end for m in members), address % line_size, line_size)
    bound = before.size if bound is None else bound
    if not before.shared_lines():
        return before, before
    block = [m for m in members if m.role == WRITER]
    rest = [m for m in members if m.role != WRITER]
    allowed = []
    for at in range(len(rest) + 1):
        after_block = rest[at:at + 1]
        for pads in ((), (block[0].name,), (block[0].name, *(m.name for m in after_block))):
            candidate = place(rest[:at] + block + rest[at:], before.base, line_size, pads)
            if candidate.size <= bound and not candidate.shared_lines() and \
                    all(_adjacent(candidate, g) for g in groups):
                moved = sum(m.offset != before.offset_of(m.name) for m in candidate.members)
                allowed.append((moved, candidate.size, at, len(pads), candidate))
    return before, min(allowed, key=lambda x: x[:4])[4] if allowed else None


def false_shared_reads(before: Layout, traffic: list[FieldTraffic], address: int) -> tuple[int, list[int]]:
    """The readers' read misses (in the window) on the lines they share with a writer in `before`, and those
    lines (the run's line numbers): what a layout that keeps writers and readers apart takes away."""
    shared = before.shared_lines()
    first = address // before.line_size
    roles_of = {m.name: m.role for m in before.members}
    hit = [f for f in traffic if roles_of.get(f.field) == READER and f.line - first in shared]
    return sum(f.loads for f in hit), sorted({first + n for n in shared})


def object_fields(run: Run, obj: str) -> tuple[int, list[dict]]:
    """The object's first byte's (physical) address and its fields in offset order, from the run's layout map:
    in a user-space map, bytes no field names (it names only what the workload touches) are fields of their own,
    "+A..B", cold and movable like any other; a kernel's (from its DWARF) names every member, and its gaps are the
    compiler's padding, which placing the members again gives back. The object's extent is the workload's layout
    map's where it has one, else from its first field's first byte to its last field's last."""
    recs = sorted((r for r in run.manifest.layout if r.object == obj and r.paddr is not None), key=lambda r: r.vaddr)
    if not recs:
        raise CohtbError(f"{run.id}: its layout map has no object {obj} with physical addresses")
    mapped = run.manifest.workload.layout_map or {}
    extent = next(((o["address"], o["size"]) for o in mapped.get("objects", []) if o.get("name") == obj), None)
    start, size = extent or (recs[0].vaddr, max(r.vaddr + r.size for r in recs) - recs[0].vaddr)
    fields, at = [], 0
    unnamed_bytes = run.manifest.kernel is None   # a kernel's layout is every member (its gaps: the compiler's padding)
    for r in recs:
        offset = r.vaddr - start
        if offset > at and unnamed_bytes:
            fields.append({"name": f"+{at}..{offset}", "offset": at, "size": offset - at})
        if offset >= at:
            fields.append({"name": r.name, "offset": offset, "size": r.size})
            at = offset + r.size
    if size > at and unnamed_bytes:
        fields.append({"name": f"+{at}..{size}", "offset": at, "size": size - at})
    return recs[0].paddr - (recs[0].vaddr - start), fields   # the map's addresses and the records' are one space


def proposals(run: Run, bound: int | None = None, groups: tuple[tuple[str, ...], ...] = ()) -> list[Proposal]:
    """A proposal for each object with fields on the run's hot lines (cohtb/analysis/advice.py); a group applies
    to each object that has all its fields, and one that none has is refused."""
    traffic = fields_on_hot_lines(run)
    doc = run.profile()
    cold_at_most = min(x["loads"] + x["stores"] for x in doc["lines"])
    recs = None
    out, used = [], set()
    objects = list(dict.fromkeys(f.object for f in traffic))
    for obj in objects:
        mine = [f for f in traffic if f.object == obj]
        address, fields = object_fields(run, obj)
        mine_groups = tuple(g for g in groups if set(g) <= {f["name"] for f in fields})
        used.update(mine_groups)
        before, after = propose(obj, fields, mine, address, mine[0].line_size, bound, mine_groups)
        misses, lines = false_shared_reads(before, mine, address)
        writers = {m.name for m in before.members if m.role == WRITER}
        hot = lines[0] if lines else mine[0].line
        own = sum(f.loads + f.stores for f in mine if f.field in writers and f.line == hot)
        turn = line_ns = None
        if recs is None:
            recs = run.events()[1]
        c = line_chain.chain(recs, hot)
        if c is not None:
            handed = c.same_socket.count + c.other_socket.count
            turn = (c.same_socket.ticks + c.other_socket.ticks) / handed / 1000 if handed else None
            line_ns = c.span_ticks / 1000 / run.region_ops
        out.append(Proposal(obj, before, after, before.size if bound is None else bound, mine_groups, cold_at_most,
                            lines, misses / run.region_ops, turn, line_ns, own / run.region_ops))
    for g in groups:
        if g not in used:
            raise CohtbError(f"--together {','.join(g)}: no object on the hot lines has all these fields "
                             f"({', '.join(objects)} have: see the tables above)")
    return out
