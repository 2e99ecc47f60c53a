"""What several verbs' options and output share."""

from __future__ import annotations

import argparse
import sys
import textwrap

from cohtb.tables import TERMINAL_WIDTH

RUNS_HELP = "run directories, directories of runs, or run ids (looked up in results/runs/ and reference-runs/)"
ANALYSIS_HELP = "where RUN_ID/counters.json are kept (default: the analysis cache, $COHTB_CACHE or ~/.cache/cohtb)"
JOBS_HELP = "parallel gem5 runs on this machine (default: its cores)"
DASK_HELP = ("record the runs on the Dask cluster whose scheduler is at this address (tcp://HOST:PORT, or tls:// with "
             "COHTB_DASK_TLS_CA/_CERT/_KEY; default: $COHTB_DASK, else this machine); its workers must share the runs' "
             "directory and the checkout and run the same gem5 build (docs/cluster.md)")
ALLOW_DIRTY_HELP = ("record even from a checkout with uncommitted changes; each run keeps the diff beside its manifest "
                    "(default: refused, so every run names the commit that made it)")
INSECURE_HELP = "with --dask: accept a plain tcp:// address off this machine (anyone who reaches it can run code)"


def non_negative(text: str) -> int:
    """An option's whole number, 0 or more (argparse refuses anything else, naming the option)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{n} is negative")
    return n


def wrap(prose: str) -> str:
    """A line of prose at the width of the tables around it."""
    return textwrap.fill(prose, TERMINAL_WIDTH, break_on_hyphens=False, subsequent_indent="  ")


def report_failures(outcomes) -> int:
    """Each failed run on a line of its own; 1 if any failed."""
    failed = [o for o in outcomes if o.status == "failed"]
    for o in failed:
        print(f"FAILED {o.spec.id}: {o.error}", file=sys.stderr)
    return 1 if failed else 0
