"""`cohtb run`, the main job: gem5 runs of the default matrix (or, without gem5, the bundled reference
runs), replayed through the monitor RTL, checked against the model, reported and compared."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

from cohtb.analysis.pipeline import metrics_for, standard_comparisons
from cohtb.atomic import writable_dir
from cohtb.errors import CohtbError
from cohtb.experiments.plans import plan
from cohtb import recording
from cohtb.places import REFERENCE_RUNS, ROOT
from cohtb.report.html import summary_table, write
from cohtb.experiments.judging import seed_history, shown
from cohtb.report.results import fairness_table, headline, point_table
from cohtb.tables import TERMINAL_WIDTH, Table, count
from cohtb.run import gem5
from cohtb.run.runs import discover, load
from cohtb.trace.events import LEGACY_NOTE


def run(out: Path, matrix: str = "default", jobs: int | None = None, timeout: float = 3600,
        allow_dirty: bool = False, verbose: bool = False) -> int:
    t0 = time.monotonic()
    writable_dir(out)   # now, not after the replays
    found = gem5.find()
    if found is not None:
        specs = plan(matrix)
        print(f"cohtb run: gem5 at {found}; launching the '{matrix}' matrix", flush=True)
        outcomes = recording.record(specs, out / "runs", "cohtb run", jobs=jobs, timeout=timeout, allow_dirty=allow_dirty)
        runs = [load(out / "runs" / o.spec.id) for o in outcomes if o.status != "failed"]
        failed = [o for o in outcomes if o.status == "failed"]
        if failed:
            print(f"cohtb run: {count(len(failed), 'run')} failed (see {out / 'runs'}/*.failed.json); reporting the rest")
        if not runs:
            raise CohtbError("every gem5 run failed; nothing to report")
        source = f"gem5 runs in {out / 'runs'}"
    else:
        print(f"cohtb run: {gem5.why_missing()}. Using the bundled reference runs ({REFERENCE_RUNS.relative_to(ROOT)}/).", flush=True)
        runs = discover([REFERENCE_RUNS])
        source = f"bundled reference runs ({REFERENCE_RUNS.relative_to(ROOT)}/, recorded with gem5)"
    legacy = [r.id for r in runs if r.events_header().legacy]
    if legacy:
        print(f"cohtb run: note: {len(legacy)} of the runs are {LEGACY_NOTE}", flush=True)
    print(f"cohtb run: replaying {count(len(runs), 'run')}", flush=True)
    ms = metrics_for(runs, None, check_model=True, jobs=jobs)   # the cache's counters, checked against the model, kept
    history = seed_history(ms)   # each seed under every declaration; its tables are the one the page draws
    seed_tables = [t for r in (shown(v) for v in history.values()) if r is not None
                   for t in ([point_table(r)] if r.points else []) + [fairness_table(r)]]
    first = [m for m in ms if m.spec.seed <= 1]   # per-run sections: the first repetition of each configuration
    tables, notes = standard_comparisons(ms)
    html = write(first, out / "report", title="cohtb: lockref on simulated multi-socket x86", subtitle=source,
                 extra_tables=[headline(history), *seed_tables, *tables])
    print()
    if verbose:   # every configuration's row and every comparison's summary: the report has them all
        print(summary_table(first).text())
        print(headline(history).text())
        for n in notes:   # prose at the tables' width
            print(textwrap.fill(n, TERMINAL_WIDTH, initial_indent="- ", subsequent_indent="  ", break_on_hyphens=False))
    else:   # the seeds' verdicts, without the effects' long names (the report and docs/results.md have them)
        seeds = headline(history)
        print(Table(seeds.title, [h for i, h in enumerate(seeds.header) if i != 2],
                    [[c for i, c in enumerate(r) if i != 2] for r in seeds.rows]).text())
        print(f"{count(len(first), 'configuration')} and {count(len(tables), 'comparison table')} are in the report "
              "(`cohtb run --verbose` prints them here too).")
    print(f"\nRTL and reference model: identical counters on {'the' if len(ms) == 1 else 'all'} {count(len(ms), 'run')}.")
    print(f"Report: {html}  ({time.monotonic() - t0:.0f} s)")
    return 0
