"""A run's time-proportional profile, named. gem5's PcProfile (gem5-configs/build/patches/pc-profile.patch says
what it counts) leaves, per core and instruction address, the instructions retired in the window and the ticks
charged to them: every tick of a core's window is charged to the instruction that retired at its end, or to
sleep, or to the instruction in flight when the window closed. Here the addresses are named by the functions of
the code the run ran (the guest kernel's vmlinux and the workload binary, from their symbol tables) and summed
per function and core into profile.json, which the run keeps; the raw pc-profile.tsv stays with gem5's files.

A core's ticks sum to the window exactly; a file where they do not is refused, as a profile that lost time."""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from pathlib import Path

from cohtb.atomic import write_json_atomic
from cohtb.errors import CohtbError
from cohtb.toolchain import tool_output

RAW = "pc-profile.tsv"     # what gem5 wrote beside roi.json (gem5-configs/multisocket/pc_profile.py)
FILE = "profile.json"      # what the run keeps
VERSION = 1
HEADER = "# cohtb pc-profile 1"
KERNEL_HALF = 0xffff800000000000   # x86-64: addresses from here up are the kernel's, below the process's
UNKNOWN = "[unknown]"              # an address no symbol covers (perf's name for it)
CODE_TYPES = set("tTwW")           # nm: text symbols, weak ones included
# An address is kept on its own (profile.json "addresses") when it took at least this share of all cores'
# ticks: enough to say which instruction of a hot function holds the time, few enough to keep with the run.
ADDRESS_SHARE = 0.001


@dataclass(frozen=True)
class Code:
    """A binary whose functions name the profile's addresses."""
    name: str     # as perf names a shared object: "[kernel.kallsyms]", or the binary's file name
    path: Path
    kernel: bool  # its functions are at kernel addresses (the upper half); else at the process's


@dataclass(frozen=True)
class Raw:
    window: tuple[int, int]               # ticks: when the window opened and closed
    cores: int
    cells: list[tuple[int, int, int, int]]   # (core, address, instructions, ticks)
    asleep: list[int]                     # ticks each core spent halted
    unretired: list[int]                  # ticks each core spent on an instruction the window's end cut


def read_raw(path: Path) -> Raw:
    """gem5's pc-profile.tsv; a malformed line is refused naming the file and line."""
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise CohtbError(f"{path}: cannot read the profile: {e}") from None
    if not lines or lines[0] != HEADER:
        raise CohtbError(f"{path}: line 1: not a cohtb pc-profile 1 file (want '{HEADER}')")
    m = re.fullmatch(r"# window (\d+) (\d+)", lines[1] if len(lines) > 1 else "")
    if not m or int(m.group(2)) < int(m.group(1)):
        raise CohtbError(f"{path}: line 2: want '# window BEGIN END' with END >= BEGIN")
    window = (int(m.group(1)), int(m.group(2)))
    cells, asleep, unretired = [], {}, {}
    for n, line in enumerate(lines[2:], 3):
        if line.startswith("#"):
            continue
        f = line.split("\t")
        try:
            if len(f) != 4:
                raise ValueError("want 4 tab-separated fields")
            core, insts, ticks = int(f[0]), int(f[2]), int(f[3])
            if min(core, insts, ticks) < 0:
                raise ValueError("a negative count")
            if f[1] == "asleep":
                asleep[core] = ticks
            elif f[1] == "unretired":
                unretired[core] = ticks
            else:
                cells.append((core, int(f[1], 16), insts, ticks))
        except ValueError as e:
            raise CohtbError(f"{path}: line {n}: {e}") from None
    cores = len(asleep)
    if sorted(asleep) != list(range(cores)) or sorted(unretired) != list(range(cores)) or \
            any(c[0] >= cores for c in cells):
        raise CohtbError(f"{path}: want an asleep and an unretired line for each core 0..N-1, and no other core")
    raw = Raw(window, cores, cells, [asleep[c] for c in range(cores)], [unretired[c] for c in range(cores)])
    for core, total in enumerate(core_ticks(raw)):
        if total != window[1] - window[0]:
            raise CohtbError(f"{path}: core {core}'s ticks sum to {total}, not to the window's "
                             f"{window[1] - window[0]}: the profile lost or doubled time")
    return raw


