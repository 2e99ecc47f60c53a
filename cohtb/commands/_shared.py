"""What several verbs' options and output share."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from cohtb.places import RUNS
from cohtb import recording
from cohtb.run import cost
from cohtb.run.recorder import Live
from cohtb.run.runs import discover
from cohtb.run.spec import RunSpec
from cohtb.tables import wrap

RUNS_HELP = "run directories, directories of runs, or run ids (looked up in results/runs/ and reference-runs/)"
ANALYSIS_HELP = "where RUN_ID/counters.json are kept (default: the analysis cache, $COHTB_CACHE or ~/.cache/cohtb)"
JOBS_HELP = "parallel gem5 runs on this machine (default: its cores)"
DASK_HELP = ("record the runs on the Dask cluster whose scheduler is at this address (tcp://HOST:PORT, or tls:// with "
             "COHTB_DASK_TLS_CA/_CERT/_KEY; default: $COHTB_DASK, else this machine); its workers must share the runs' "
             "directory and the checkout and run the same gem5 build (docs/cluster.md)")
ALLOW_DIRTY_HELP = ("record even from a checkout with uncommitted changes; each run keeps the diff beside its manifest "
                    "(default: refused, so every run names the commit that made it)")
INSECURE_HELP = "with --dask: accept a plain tcp:// address off this machine (anyone who reaches it can run code)"


def add_recording_arguments(p: argparse.ArgumentParser, runs_help: str, dry_run_help: str) -> None:
    """The options of every verb that records gem5 runs (`launch`, `seeds --launch`): where, how many at a time and
    on which executor, how long each may take, from which checkout, or only their cost."""
    p.add_argument("--runs", default=str(RUNS), help=runs_help)
    add_local_limits(p, JOBS_HELP)
    p.add_argument("--dask", metavar="ADDRESS", help=DASK_HELP)
    p.add_argument("--insecure", action="store_true", help=INSECURE_HELP)
    p.add_argument("--dry-run", action="store_true", help=dry_run_help)


def add_local_limits(p: argparse.ArgumentParser, jobs_help: str, dirty_when: str = "") -> None:
    """The options of every verb that may run gem5 here (`launch`, `seeds --launch`, `run`): how many runs at a
    time, how long each may take, and whether a checkout with uncommitted changes may record."""
    p.add_argument("--jobs", type=int, default=None, help=jobs_help)
    p.add_argument("--timeout", type=float, default=3600, help="seconds per gem5 run")
    p.add_argument("--allow-dirty", action="store_true", help=dirty_when + ALLOW_DIRTY_HELP)


def record(specs: list[RunSpec], args: argparse.Namespace, verb: str, live: Live | None = None) -> int:
    """Record runs with the recording options (cohtb/recording.py); 1 if any failed."""
    return report_failures(recording.record(specs, Path(args.runs), verb, jobs=args.jobs, timeout=args.timeout,
                                            allow_dirty=args.allow_dirty, dask=args.dask, insecure=args.insecure,
                                            live=live))


def non_negative(text: str) -> int:
    """An option's whole number, 0 or more (argparse refuses anything else, naming the option)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is negative")
    return n


def report_failures(outcomes) -> int:
    """Each failed run on a line of its own; 1 if any failed."""
    failed = [o for o in outcomes if o.status == "failed"]
    for o in failed:
        print(f"FAILED {o.spec.id}: {o.error}", file=sys.stderr)
    return 1 if failed else 0


def duration(seconds: float) -> str:
    """A length of time as people read it: 40 s, 20 min, 2.9 h."""
    return (f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min" if seconds < 7200
            else f"{seconds / 3600:,.1f} h")


def print_cost(specs: list[RunSpec], dirs: list[Path], slots: int | None) -> None:
    """Each run's predicted gem5 CPU time (cohtb/run/cost.py: from the kept runs in `dirs`, saying from which), and
    the whole set's CPU time and wall time on `slots` parallel slots (default: this machine's cores)."""
    kept = cost.kept_costs(discover([d for d in dict.fromkeys(dirs) if d.is_dir()]))
    slots = slots or os.cpu_count() or 1
    predicted = [(s, cost.predict(s, kept)) for s in specs]
    for s, p in predicted:
        print(f"{s.id}: " + (f"{duration(p.seconds)} of gem5 CPU ({p.basis})" if p.seconds is not None
                             else f"no prediction ({p.basis})"))
    known = [p.seconds for _, p in predicted if p.seconds is not None]
    unknown = len(specs) - len(known)
    print(wrap(f"predicted: {duration(sum(known))} of gem5 CPU for {len(known)} run{'s' if len(known) != 1 else ''}"
               + (f" ({unknown} without a prediction)" if unknown else "")
               + f"; about {duration(cost.wall_seconds(known, slots))} of wall time on {slots} slot"
               f"{'s' if slots != 1 else ''} (from the kept runs' measured gem5 CPU seconds; a full-system kernel "
               "build and boot checkpoint not yet cached come on top)"))
