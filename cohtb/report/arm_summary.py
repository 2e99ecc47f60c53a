"""Per arm of an experiment (one side of a point, one label of a series): its runs held against gem5, transfer by
transfer, and what they cost in host time. The page shows it so that a verdict never rests on a run the monitor
did not agree with gem5 on, and so that the cost of repeating an experiment is known before anyone launches it."""

from __future__ import annotations

from cohtb.analysis.metrics import RunMetrics
from cohtb.tables import Table, count


def arm_table(title: str, arms: list[tuple[str, list[RunMetrics]]]) -> Table:
    """One row per arm; the last row adds up the experiment, counting each boot checkpoint once."""
    rows, boots, agreeing = [], {}, 0
    for name, runs in arms:
        checked = [m.check for m in runs if not m.check.get("verdict", "not checked").startswith("not checked")]
        agree = sum(c["verdict"].startswith("agrees") for c in checked)
        agreeing += agree
        cpu = [m.run.manifest.gem5.cpu_seconds for m in runs if m.run.manifest.gem5.cpu_seconds is not None]
        for m in runs:
            if m.run.manifest.checkpoint:
                boots[m.run.manifest.checkpoint.path] = m.run.manifest.checkpoint.cpu_seconds
        rows.append([name, str(len(runs)), f"{agree} of {len(runs)}" + (f" ({len(runs) - len(checked)} not checked)"
                                                                     if len(checked) < len(runs) else ""),
                     _range([c["matched"] for c in checked], "{:,}"), _range([c["unexplained"] for c in checked], "{:,}"),
                     _range(cpu, "{:,.0f}"), f"{sum(cpu):,.0f}" if cpu else "-"])
    boot_cpu = [s for s in boots.values() if s is not None]
    runs_cpu = [m.run.manifest.gem5.cpu_seconds for _, runs in arms for m in runs
                if m.run.manifest.gem5.cpu_seconds is not None]
    total = sum(len(r) for _, r in arms)
    unrecorded = total - len(runs_cpu) + len(boots) - len(boot_cpu)
    rows.append([f"all, with the {len(boots)} boots they started from" if boots else "all", str(total),
                 f"{agreeing} of {total}", "", "", "",
                 "-" if not runs_cpu else f"{sum(runs_cpu) + sum(boot_cpu):,.0f}"
                 + (f" ({count(unrecorded, 'run or boot', 'runs or boots')} without a record)" if unrecorded else "")])
    return Table(title, ["arm", "runs", "agree with gem5", "items matched (min-max)", "unexplained (min-max)",
                         "gem5 CPU s per run (min-max)", "gem5 CPU s in all"], rows,
                 "Each run's monitor counts held against gem5's own protocol trace (docs/gem5.md, 'Reconciling'): "
                 "items are transfers and dirty reads; a run agrees when its unexplained remainder is within 1% of its "
                 "matched items, per run and per contended line. Host cost in gem5's own CPU seconds (user + system), "
                 "which do not depend on what else shared the machine; the last row adds the boots the runs started "
                 "from, each checkpoint once.")


def _range(values: list, fmt: str) -> str:
    if not values:
        return "-"
    lo, hi = min(values), max(values)
    return fmt.format(lo) if lo == hi else f"{fmt.format(lo)}-{fmt.format(hi)}"
