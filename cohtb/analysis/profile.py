"""Where a run's simulated time went: its kept profile (cohtb/run/pc_profile.py) as perf report shows one, each
function's share of all cores' window ticks, with the spread of that share over the cores, the instructions it
retired and its time per instruction; and two runs' profiles side by side.

A share is of every tick of every profiled core, halted ones included ("[asleep]", as perf counts the idle task),
so a run's shares sum to 100%."""

from __future__ import annotations

from dataclasses import dataclass

from cohtb.run.runs import Run

ASLEEP, UNRETIRED = "[asleep]", "[unretired]"   # the ticks no instruction took: halted, cut by the window's end


@dataclass(frozen=True)
class FunctionShare:
    object: str          # perf's shared object: "[kernel.kallsyms]" or the binary's name
    symbol: str
    kernel: bool
    share: float         # of all cores' window ticks
    core_min: float      # the least and most of one core's window it took
    core_max: float
    instructions: int
    ticks: int

    @property
    def ns_per_instruction(self) -> float | None:
        return self.ticks / 1e3 / self.instructions if self.instructions else None


def shares(doc: dict) -> list[FunctionShare]:
    """The profile's functions, most time first, then its asleep and unretired time."""
    window = doc["window_ticks"][1] - doc["window_ticks"][0]
    cores = doc["cores"]
    total = window * cores

    def row(obj: str, symbol: str, kernel: bool, ticks: list[int], insts: list[int]) -> FunctionShare:
        per_core = [t / window for t in ticks] if window else [0.0] * cores
        return FunctionShare(obj, symbol, kernel, sum(ticks) / total if total else 0.0, min(per_core), max(per_core),
                             sum(insts), sum(ticks))

    rows = [row(f["object"], f["symbol"], f.get("kernel", False), f["ticks"], f["instructions"]) for f in doc["functions"]]
    rows.sort(key=lambda r: -r.share)
    for name, key in ((ASLEEP, "asleep"), (UNRETIRED, "unretired")):
        if any(doc[key]):
            rows.append(row("", name, False, doc[key], [0] * cores))
    return rows


def of(run: Run) -> list[FunctionShare] | None:
    """The run's profile, or None: a run recorded before profiles, or by a gem5 without the patch."""
    doc = run.profile()
    return shares(doc) if doc is not None else None


def share_of(rows: list[FunctionShare], symbol: str) -> float:
    """A function's share, 0 when it took no time (perf would not list it)."""
    return sum(r.share for r in rows if r.symbol == symbol)


@dataclass(frozen=True)
class HotInstruction:
    """One instruction that took a kept share of the window (profile.json "addresses"): perf annotate's hottest
    lines, with exact counts. Executions per operation say what a share cannot: a loop's instruction retired
    several times for each operation is retrying."""
    address: str
    object: str
    symbol: str
    offset: int
    executions: int
    ticks: int
    share: float                    # of all cores' window ticks
    per_operation: float | None     # executions over the profiled region's operations (None: it had none)

    @property
    def ns_per_execution(self) -> float | None:
        return self.ticks / 1e3 / self.executions if self.executions else None


def hot_instructions(doc: dict, operations: float) -> list[HotInstruction]:
    """The profile's kept instructions, most time first; `operations`: the profiled region's (Run.region_ops)."""
    window = doc["window_ticks"][1] - doc["window_ticks"][0]
    total = window * doc["cores"]
    rows = [HotInstruction(a["address"], a["object"], a["symbol"], a["offset"], a["instructions"], a["ticks"],
                           a["ticks"] / total if total else 0.0, a["instructions"] / operations if operations else None)
            for a in doc.get("addresses", ())]
    return sorted(rows, key=lambda r: -r.ticks)
