"""One run's analysis: its event file through the Verilated monitor (regions on the layout's lines),
optionally through the bit-exact model as a check, and through the unbounded ideal model; written to
counters.json beside the report."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from . import events as ev
from . import replay
from .compare_counters import diff_counters
from .errors import CohtbError
from .layout import regions_for
from .model import LINE_STATS, IdealModel
from .monitor_config import load as load_config
from .runs import Run, check_events_match
from .toolchain import monitor_dir

FORMAT = 1


def analyse(run: Run, out: Path, check_model: bool = False, variant: str = "default") -> dict:
    cfg = load_config(monitor_dir(variant) / "monitor.json")
    events_path = run.events_path(out.parent / "scratch")
    header, chunks = ev.read(events_path)
    check_events_match(run, header)
    regions = regions_for(run.fields, cfg.params.regions)
    full = (1 << cfg.params.lineAddrBits) - 1
    hw_regions = [replay.Region(r.index, r.name, r.line, full) for r in regions]

    t0 = time.perf_counter()
    rtl, perf = replay.replay_rtl(events_path, hw_regions, variant)
    check = "not run"
    if check_model:
        model = replay.replay_model(events_path, hw_regions, variant)
        diffs = diff_counters(model, rtl)
        if diffs:
            raise CohtbError(f"{run.path}: RTL and reference model disagree: " + "; ".join(diffs[:8]))
        check = "identical"

    ideal = IdealModel(header.num_sockets)
    for recs in chunks:
        ideal.apply_array(recs)
    watched = {r.line for r in regions} | {h["line"] for h in rtl["hot"] if h["valid"]}
    hottest = sorted(ideal.stats, key=lambda l: -(ideal.stats[l][3] + ideal.stats[l][6] + ideal.stats[l][7]))[:16]
    doc = {
        "format": FORMAT,
        "run": run.id,
        "monitor": {"variant": variant, "params": cfg.params.__dict__},
        "regions": [{"index": r.index, "line": r.line, "fields": list(r.fields)} for r in regions],
        "rtl": rtl,
        "model_check": check,
        "ideal": {
            "totals": ideal.totals(),
            "matrix": ideal.matrix,
            "lines": {str(l): dict(zip(LINE_STATS, ideal.stats[l])) for l in sorted(watched | set(hottest)) if l in ideal.stats},
            "hottest": hottest,
        },
        "replay": {**perf, "wall_seconds": round(time.perf_counter() - t0, 3)},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, out)
    return doc


def load_counters(path: Path, run: Run) -> dict:
    try:
        doc = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise CohtbError(f"{path}: no counters for run {run.id} (run cohtb replay first)") from None
    except json.JSONDecodeError as e:
        raise CohtbError(f"{path}: corrupt counter file: {e}") from None
    if doc.get("format") != FORMAT or doc.get("run") != run.id or "rtl" not in doc or "ideal" not in doc:
        raise CohtbError(f"{path}: not the counter file of run {run.id}")
    return doc
