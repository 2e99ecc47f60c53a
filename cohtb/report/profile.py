"""Profiles as tables: one run's, in perf report's shape (the function, its object, its share of the window, the
spread of that share over the cores), two runs' side by side, and a declaration's arms beside the seed's published
profiles under its profile band."""

from __future__ import annotations

from cohtb.analysis.profile import FunctionShare, HotInstruction
from cohtb.experiments.declarations import Declaration
from cohtb.experiments.profile_band import ProfileCheck
from cohtb.run.pc_profile import ADDRESS_SHARE
from cohtb.run.runs import Run
from cohtb.tables import Table, count

TOP = 15   # functions shown; the rest are summed in one row


def _symbol(r: FunctionShare) -> str:
    return r.symbol if not r.object else f"[{'k' if r.kernel else '.'}] {r.symbol}"   # perf's mode marks


def _top(rows: list[FunctionShare], top: int) -> tuple[list[FunctionShare], float]:
    shown = rows[:top]
    return shown, sum(r.share for r in rows[top:])


def describe(run: Run) -> str:
    s = run.spec
    return f"{run.id}: " + ", ".join([s.workload, *([s.kernel] if s.kernel else []),
                                      f"{s.machine} {s.sockets}x{s.cores_per_socket}"])


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


def instructions_table(run: Run, rows: list[HotInstruction], top: int = TOP) -> Table:
    """perf annotate's hottest instructions, with exact counts: each kept instruction's share of the window, how
    often it retired per operation and how long each retirement waited."""
    body = [[r.address, f"{r.symbol}+{r.offset:#x}", f"{100 * r.share:.2f}%", f"{r.executions:,}",
             f"{r.per_operation:.2f}" if r.per_operation is not None else "",
             f"{r.ns_per_execution:.1f}" if r.ns_per_execution is not None else ""] for r in rows[:top]]
    return Table(f"The hottest instructions: {describe(run)}",
                 ["code address", "function+offset", "Overhead", "Retired", "per operation",
                  "ns per retirement"], body,
                 note=f"The instructions that took at least {ADDRESS_SHARE:.1%} of all cores' window ticks (the run "
                      "keeps only those), most first. Retired: exact, over every core's window; an instruction of a "
                      "retry loop retired more than once per operation is retrying. ns per retirement: the ticks "
                      "charged to it (from the previous retirement to its own) over its retirements.")


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
            rows.append([f"{c.arm}: {_as_simulated(symbol, c.counterparts.get(symbol, (symbol,)))}",
                         f"{100 * published:.2f}%", simulated,
                         ("inside" if c.inside(symbol) else "outside") if shares and c.judged and c.runs else ""])
    verdicts = "; ".join(f"{c.arm} arm ({c.runs} of {count(c.of_runs, 'run')} profiled): {c.verdict}" for c in checks)
    return Table(f"Declaration {d.id}, {label}: where the window's time went, simulated beside published "
                 f"({checks[0].published.tool}, {checks[0].published.where})",
                 ["arm: function", "published", "simulated (min-max)", f"within {d.profile_band_points:g} points"],
                 rows, f"Profile band: {verdicts}. Simulated: the function's share of every core's window, time-"
                       "proportional (docs/gem5.md, 'The profile of the window'); the new arm is shown, not judged.")


def _as_simulated(function: str, guest: tuple[str, ...]) -> str:
    """A published function's name, with the guest's functions summed for it where they are others."""
    return function if guest == (function,) else f"{function} (simulated: {' + '.join(guest)})"


def outcomes_table(d: Declaration, answers: list[tuple[str, bool]]) -> Table:
    return Table(f"Declaration {d.id}, profile band: what it can say, found before any run",
                 ["the base arm's simulated shares", "answer"],
                 [[what, "reaches the band" if passes else "outside the band"] for what, passes in answers],
                 f"Each function named ({', '.join(_as_simulated(f, d.simulated_symbols(f)) for f in d.profile_functions)}) "
                 f"must lie within {d.profile_band_points:g} points of its published share, as the mean of the base "
                 "arm's repetitions.")


def line_names(run: Run) -> dict[int, str]:
    """Each line's names in the run: the layout's fields on it, else the kernel's symbols there."""
    names: dict[int, list[str]] = {}
    for rec in run.manifest.layout:
        for line in rec.lines:
            names.setdefault(line, []).append(f"{rec.object}.{rec.name}")
    for ls in run.manifest.kernel_symbols:
        names.setdefault(ls.line, list(ls.symbols))
    return {line: ", ".join(n[:4]) + (f" and {len(n) - 4} more" if len(n) > 4 else "") for line, n in names.items()}


def bytes_text(run: Run, line: int, line_size: int, offsets: dict[str, int]) -> str:
    """The bytes of a line an instruction accessed, each with the layout field there ("+0x60 d_lockref x12")."""
    out = []
    for offset, n in sorted(offsets.items(), key=lambda kv: -kv[1]):
        at = line * line_size + int(offset)
        names = [rec.name for rec in run.manifest.layout if rec.paddr is not None and rec.paddr <= at < rec.paddr + rec.size]
        out.append(f"+{int(offset):#x}{' ' + '/'.join(names) if names else ''} x{n}")
    return ", ".join(out[:3]) + (f" and {len(out) - 3} more" if len(out) > 3 else "")


def lines_table(run: Run, doc: dict, top: int = 6) -> Table:
    """perf c2c's shared data cache lines with their code addresses: for each of the hottest lines, the
    instructions whose loads and stores missed on it (the events the recorder joined to slow retirements)."""
    names = line_names(run)
    line_size = run.manifest.layout[0].line_size if run.manifest.layout else 64
    body = []
    for x in doc["lines"]:
        body.append([f"{x['line'] * line_size:#x} ({names.get(x['line'], 'unnamed')})", "", f"{x['loads']:,}",
                     f"{x['stores']:,}", f"{x['unmatched']:,}", ""])
        for c in x["code"][:top]:
            body.append([f"  {c['address']}", f"{c['symbol']}+{c['offset']:#x}", f"{c['loads']:,}", f"{c['stores']:,}",
                         "", bytes_text(run, x["line"], line_size, c.get("data_offsets", {}))])
        if len(x["code"]) > top:
            rest = x["code"][top:]
            body.append([f"  {len(rest)} more", "", f"{sum(c['loads'] for c in rest):,}",
                         f"{sum(c['stores'] for c in rest):,}", "", ""])
    return Table(f"The hottest lines' misses by the code that made them: {describe(run)}",
                 ["line (names) / code address", "function+offset", "loads", "stores", "no instruction",
                  "bytes accessed (field) x events"], body,
                 "Per line, its loads' and stores' events in the trace (each a miss: the line came from elsewhere), "
                 "and under it the instructions that waited for them: a core's event joined to its next retirement "
                 f"that took {doc['slow_ticks'] / 1e3:g} ns or more, within {doc['join_ticks'] / 1e3:g} ns "
                 "(cohtb/run/pc_profile.py). 'no instruction': none retired in time, as for a miss at the window's "
                 "end. Bytes: the instruction's data address in the line, where gem5's core reports it.")
