"""A run's time-proportional profile, named. gem5's PcProfile (gem5-configs/build/patches/pc-profile.patch says
what it counts) leaves, per core and instruction address, the instructions retired in the window and the ticks
charged to them: every tick of a core's window is charged to the instruction that retired at its end, or to
sleep, or to the instruction in flight when the window closed. Here the addresses are named by the functions of
the code the run ran (the guest kernel's vmlinux and the workload binary, from their symbol tables) and summed
per function and core into profile.json, which the run keeps; the raw pc-profile.tsv stays with gem5's files.

A core's ticks sum to the window exactly; a file where they do not is refused, as a profile that lost time.

The hottest lines' misses named by the instructions that made them (cohtb/run/line_code.py) go into
profile.json too, as "lines"."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pydantic import ConfigDict, NonNegativeInt, PositiveInt

from cohtb.atomic import write_json_atomic
from cohtb.data_file import Record, read_json, validated
from cohtb.errors import CohtbError
from cohtb.run.code_names import KERNEL_HALF, Code, Namer
from cohtb.run.line_code import JOIN_TICKS, code_per_line, read_slow
from cohtb.trace.events import read_all

FILE = "profile.json"      # what the run keeps
VERSION = 1
HEADER = "# cohtb pc-profile 1"
# An address is kept on its own (profile.json "addresses") when it took at least this share of all cores'
# ticks: enough to say which instruction of a hot function holds the time, few enough to keep with the run.
ADDRESS_SHARE = 0.001


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


class _Function(Record):
    model_config = ConfigDict(extra="allow", frozen=True, strict=True)   # and more, which load does not check
    object: str
    symbol: str
    instructions: tuple[NonNegativeInt, ...]
    ticks: tuple[NonNegativeInt, ...]


class _Address(Record):
    model_config = ConfigDict(extra="allow", frozen=True, strict=True)
    address: str
    object: str
    symbol: str
    offset: NonNegativeInt
    instructions: NonNegativeInt
    ticks: NonNegativeInt


class _Profile(Record):
    model_config = ConfigDict(extra="allow", frozen=True, strict=True)
    cohtb_profile: int
    cores: PositiveInt
    asleep: tuple[NonNegativeInt, ...]
    unretired: tuple[NonNegativeInt, ...]
    window_ticks: tuple[int, int]
    functions: tuple[_Function, ...] = ()
    addresses: tuple[_Address, ...] = ()


def load(path: Path) -> dict:
    """A kept profile.json, checked enough that reading it cannot fail later (cohtb/data_file.py's rule, then its
    counts per core and its window)."""
    doc = read_json(path)
    p = validated(_Profile, doc, path)
    if p.cohtb_profile != VERSION:
        raise CohtbError(f"{path}: field 'cohtb_profile': want {VERSION}")
    for key in ("asleep", "unretired"):
        if len(getattr(p, key)) != p.cores:
            raise CohtbError(f"{path}: field '{key}': want {p.cores} non-negative integers")
    for i, row in enumerate(p.functions):
        if len(row.ticks) != p.cores or len(row.instructions) != p.cores:
            raise CohtbError(f"{path}: field 'functions.{i}': want {p.cores} instructions and ticks")
    if p.window_ticks[1] < p.window_ticks[0]:
        raise CohtbError(f"{path}: field 'window_ticks': want [begin, end]")
    return doc
