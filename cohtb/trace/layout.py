"""The workload's layout map in Ruby's physical addresses, and the monitor regions that watch it.

gem5 SE maps the workload's virtual pages to physical pages with its own page table. The ingest
collects the x86 TLB's "Mapping vaddr to paddr" lines of the set-up (before the region of interest);
a field on a page that was not mapped then is placed with the offset of another page of its object
(static data is mapped contiguously), and marked so."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from cohtb.errors import CohtbError

PAGE = 4096


@dataclass(frozen=True)
class Field:
    object: str
    name: str
    vaddr: int
    size: int
    paddr: int | None
    how: str          # "tlb", "object-offset", "identity" (native runs) or "unmapped"
    line_size: int

    @property
    def label(self) -> str:
        return f"{self.object}.{self.name}"

    @property
    def lines(self) -> list[int]:
        """Physical cache lines the field covers."""
        if self.paddr is None:
            return []
        return list(range(self.paddr // self.line_size, (self.paddr + self.size - 1) // self.line_size + 1))

    def to_json(self) -> dict:
        d = asdict(self)
        d["lines"] = self.lines
        return d


def load_pagemap(path: Path) -> dict[int, int]:
    pages: dict[int, int] = {}
    for n, line in enumerate(Path(path).read_text().splitlines(), 1):
        try:
            v, p = (int(x, 16) for x in line.split())
        except ValueError:
            raise CohtbError(f"{path}:{n}: expected 'vaddr paddr', got {line!r}") from None
        pages[v & ~(PAGE - 1)] = p & ~(PAGE - 1)
    return pages


def translate(layout_map: dict, pagemap: dict[int, int] | None, where: str = "layout map") -> list[Field]:
    """Fields of the layout map with physical addresses (pagemap None: native run, addresses as they are)."""
    try:
        line_size = int(layout_map["cache_line"])
        objects = layout_map["objects"]
    except (KeyError, TypeError, ValueError):
        raise CohtbError(f"{where}: missing 'cache_line' or 'objects'") from None
    out = []
    for obj in objects:
        try:
            name, fields = obj["name"], obj["fields"]
        except KeyError as e:
            raise CohtbError(f"{where}: object without field {e}") from None
        delta = None
        if pagemap is not None:
            for f in fields:
                page = int(f["address"]) & ~(PAGE - 1)
                if page in pagemap:
                    delta = pagemap[page] - page
                    break
        for f in fields:
            try:
                vaddr, size = int(f["address"]), int(f["size"])
                fname = f["name"]
            except (KeyError, TypeError, ValueError):
                raise CohtbError(f"{where}: object {name}: a field lacks name/address/size") from None
            if pagemap is None:
                paddr, how = vaddr, "identity"
            elif (vaddr & ~(PAGE - 1)) in pagemap:
                paddr, how = pagemap[vaddr & ~(PAGE - 1)] | (vaddr & (PAGE - 1)), "tlb"
            elif delta is not None:
                paddr, how = vaddr + delta, "object-offset"
            else:
                paddr, how = None, "unmapped"
            out.append(Field(name, fname, vaddr, size, paddr, how, line_size))
    return out


@dataclass(frozen=True)
class LineRegion:
    """One monitor region: a single physical cache line and the fields that live on it."""

    index: int
    line: int
    fields: tuple[str, ...]


def regions_for(fields: list[Field], max_regions: int) -> list[LineRegion]:
    """One region per distinct line the fields touch, in layout-map order, at most max_regions."""
    by_line: dict[int, list[str]] = {}
    for f in fields:
        for line in f.lines:
            by_line.setdefault(line, []).append(f.label)
    return [LineRegion(i, line, tuple(names)) for i, (line, names) in enumerate(list(by_line.items())[:max_regions])]
