"""Per arm of an experiment: its hottest line's turns per operation over all its repetitions (where the line went,
how often, and how long a turn lasted: cohtb/analysis/line_chain.py). The attribution's turns table shows one pair
of runs; this one shows whether every repetition says the same."""

from __future__ import annotations

from cohtb.analysis.compare import CHAIN_ROWS, turns_per_op
from cohtb.analysis.metrics import RunMetrics
from cohtb.experiments.reproduce import Spread
from cohtb.tables import Table


def kind_cell(turns: list, kind: str) -> str:
    """Turns per operation of one kind, and the mean time a turn of it lasted, each as mean (min-max) over the
    repetitions; a run with no turn of the kind has no time per turn."""
    n = Spread(tuple(t.per_op[kind] for t in turns))
    each = [t.each_ns(kind) for t in turns if t.each_ns(kind) is not None]
    return f"{n.text(digits=1)}" + (f", {Spread(tuple(each)).text(digits=0)} ns each" if each else "")


def turns_summary(title: str, arms: list[tuple[str, list[RunMetrics]]]) -> Table | None:
    """One row per arm; None unless every run has its hottest line's chain (a run analysed before it was kept)."""
    per_arm = [(name, [turns_per_op(m) for m in runs]) for name, runs in arms if runs]
    if not per_arm or any(t is None for _, turns in per_arm for t in turns):
        return None
    rows = [[name, *(kind_cell(turns, kind) for _, kind in CHAIN_ROWS),
             Spread(tuple(t.time_ns_per_op for t in turns)).text(digits=0), str(len(turns))]
            for name, turns in per_arm]
    return Table(title, ["arm", *(f"to {label}: turns per op, ns each" for label, _ in CHAIN_ROWS),
                         "simulated ns per op", "runs"], rows,
                 "Each run's hottest line (its turns table's line), per operation of the trace's region: how often it "
                 "went to a core of another socket, to another core of the same socket and to the same core again, "
                 "and the mean gap from that turn to the next (the transfer and the new owner's time with the line, "
                 "and any time nobody wanted it); mean (min-max) over the repetitions. The time per operation is "
                 "1 / throughput over all threads. A gap near the machine's transfer times (docs/machine.md) is a "
                 "line in demand; a longer one holds a lock's hold and hand-over, or a wait for the next user.")
