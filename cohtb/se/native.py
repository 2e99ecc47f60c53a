"""`cohtb native`: a benchmark matrix on this machine, as a table of ops/s per policy and layout."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from cohtb.atomic import writable_dir, write_text_atomic
from cohtb.se.workloads import WORKLOADS, run_native


def run_matrix(names: list[str], threads: int, ops: int | None, repeat: int, out: Path | None) -> list[dict]:
    if out is not None:   # now, not after the runs
        writable_dir(out.parent, out)
    combos = [(w, p, l) for w in names for p in WORKLOADS[w].policies for l in WORKLOADS[w].layouts]
    rows = []
    t0 = time.monotonic()
    for i, (w, policy, layout) in enumerate(combos, 1):
        n = ops or WORKLOADS[w].default_ops
        best = None
        for _ in range(repeat):
            doc = run_native(w, threads, n, policy, layout)
            if best is None or doc["ops_per_s"] > best["ops_per_s"]:
                best = doc
        rows.append({"workload": w, "policy": policy, "layout": layout, "threads": threads,
                     "ops": best["ops"], "ops_per_s": best["ops_per_s"], "result": best})
        print(f"\r[{i}/{len(combos)}] {w} {policy} {layout} ({time.monotonic() - t0:.0f} s)", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    if out is not None:
        write_text_atomic(out, json.dumps(rows, indent=1))
    return rows


def table(rows: list[dict]) -> str:
    lines = []
    for w in dict.fromkeys(r["workload"] for r in rows):
        mine = [r for r in rows if r["workload"] == w]
        layouts = list(dict.fromkeys(r["layout"] for r in mine))
        lines.append(f"{w} (seed {WORKLOADS[w].seed}), {mine[0]['threads']} threads, ops/s (best of the repeats)")
        lines.append(f"  {'policy':10s}" + "".join(f"{l:>14s}" for l in layouts))
        for p in dict.fromkeys(r["policy"] for r in mine):
            cells = {r["layout"]: r["ops_per_s"] for r in mine if r["policy"] == p}
            lines.append(f"  {p:10s}" + "".join(f"{cells[l]:>14,.0f}" for l in layouts))
        lines.append("")
    return "\n".join(lines)
