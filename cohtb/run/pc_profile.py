"""A run's time-proportional profile, named. gem5's PcProfile (gem5-configs/build/patches/pc-profile.patch says
what it counts) leaves, per core and instruction address, the instructions retired in the window and the ticks
charged to them: every tick of a core's window is charged to the instruction that retired at its end, or to
sleep, or to the instruction in flight when the window closed. Here the addresses are named by the functions of
the code the run ran (the guest kernel's vmlinux and the workload binary, from their symbol tables) and summed
per function and core into profile.json, which the run keeps; the raw pc-profile.tsv stays with gem5's files.

A core's ticks sum to the window exactly; a file where they do not is refused, as a profile that lost time.

gem5 also logs each retirement that took long enough to have waited for a line (pc-slow.tsv: tick, core, address);
each load's and store's event of the trace on the hottest lines is given to its core's next slow retirement, so
profile.json says which instructions made each line's misses: perf c2c's code addresses per cache line."""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cohtb.atomic import write_json_atomic
from cohtb.contract import Kind
from cohtb.errors import CohtbError
from cohtb.toolchain import tool_output
from cohtb.trace.events import read_all

FILE = "profile.json"      # what the run keeps
VERSION = 1
HEADER = "# cohtb pc-profile 1"
SLOW_HEADER = "# cohtb pc-slow 1"
# A load's or store's event (the trace's READ or WRITE: the line arrived) belongs to the core's next slow
# retirement when that comes within this many ticks: the instruction that waited for the line retires a few
# cycles after it arrives; one that never retired in the window has no instruction to name.
JOIN_TICKS = 100_000
SLOW = np.dtype([("tick", np.uint64), ("core", np.uint16), ("pc", np.uint64), ("data", np.uint64)])   # a slow retirement
HOT_LINES = 5   # the lines, most events first, whose events are named by their instructions
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


@dataclass(frozen=True)
class RawFiles:
    profile: Path
    slow: Path | None


def raw_files(run_dir: Path, roi: dict) -> RawFiles | None:
    """gem5's profile files that roi.json names, moved from the run directory into gem5's (they stay with it);
    None: a run without a profile."""
    if not roi.get("profile"):
        return None
    moved = []
    for key in ("profile", "profile_slow"):
        if roi.get(key):
            (run_dir / roi[key]).replace(run_dir / "gem5" / roi[key])
        moved.append(run_dir / "gem5" / roi[key] if roi.get(key) else None)
    return RawFiles(*moved)


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


def named(raw: Raw, namer: Namer) -> dict:
    """profile.json: per function, its instructions and ticks on each core; the addresses that took at least
    ADDRESS_SHARE of all ticks, each on its own; and each core's asleep and unretired ticks."""
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
            "code": {name: str(path) for name, path in namer.paths.items()},
            "functions": sorted(per_function.values(), key=lambda r: -sum(r["ticks"])),
            "addresses": addresses, "asleep": raw.asleep, "unretired": raw.unretired}


def read_slow(path: Path) -> tuple[int, np.ndarray]:
    """gem5's log of slow retirements: the least ticks a logged one took, and (tick, core, pc, data) records in
    retirement order (data: the physical address of the instruction's data access, 0 when none is known)."""
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise CohtbError(f"{path}: cannot read the slow retirements: {e}") from None
    if not lines or lines[0] != SLOW_HEADER:
        raise CohtbError(f"{path}: line 1: not a cohtb pc-slow 1 file (want '{SLOW_HEADER}')")
    m = re.fullmatch(r"# window (\d+) (\d+) slow (\d+)", lines[1] if len(lines) > 1 else "")
    if not m:
        raise CohtbError(f"{path}: line 2: want '# window BEGIN END slow TICKS'")
    rows = []
    for n, line in enumerate(lines, 1):
        if line.startswith("#"):
            continue
        f = line.split("\t")
        try:
            if len(f) != 5:
                raise ValueError("want 5 tab-separated fields")
            rows.append((int(f[0]), int(f[1]), int(f[2], 16), int(f[4], 16)))
        except ValueError as e:
            raise CohtbError(f"{path}: line {n}: {e}") from None
    return int(m.group(3)), np.array(rows, dtype=SLOW).reshape(-1)



