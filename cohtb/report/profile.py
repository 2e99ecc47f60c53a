"""Profiles as tables: one run's, in perf report's shape (the function, its object, its share of the window, the
spread of that share over the cores), two runs' side by side, and a declaration's arms beside the seed's published
profiles under its profile band."""

from __future__ import annotations

from cohtb.analysis.profile import FunctionShare
from cohtb.experiments.declarations import Declaration
from cohtb.experiments.profile_band import ProfileCheck
from cohtb.run.runs import Run
from cohtb.tables import Table

TOP = 15   # functions shown; the rest are summed in one row


def _symbol(r: FunctionShare) -> str:
    return r.symbol if not r.object else f"[{'k' if r.kernel else '.'}] {r.symbol}"   # perf's mode marks


def _top(rows: list[FunctionShare], top: int) -> tuple[list[FunctionShare], float]:
    shown = rows[:top]
    return shown, sum(r.share for r in rows[top:])


def describe(run: Run) -> str:
    s = run.spec
    return f"{run.id}: {s.workload}, {s.kernel}, {s.machine} {s.sockets}x{s.cores_per_socket}"


def table(run: Run, rows: list[FunctionShare], top: int = TOP) -> Table:
    shown, rest = _top(rows, top)
    body = [[_symbol(r), r.object, f"{100 * r.share:.2f}%", f"{100 * r.core_min:.1f}-{100 * r.core_max:.1f}%",
             f"{r.instructions:,}", f"{r.ns_per_instruction:.2f}" if r.ns_per_instruction is not None else ""]
            for r in shown]
    if rest:
        body.append([f"{len(rows) - len(shown)} more", "", f"{100 * rest:.2f}%", "", "", ""])
    return Table(f"Where the window's time went: {describe(run)}",
                 ["Symbol", "Shared object", "Overhead", "One core's share (min-max)", "Instructions", "ns/instr."],
                 body, note="Overhead: the share of all profiled cores' window ticks, each tick charged to the "
                            "instruction that retired at its end (time-proportional; gem5-configs/build/patches/"
                            "pc-profile.patch). [k] kernel, [.] user space.")


def side_by_side(base: Run, base_rows: list[FunctionShare], new: Run, new_rows: list[FunctionShare],
                 top: int = TOP) -> Table:
    """The functions either run spent most time in, each run's share and the change in points."""
    by_base = {(r.object, r.symbol): r for r in base_rows}
    by_new = {(r.object, r.symbol): r for r in new_rows}
    keys = sorted(set(by_base) | set(by_new),
                  key=lambda k: -max(by_base[k].share if k in by_base else 0, by_new[k].share if k in by_new else 0))
    body = []
    for k in keys[:top]:
        b = by_base[k].share if k in by_base else 0.0
        n = by_new[k].share if k in by_new else 0.0
        body.append([_symbol(by_base.get(k) or by_new[k]), f"{100 * b:.2f}%", f"{100 * n:.2f}%", f"{100 * (n - b):+.2f}"])
    return Table(f"Profiles: {base.id} vs {new.id}", ["Symbol", "Base", "New", "Change (points)"], body,
                 note=f"base {describe(base)}; new {describe(new)}")


def band_table(d: Declaration, label: str, checks: list[ProfileCheck]) -> Table:
    """A point's arms beside their published profiles: each function's simulated share (mean, and the extremes over
    the repetitions) and the published one; the base arm's verdict under the declared band."""
    rows = []
    for c in checks:
        for symbol, published in c.published.functions:
            shares = c.shares.get(symbol)
            simulated = (f"{100 * c.mean(symbol):.2f}% ({100 * min(shares):.2f}-{100 * max(shares):.2f})"
                         if shares else "not held" if c.arm == "base" else "-")
            rows.append([f"{c.arm}: {symbol}", f"{100 * published:.2f}%", simulated,
                         ("inside" if c.inside(symbol) else "outside") if shares and c.judged and c.runs else ""])
    verdicts = "; ".join(f"{c.arm} arm ({c.runs} of {c.of_runs} runs profiled): {c.verdict}" for c in checks)
    return Table(f"Declaration {d.id}, {label}: where the window's time went, simulated beside published "
                 f"({checks[0].published.tool}, {checks[0].published.where})",
                 ["arm: function", "published", "simulated (min-max)", f"within {d.profile_band_points:g} points"],
                 rows, f"Profile band: {verdicts}. Simulated: the function's share of every core's window, time-"
                       "proportional (docs/gem5.md, 'The profile of the window'); the new arm is shown, not judged.")


def outcomes_table(d: Declaration, answers: list[tuple[str, bool]]) -> Table:
    return Table(f"Declaration {d.id}, profile band: what it can say, found before any run",
                 ["the base arm's simulated shares", "answer"],
                 [[what, "reaches the band" if passes else "outside the band"] for what, passes in answers],
                 f"Each function named ({', '.join(d.profile_functions)}) must lie within {d.profile_band_points:g} "
                 "points of its published share, as the mean of the base arm's repetitions.")
