"""What a spin-wait poll costs in gem5 (docs/workloads.md, "PAUSE"): the kept runs of the `pause` plan, one bounded
wait with and without PAUSE after each poll, as one thread's time per wait and per poll."""

from __future__ import annotations

from cohtb.run.runs import Run
from cohtb.tables import Table


def pause_table(runs: list[Run]) -> Table:
    """One row per kept `pause` run: its policy, one thread's time per wait (the window over the waits each thread
    made) and per poll, in ns and in cycles at the machine's clock."""
    rows = []
    for run in sorted(runs, key=lambda r: r.spec.policy):
        w = run.manifest.workload
        polls = w.model_dump()["polls_per_op"]
        wait_ns = w.measure.window_ns * w.threads / w.ops   # one thread's time per wait
        per_poll = wait_ns / polls
        cycles = per_poll * run.manifest.system.clock_hz / 1e9
        rows.append([run.spec.policy, f"{polls}", f"{wait_ns / 1000:.2f}", f"{per_poll:.1f}", f"{cycles:.0f}",
                     run.id])
    return Table("A bounded wait in gem5, with and without PAUSE after each poll",
                 ["after each poll", "polls per wait", "µs per wait", "ns per poll", "cycles per poll", "run"], rows,
                 "Each thread polls a line of its own (an L1 hit), so the time is the loop and the load on the core; "
                 "one thread's time per wait is the window over the waits each thread made. The runs: `cohtb launch "
                 "--matrix pause`, kept in reference-runs/.")
