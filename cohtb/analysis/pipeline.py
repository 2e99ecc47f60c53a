"""Runs -> counters -> metrics -> report, shared by `cohtb report`, `cohtb compare` and `cohtb run`."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from cohtb.analysis.analyse import analyse, load_analysis
from cohtb.analysis.cache import cached_counters_path
from cohtb.analysis.compare import attribution, chain_table, configuration_tables, pair_by_key, pair_table
from cohtb.errors import CohtbError
from cohtb.analysis.metrics import RunMetrics, compute
from cohtb.run.runs import Run
from cohtb.tables import Table


def counters_path(run: Run, analysis_dir: Path | None) -> Path:
    """RUN_ID/counters.json in the directory named, else in the cache (never inside the run)."""
    return analysis_dir / run.id / "counters.json" if analysis_dir else cached_counters_path(run)


def metrics_for(runs: list[Run], analysis_dir: Path | None, check_model: bool = True, refresh: bool = False) -> list[RunMetrics]:
    """Counters for every run (replayed through the RTL where missing), then the metrics of each."""
    out = []
    t0 = time.monotonic()
    for i, run in enumerate(runs, 1):
        path = counters_path(run, analysis_dir)
        if refresh or not path.exists():
            print(f"  [{i}/{len(runs)}] replaying {run.id} through the monitor RTL"
                  f"{' and the reference model' if check_model else ''} ({time.monotonic() - t0:.0f} s)",
                  file=sys.stderr, flush=True)
            counters = analyse(run, path, check_model=check_model)
        else:
            counters = load_analysis(path, run)
        out.append(compute(run, counters))
    return out


def standard_comparisons(ms: list[RunMetrics]) -> tuple[list[Table], list[str]]:
    """The comparisons the seeds make, where the runs allow them: the layout change (seed 004, the 6.11
    reorder), the lockref policies against the plain lock (seed 000), and the rework under an intruder."""
    tables: list[Table] = []
    notes: list[str] = []
    ms = [m for m in ms if m.spec.seed <= 1]   # one repetition: the seeds' pages carry the spread
    plain = [m for m in ms if not m.spec.intruder_period_us]
    for key, base, new in (("layout", "shared", "split"), ("layout", "pre611", "split"), ("policy", "locked", "cmpxchg"), ("policy", "locked", "retry100"),
                           ("policy", "retry100", "unified")):
        try:
            pairs = pair_by_key(plain if key == "layout" else ms, key, base, new)
        except CohtbError:
            continue
        tables += configuration_tables(pairs, f"{key}={base}", f"{key}={new}")
        for b, n in pairs:
            if b.spec.sockets == max(p[0].spec.sockets for p in pairs):
                t, text = attribution(b, n)
                turns = chain_table(b, n)
                tables += [pair_table(b, n), t] + ([turns] if turns else [])
                notes.append(text)
    return tables, notes
