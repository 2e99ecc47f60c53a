"""Recording gem5 runs, as every verb that records does (`cohtb launch`, `cohtb seeds --launch`, `cohtb run`): each
check first, before anything is written (the declared rule can give each of its answers, each machine's gem5
build with its patches is there, the declarations are committed, the checkout is clean, the runs' directory is
writable), then the runs on the chosen executor."""

from __future__ import annotations

from pathlib import Path

from cohtb.atomic import writable_dir
from cohtb.experiments import declarations, power
from cohtb.launch import launch
from cohtb.run import executors, gem5, provenance
from cohtb.run.recorder import Live, Outcome
from cohtb.run.spec import RunSpec
from cohtb.tables import count


def record(specs: list[RunSpec], runs: Path, verb: str, *, jobs: int | None = None, timeout: float = 3600,
           allow_dirty: bool = False, dask: str | None = None, insecure: bool = False,
           live: Live | None = None) -> list[Outcome]:
    """Every run of `specs` recorded into `runs` (those already there kept), or a CohtbError before any is."""
    power.refuse_without_power(specs)
    for machine in dict.fromkeys(s.machine for s in specs):
        gem5.require(machine)
    declared = declarations.records_for(specs)
    provenance.require_clean(allow_dirty)
    writable_dir(runs)   # now, not when the first run is done
    executor = executors.choose(dask, jobs, insecure)
    try:
        print(f"{verb}: {count(len(specs), 'run')} into {runs}, on {executor.describe()}", flush=True)
        return launch(specs, runs, jobs, timeout, live, declared, executor)
    finally:
        executor.close()
