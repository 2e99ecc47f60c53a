"""Runs -> counters -> metrics -> report, shared by `cohtb report`, `cohtb compare` and `cohtb run`."""

from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from cohtb.analysis.analyse import analyse, load_analysis
from cohtb.analysis.cache import cached_counters_path
from cohtb.analysis.compare import attribution, chain_table, configuration_tables, pair_by_key, pair_table
from cohtb.errors import CohtbError
from cohtb.analysis.metrics import RunMetrics, compute
from cohtb.run.runs import Run, load
from cohtb.tables import Table, count


def counters_path(run: Run, analysis_dir: Path | None) -> Path:
    """RUN_ID/counters.json in the directory named, else in the cache (never inside the run)."""
    return analysis_dir / run.id / "counters.json" if analysis_dir else cached_counters_path(run)


def _replay(run_path: Path, out: Path, check_model: bool):
    """One run's replay, in a worker process (its Run read there: the parent's does not travel)."""
    return analyse(load(run_path), out, check_model=check_model)


def metrics_for(runs: list[Run], analysis_dir: Path | None, check_model: bool = True, refresh: bool = False,
                jobs: int | None = None) -> list[RunMetrics]:
    """Counters for every run, then the metrics of each. Counters already kept for the run are reused (the cache is
    keyed by the run's manifest and events, the RTL and the code: cohtb/analysis/cache.py) unless `refresh`, or
    unless the model check is asked for and they were made without it; the rest are replayed through the RTL (and
    the model), `jobs` runs at a time (default: the machine's cores)."""
    paths = [counters_path(run, analysis_dir) for run in runs]
    counters: dict[int, object] = {}
    for i, (run, path) in enumerate(zip(runs, paths)):
        if not refresh and path.exists():
            kept = load_analysis(path, run)
            if not check_model or kept.model_check == "identical":
                counters[i] = kept
    todo = [i for i in range(len(runs)) if i not in counters]
    t0 = time.monotonic()
    what = f"the monitor RTL{' and the reference model' if check_model else ''}"
    say = lambda k, i: print(f"  [{k}/{len(todo)}] replayed {runs[i].id} through {what} ({time.monotonic() - t0:.0f} s)",
                             file=sys.stderr, flush=True)
    workers = min(len(todo), jobs or os.cpu_count() or 1)
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            futures = {pool.submit(_replay, runs[i].path, paths[i], check_model): i for i in todo}
            for k, done in enumerate(as_completed(futures), 1):
                counters[futures[done]] = done.result()
                say(k, futures[done])
    else:
        for k, i in enumerate(todo, 1):
            counters[i] = analyse(runs[i], paths[i], check_model=check_model)
            say(k, i)
    if runs and len(todo) < len(runs):
        print(f"  counters of {count(len(runs) - len(todo), 'run')} reused from {analysis_dir or 'the analysis cache'} "
              f"(made from the same manifest, events, RTL and code{', the model checked then' if check_model else ''}); "
              f"{len(todo)} replayed now", file=sys.stderr, flush=True)
    return [compute(run, counters[i]) for i, run in enumerate(runs)]


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
