"""Layout advice, its first step: each field of a run's objects on its hottest lines classified by the misses its
bytes took (the run's profile joined each load's and store's event to the instruction that waited for it and the
bytes it accessed: cohtb/run/pc_profile.py), and the false-sharing pairs: a field written by several cores on
the same line as a field only read there, whose readers miss because of writes they never needed.

The classes, in the order they are tested (one rule each):
  contended     stored by 2 or more cores
  one writer    stored by exactly one core
  read by many  only loaded, by 2 or more cores
  read by one   only loaded, by one core
  no misses     on a hot line, but none of its bytes missed in the window (what is written or read there hits)
Counts are misses (a line's event: the bytes came from another cache), per operation of the run.

From a real machine's perf c2c report (cohtb/analysis/c2c.py) the same classes are found for the fields of one
object the user places (its struct's layout from pahole, and its address): a field's loads are the HITMs perf
sampled on its bytes (exact: each row's shares of the line's local and remote HITMs times their counts), its
stores an estimate (perf prints each row's shares of the line's L1-hit and L1-miss stores, not their counts: the
mean share times the line's stores), and its cores the most CPUs of one of its rows that loaded, or stored."""

from __future__ import annotations

from dataclasses import dataclass

from cohtb.analysis.c2c import C2cLine
from cohtb.contract import DEFAULT_LINE_SIZE
from cohtb.errors import CohtbError
from cohtb.run.runs import Run

CONTENDED, ONE_WRITER, READ_BY_MANY, READ_BY_ONE, NO_MISSES = \
    "contended", "one writer", "read by many", "read by one", "no misses"


@dataclass(frozen=True)
class FieldTraffic:
    object: str
    field: str
    line: int
    offset: int          # in its line
    size: int
    loads: int           # misses of loads on its bytes, in the window
    stores: int
    load_cores: int      # the most cores that missed on one of its bytes, loading / storing
    store_cores: int
    line_size: int

    @property
    def address(self) -> int:
        return self.line * self.line_size + self.offset

    @property
    def kind(self) -> str:
        if self.store_cores >= 2:
            return CONTENDED
        if self.store_cores == 1:
            return ONE_WRITER
        if self.load_cores >= 2:
            return READ_BY_MANY
        return READ_BY_ONE if self.load_cores == 1 else NO_MISSES


@dataclass(frozen=True)
class FalseSharing:
    written: FieldTraffic   # contended or one writer
    read: FieldTraffic      # only read, on the same line

    @property
    def line(self) -> int:
        return self.written.line


def fields_on_hot_lines(run: Run) -> list[FieldTraffic]:
    """Every layout field on the profile's hot lines, with its bytes' misses; a run without a profile's lines, or
    without a layout on them, is refused in one line."""
    doc = run.profile()
    if not doc or not doc.get("lines"):
        raise CohtbError(f"{run.id}: no profile with its hot lines' bytes (a run recorded with the pc-profile "
                         "patch and traced: docs/gem5.md, 'The profile of the window')")
    if not any(rec.paddr is not None for rec in run.manifest.layout):
        raise CohtbError(f"{run.id}: no layout map with physical addresses (the workload reported no objects' fields): "
                         "no field to advise on")
    out = []
    for x in doc["lines"]:
        for rec in run.manifest.layout:
            size = rec.line_size
            if rec.paddr is None:
                continue
            first = max(rec.paddr, x["line"] * size)
            last = min(rec.paddr + rec.size, (x["line"] + 1) * size)   # the field's bytes on this line
            if first >= last:
                continue
            mine = [b for off, b in x.get("bytes", {}).items() if first <= x["line"] * size + int(off) < last]
            out.append(FieldTraffic(rec.object, rec.name, x["line"], first - x["line"] * size, last - first,
                                    sum(b["loads"] for b in mine), sum(b["stores"] for b in mine),
                                    max((b["load_cores"] for b in mine), default=0),
                                    max((b["store_cores"] for b in mine), default=0), size))
    if not out:
        raise CohtbError(f"{run.id}: none of the layout's fields is on the profile's hot lines: nothing to advise on "
                         "(the hot lines are the kernel's or the workload's other objects)")
    return out


def false_sharing(fields: list[FieldTraffic]) -> list[FalseSharing]:
    """On each line, every written field with every field there that is only read and missed: most read misses
    first."""
    pairs = [FalseSharing(w, r) for w in fields if w.kind in (CONTENDED, ONE_WRITER)
             for r in fields if r.line == w.line and r.kind in (READ_BY_MANY, READ_BY_ONE)]
    return sorted(pairs, key=lambda p: -p.read.loads)


def fields_from_c2c(lines: list[C2cLine], struct: str, fields: list[dict], base: int,
                    line_size: int = DEFAULT_LINE_SIZE) -> list[FieldTraffic]:
    """The fields of one object at `base` (its struct's layout: [{"name", "offset", "size"}], pahole's) on the
    report's lines, with what perf sampled on their bytes; an object on none of the lines is refused in one line."""
    size = max(f["offset"] + f["size"] for f in fields)
    out = []
    for line in lines:
        if not (line.address < base + size and base < line.address + line_size):
            continue
        for f in fields:
            first = max(base + f["offset"], line.address)
            last = min(base + f["offset"] + f["size"], line.address + line_size)
            if first >= last:
                continue
            rows = [r for r in line.rows if first <= line.address + r.offset < last]
            loads = sum(r.local_hitm_pct * line.hitm_local + r.remote_hitm_pct * line.hitm_remote for r in rows) / 100
            storing = [r for r in rows if r.store_l1hit_pct or r.store_l1miss_pct]
            stores = sum((r.store_l1hit_pct + r.store_l1miss_pct) / 2 for r in storing) * line.stores / 100
            loading = [r for r in rows if r.local_hitm_pct or r.remote_hitm_pct]
            out.append(FieldTraffic(struct, f["name"], line.address // line_size, first - line.address, last - first,
                                    round(loads), round(stores), max((r.cpus for r in loading), default=0),
                                    max((r.cpus for r in storing), default=0), line_size))
    if not out:
        raise CohtbError(f"no line of the report holds the {struct} at {base:#x} ({size} bytes): give the address of "
                         "an object on one of its lines")
    return out