def _joined(ev: np.ndarray, by_core: dict[int, np.ndarray]) -> tuple[list[tuple[int, int, int, int]], int]:
    """One line's load and store events, each with its core's next slow retirement within JOIN_TICKS: (core, pc,
    data, kind) of those that have one, and how many have none."""
    joined, unmatched = [], 0
    for core in np.unique(ev["core"]):
        mine, retired = ev[ev["core"] == core], by_core.get(int(core))
        if retired is None or not len(retired):
            unmatched += len(mine)
            continue
        at = np.searchsorted(retired["tick"], mine["tick"], side="left")
        ok = at < len(retired)
        ok[ok] &= retired["tick"][at[ok]] - mine["tick"][ok] <= JOIN_TICKS
        unmatched += int((~ok).sum())
        joined += [(int(core), int(pc), int(data), int(kind))
                   for pc, data, kind in zip(retired["pc"][at[ok]], retired["data"][at[ok]], mine["kind"][ok])]
    return joined, unmatched


def code_per_line(recs: np.ndarray, slow: np.ndarray, namer: "Namer", line_size: int,
                  top: int = HOT_LINES) -> list[dict]:
    """For the `top` lines with the most loads' and stores' events: each instruction that waited for the line (its
    core's next slow retirement within JOIN_TICKS of the event), with its loads and stores, most first, and the
    bytes of the line it accessed (data_offsets: the instruction's data address in the line -> its events); and
    per byte accessed, its loads and stores and how many cores made them (bytes). An access to another line, or
    none known, names no byte."""
    misses = recs[(recs["kind"] == Kind.READ) | (recs["kind"] == Kind.WRITE)]
    lines, counts = np.unique(misses["line"], return_counts=True)
    hottest = lines[np.argsort(-counts, kind="stable")[:top]]
    by_core = {int(c): slow[slow["core"] == c] for c in np.unique(slow["core"])}
    out = []
    for line in hottest:
        ev = misses[misses["line"] == line]
        joined, unmatched = _joined(ev, by_core)
        rows: dict[int, list[int]] = {}
        offsets: dict[int, dict[int, int]] = {}
        per_byte: dict[int, list] = {}   # offset -> [loads, stores, cores loading, cores storing]
        for core, pc, data, kind in joined:
            store = kind == Kind.WRITE
            rows.setdefault(pc, [0, 0])[store] += 1
            if data and data // line_size == int(line):
                at_pc = offsets.setdefault(pc, {})
                at_pc[data % line_size] = at_pc.get(data % line_size, 0) + 1
                b = per_byte.setdefault(data % line_size, [0, 0, set(), set()])
                b[store] += 1
                b[2 + store].add(core)
        code = []
        for pc, (loads, stores) in sorted(rows.items(), key=lambda kv: -sum(kv[1])):
            obj, symbol, offset = namer.name(pc)
            code.append({"address": f"{pc:#x}", "object": obj, "symbol": symbol, "offset": offset,
                         "loads": loads, "stores": stores,
                         "data_offsets": {str(k): v for k, v in sorted(offsets.get(pc, {}).items())}})
        out.append({"line": int(line), "loads": int((ev["kind"] == Kind.READ).sum()),
                    "stores": int((ev["kind"] == Kind.WRITE).sum()), "unmatched": unmatched, "code": code,
                    "bytes": {str(k): {"loads": b[0], "stores": b[1], "load_cores": len(b[2]), "store_cores": len(b[3])}
                              for k, b in sorted(per_byte.items())}})
    return out


def keep(run_dir: Path, raw: RawFiles, code: list[Code], events: Path | None) -> None:
    """Names the raw profile, joins the slow retirements to the events of the hottest lines (a traced run), and
    writes profile.json into the run directory."""
    namer = Namer(code)
    doc = named(read_raw(raw.profile), namer)
    if raw.slow is not None and events is not None:
        header, recs = read_all(events)
        slow_ticks, slow = read_slow(raw.slow)
        doc.update(slow_ticks=slow_ticks, join_ticks=JOIN_TICKS,
                   lines=code_per_line(recs, slow, namer, header.line_size))
    write_json_atomic(run_dir / FILE, doc)


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
