"""One run's analysis: its events, read once, through the Verilated monitor (one region per line of the
layout), optionally through the bit-exact model as a check, and through the unbounded ideal model; kept as
a typed record (counters.json) beside the report."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from cohtb.errors import CohtbError
from cohtb.monitor import replay
from cohtb.monitor.config import MonitorParams, variant as load_variant
from cohtb.monitor.counters import Counters, diff_counters
from cohtb.monitor.models import IdealModel, LineStats
from cohtb.sim.runs import Run
from cohtb.trace.layout import regions_for

FORMAT = 2
HOTTEST = 16


class RegionRecord(BaseModel):
    """Monitor region `index` watches the one physical line `line`, which holds `fields`."""

    index: int
    line: int
    fields: list[str]


class IdealSummary(BaseModel):
    totals: LineStats
    matrix: list[list[int]]
    lines: dict[int, LineStats]     # the watched, hot and hottest lines
    hottest: list[int]


class ReplayPerf(BaseModel):
    events: int
    cycles: int
    seconds: float
    eventsPerSecond: float
    wall_seconds: float


class Analysis(BaseModel):
    format: Literal[2]
    run: str
    variant: str
    params: MonitorParams
    regions: list[RegionRecord]
    rtl: Counters
    model_check: Literal["identical", "not run"]
    ideal: IdealSummary
    replay: ReplayPerf

    def region_of_line(self) -> dict[int, RegionRecord]:
        return {r.line: r for r in self.regions}


def analyse(run: Run, out: Path, check_model: bool = False, variant: str = "default") -> Analysis:
    cfg = load_variant(variant)
    header, recs = run.events()
    replay.check_fits(header, cfg, str(run.path))
    regions = regions_for(run.fields, cfg.params.regions)
    watch = [replay.Region(r.line, cfg.params.line_mask) for r in regions]

    t0 = time.perf_counter()
    rtl, perf = replay.replay_rtl(recs, watch, variant)
    check = "not run"
    if check_model:
        diffs = diff_counters(replay.replay_model(recs, watch, cfg), rtl)
        if diffs:
            raise CohtbError(f"{run.path}: RTL and reference model disagree: " + "; ".join(diffs[:8]))
        check = "identical"

    ideal = IdealModel(header.num_sockets)
    ideal.apply_array(recs)
    watched = {r.line for r in regions} | {h.line for h in rtl.hot if h.valid}
    hottest = sorted(ideal.stats, key=lambda line: -ideal.stats[line].pingpong)[:HOTTEST]
    doc = Analysis(
        format=FORMAT, run=run.id, variant=variant, params=cfg.params,
        regions=[RegionRecord(index=r.index, line=r.line, fields=list(r.fields)) for r in regions],
        rtl=rtl, model_check=check,
        ideal=IdealSummary(totals=ideal.totals(), matrix=ideal.matrix, hottest=hottest,
                           lines={line: ideal.stats[line] for line in sorted(watched | set(hottest)) if line in ideal.stats}),
        replay=ReplayPerf(**perf, wall_seconds=round(time.perf_counter() - t0, 3)))
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(doc.model_dump_json(by_alias=True, indent=1))
    os.replace(tmp, out)
    return doc


def load_analysis(path: Path, run: Run) -> Analysis:
    try:
        doc = Analysis.model_validate_json(Path(path).read_text())
    except FileNotFoundError:
        raise CohtbError(f"{path}: no counters for run {run.id} (run cohtb replay first)") from None
    except ValidationError as e:
        err = e.errors()[0]
        if err["type"] == "json_invalid":
            raise CohtbError(f"{path}: corrupt counter file: {err['msg']}") from None
        raise CohtbError(f"{path}: not a format-{FORMAT} counter file: field '{'.'.join(map(str, err['loc']))}': "
                         f"{err['msg']}") from None
    if doc.run != run.id:
        raise CohtbError(f"{path}: the counters of run {doc.run}, not of {run.id}")
    return doc
