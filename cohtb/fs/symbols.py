"""Names for the kernel's own cache lines in a full-system trace: the vmlinux data symbols (nm) on each line.

The layout map names the fields of the objects the guest reports (the file's dentry, its directory's, its
inode); every other line the trace shows is the kernel's too. Those in the kernel image -- globals such as
locks, counters, seqcounts -- are named here from the vmlinux's symbol table, placed in physical memory by
its program headers (gem5 loads vmlinux at the physical addresses they give). Slab objects and the per-CPU
areas are allocated at boot and have no symbol: they stay unnamed, as do the __init pages (freed after boot
and reused by the allocators)."""

from __future__ import annotations

import bisect
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cohtb.contract import DEFAULT_LINE_SIZE
from cohtb.errors import CohtbError

DATA_TYPES = set("bBdDrRvV")   # nm: bss, data, read-only data, weak objects


@dataclass(frozen=True)
class Symbol:
    paddr: int
    size: int
    name: str


def _run(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    except FileNotFoundError:
        raise CohtbError(f"{cmd[0]} not found (binutils: `make kernel` installs it)") from None
    except subprocess.CalledProcessError as e:
        raise CohtbError(f"{' '.join(cmd)}: {e.stderr.strip().splitlines()[-1] if e.stderr.strip() else 'failed'}") from None


def load_segments(vmlinux: Path) -> list[tuple[int, int, int]]:
    """(vaddr, paddr, memsz) of each PT_LOAD segment (readelf -lW)."""
    segs = []
    for line in _run(["readelf", "-lW", str(vmlinux)]).splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[2], 16), int(f[3], 16), int(f[5], 16)))
    return segs


def data_symbols(vmlinux: Path) -> list[Symbol]:
    """The image's data objects with their physical addresses, sorted. Per-CPU variables (addresses from 0,
    a template copied at boot) fall in no loaded segment's kernel range and are left out."""
    segs = [s for s in load_segments(vmlinux) if s[0] >= 0xffffffff80000000]
    text = _run(["nm", "-S", "--defined-only", str(vmlinux)])
    # __init data is freed after boot and its pages handed to the allocators: a name there would be wrong
    marks = {n: int(a, 16) for a, n in re.findall(r"^([0-9a-f]+) \S (__init_begin|__init_end)$", text, re.M)}
    init = (marks.get("__init_begin", 0), marks.get("__init_end", 0))
    out = []
    for line in text.splitlines():
        m = re.fullmatch(r"([0-9a-f]+) ([0-9a-f]+) (\S) (\S+)", line.strip())
        if not m or m.group(3) not in DATA_TYPES:
            continue
        vaddr, size = int(m.group(1), 16), int(m.group(2), 16)
        if init[0] <= vaddr < init[1]:
            continue
        for v, p, n in segs:
            if v <= vaddr < v + n:
                out.append(Symbol(p + vaddr - v, size, m.group(4)))
                break
    return sorted(out, key=lambda s: s.paddr)


def name_lines(lines: set[int], symbols: list[Symbol], line_size: int = DEFAULT_LINE_SIZE) -> list[dict]:
    """[{line, symbols}] for each of `lines` (paddr // line_size) holding bytes of at least one symbol."""
    wanted = sorted(lines)
    names: dict[int, list[str]] = {}
    for s in symbols:
        first, last = s.paddr // line_size, (s.paddr + max(s.size, 1) - 1) // line_size
        for k in range(bisect.bisect_left(wanted, first), bisect.bisect_right(wanted, last)):
            names.setdefault(wanted[k], []).append(s.name)
    return [{"line": line, "symbols": names[line]} for line in sorted(names)]
