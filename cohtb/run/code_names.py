"""Names for code addresses: the functions of the binaries a run ran (the guest kernel's vmlinux, the workload
binary), from their symbol tables (nm), as perf names an address: its shared object, function and offset."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from pathlib import Path

from cohtb.toolchain import tool_output

KERNEL_HALF = 0xffff800000000000   # x86-64: addresses from here up are the kernel's, below the process's
UNKNOWN = "[unknown]"              # an address no symbol covers (perf's name for it)
CODE_TYPES = set("tTwW")           # nm: text symbols, weak ones included


@dataclass(frozen=True)
class Code:
    """A binary whose functions name the profile's addresses."""
    name: str     # as perf names a shared object: "[kernel.kallsyms]", or the binary's file name
    path: Path
    kernel: bool  # its functions are at kernel addresses (the upper half); else at the process's


def functions(code: Code) -> list[tuple[int, int, str]]:
    """(start, end, name) of each function in the binary's symbol table, by address."""
    found = []
    for line in tool_output(["nm", "-S", "--defined-only", str(code.path)]).splitlines():
        m = re.fullmatch(r"([0-9a-f]+) ([0-9a-f]+) (\S) (\S+)", line.strip())
        if m and m.group(3) in CODE_TYPES and int(m.group(2), 16):
            start = int(m.group(1), 16)
            found.append((start, start + int(m.group(2), 16), m.group(4)))
    return sorted(found)


class Namer:
    """An address -> (object, symbol, offset), by the functions of the kernel and of the process's binary."""

    def __init__(self, code: list[Code]):
        self.tables = {kernel: [] for kernel in (True, False)}
        self.objects = {kernel: UNKNOWN for kernel in (True, False)}
        self.paths = {c.name: c.path for c in code}
        for c in code:
            self.objects[c.kernel] = c.name
            self.tables[c.kernel] = functions(c)
        self.starts = {k: [f[0] for f in table] for k, table in self.tables.items()}

    def name(self, address: int) -> tuple[str, str, int]:
        kernel = address >= KERNEL_HALF
        table, i = self.tables[kernel], bisect.bisect_right(self.starts[kernel], address) - 1
        if i >= 0 and address < table[i][1]:
            return self.objects[kernel], table[i][2], address - table[i][0]
        return self.objects[kernel], UNKNOWN, 0
