"""A full-system run's trace lines named by what the kernel keeps there: named address ranges (globals, per-CPU
variables, fields of reported objects; found by cohtb/fs/symbols.py and cohtb/fs/runner.py) against the lines the
trace touched. The recorder names the lines once the trace is ingested."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from cohtb.contract import DEFAULT_LINE_SIZE


@dataclass(frozen=True)
class Symbol:
    paddr: int
    size: int
    name: str


def name_lines(lines: set[int], symbols: list[Symbol], line_size: int = DEFAULT_LINE_SIZE) -> list[dict]:
    """[{line, symbols}] for each of `lines` (paddr // line_size) holding bytes of at least one symbol."""
    wanted = sorted(lines)
    names: dict[int, list[str]] = {}
    for s in symbols:
        first, last = s.paddr // line_size, (s.paddr + max(s.size, 1) - 1) // line_size
        for k in range(bisect.bisect_left(wanted, first), bisect.bisect_right(wanted, last)):
            names.setdefault(wanted[k], []).append(s.name)
    return [{"line": line, "symbols": names[line]} for line in sorted(names)]
