"""`cohtb report`: Markdown, JSON, CSV, plots and one HTML page for runs or bare event files."""

from __future__ import annotations

import argparse
from pathlib import Path

from cohtb.analysis.analyse import analyse_event_file
from cohtb.analysis.pipeline import metrics_for, standard_comparisons
from cohtb.atomic import check_output_dir
from cohtb.commands._shared import ANALYSIS_HELP, RUNS_HELP
from cohtb.errors import CohtbError
from cohtb.report import event_files
from cohtb.report.html import write
from cohtb.run.runs import discover
from cohtb.tables import count



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", help=RUNS_HELP + ", or bare event files")
    p.add_argument("--out", default="results/report", help="the report's directory (an existing report is kept "
                   "unless --force)")
    p.add_argument("--force", action="store_true", help="replace an existing report in --out, or write into a "
                   "directory holding other files (cohtb replaces only the files it wrote)")
    p.add_argument("--analysis", help=ANALYSIS_HELP)
    p.add_argument("--check", action="store_true", help="check the RTL against the model when replaying")
    p.add_argument("--no-compare", dest="compare", action="store_false", help="leave out the standard comparisons")


def run(args: argparse.Namespace) -> int:
    out = check_output_dir(args.out, args.force)   # before the replays, which take minutes
    if (out / "report.html").exists() and not args.force:
        raise CohtbError(f"{out}: a report is there already; name another --out, or --force to replace it")
    files = [Path(r) for r in args.runs if Path(r).is_file()]
    if files:
        if len(files) < len(args.runs):
            raise CohtbError("report takes either run directories or bare event files, not both")
        docs = [analyse_event_file(f, None, check_model=args.check) for f in files]
        print(f"report of {len(docs)} event files: {event_files.write(docs, Path(args.out))}")
        return 0
    runs = discover([Path(r) for r in args.runs])
    ms = metrics_for(runs, Path(args.analysis) if args.analysis else None, check_model=args.check)
    tables, _ = standard_comparisons(ms) if args.compare else ([], [])
    html = write(ms, Path(args.out), extra_tables=tables)
    print(f"report of {count(len(ms), 'run')}: {html} (and report.md, report.json, plots/ beside it)")
    return 0
