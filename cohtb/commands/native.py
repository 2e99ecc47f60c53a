"""`cohtb native`: the workload matrix on this machine."""

from __future__ import annotations

import argparse
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.se import native
from cohtb.se.workloads import WORKLOADS



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("workload", nargs="*", help="workloads to run (default: all)")
    p.add_argument("--threads", type=int, default=2, help="threads per run")
    p.add_argument("--ops", type=int, default=None, help="operations per thread (default: each workload's own)")
    p.add_argument("--repeat", type=int, default=3, help="runs per cell; the table shows the best")
    p.add_argument("--out", default="results/native.json", help="where the rows are written ('' for nowhere)")


def run(args: argparse.Namespace) -> int:
    names = args.workload or list(WORKLOADS)
    for n in names:
        if n not in WORKLOADS:
            raise CohtbError(f"unknown workload '{n}' (known: {', '.join(WORKLOADS)})")
    rows = native.run_matrix(names, args.threads, args.ops, args.repeat, Path(args.out) if args.out else None)
    print(native.table(rows))
    return 0