def core_ticks(raw: Raw) -> list[int]:
    totals = [a + u for a, u in zip(raw.asleep, raw.unretired)]
    for core, _, _, ticks in raw.cells:
        totals[core] += ticks
    return totals


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


def named(raw: Raw, code: list[Code]) -> dict:
    """profile.json: per function, its instructions and ticks on each core; the addresses that took at least
    ADDRESS_SHARE of all ticks, each on its own; and each core's asleep and unretired ticks."""
    namer = Namer(code)
    per_function: dict[tuple[bool, str, str], dict] = {}
    per_address: dict[int, list[int]] = {}
    for core, address, insts, ticks in raw.cells:
        obj, symbol, _ = namer.name(address)
        row = per_function.setdefault((address >= KERNEL_HALF, obj, symbol), {"object": obj, "symbol": symbol, "kernel": address >= KERNEL_HALF,
                                                      "instructions": [0] * raw.cores, "ticks": [0] * raw.cores})
        row["instructions"][core] += insts
        row["ticks"][core] += ticks
        total = per_address.setdefault(address, [0, 0])
        total[0] += insts
        total[1] += ticks
    all_ticks = raw.cores * (raw.window[1] - raw.window[0])
    addresses = []
    for address, (insts, ticks) in sorted(per_address.items()):
        if all_ticks and ticks >= ADDRESS_SHARE * all_ticks:
            obj, symbol, offset = namer.name(address)
            addresses.append({"address": f"{address:#x}", "object": obj, "symbol": symbol, "offset": offset,
                              "instructions": insts, "ticks": ticks})
    return {"cohtb_profile": VERSION, "window_ticks": list(raw.window), "cores": raw.cores,
            "code": {c.name: str(c.path) for c in code},
            "functions": sorted(per_function.values(), key=lambda r: -sum(r["ticks"])),
            "addresses": addresses, "asleep": raw.asleep, "unretired": raw.unretired}


def keep(run_dir: Path, raw_path: Path, code: list[Code]) -> str:
    """Names the raw profile and writes profile.json into the run directory; returns its name (manifest files)."""
    write_json_atomic(run_dir / FILE, named(read_raw(raw_path), code))
    return FILE


def load(path: Path) -> dict:
    """A kept profile.json, checked enough that reading it cannot fail later."""
    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise CohtbError(f"{path}: cannot read the profile: {e}") from None
    if not isinstance(doc, dict) or doc.get("cohtb_profile") != VERSION:
        raise CohtbError(f"{path}: field 'cohtb_profile': want {VERSION}")
    cores = doc.get("cores")
    if not isinstance(cores, int) or cores < 1:
        raise CohtbError(f"{path}: field 'cores': want a positive integer")
    for key in ("asleep", "unretired"):
        if not _counts(doc.get(key), cores):
            raise CohtbError(f"{path}: field '{key}': want {cores} non-negative integers")
    for i, row in enumerate(doc.get("functions") or []):
        if not isinstance(row, dict) or not isinstance(row.get("symbol"), str) or not isinstance(row.get("object"), str) \
                or not _counts(row.get("ticks"), cores) or not _counts(row.get("instructions"), cores):
            raise CohtbError(f"{path}: field 'functions[{i}]': want object, symbol, and {cores} instructions and ticks")
    w = doc.get("window_ticks")
    if not (isinstance(w, list) and len(w) == 2 and all(isinstance(t, int) for t in w) and w[1] >= w[0]):
        raise CohtbError(f"{path}: field 'window_ticks': want [begin, end]")
    return doc


def _counts(value, n: int) -> bool:
    return isinstance(value, list) and len(value) == n and all(isinstance(v, int) and v >= 0 for v in value)
