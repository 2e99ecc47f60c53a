"""One run's analysis: its events, read once, through the Verilated monitor (one region per line of the
layout), optionally through the bit-exact model as a check, and through the unbounded ideal model; kept as
a typed record (counters.json) beside the report."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Literal, Optional

import numpy as np
from pydantic import BaseModel, ValidationError

from cohtb.contract import DEFAULT_LINE_SIZE, Kind
from cohtb.atomic import write_text_atomic
from cohtb.errors import CohtbError
from cohtb.monitor import live, ondemand, replay
from cohtb.monitor.config import MonitorParams
from cohtb.monitor.counters import Counters, diff_counters
from cohtb.analysis import holder, line_chain, lock_queue
from cohtb.analysis.compiled_reconcile import reconcile
from cohtb.analysis.reconcile import CONTENDED, TOLERANCE, LineCheck
from cohtb.monitor.models import LineStats
from cohtb.run.runs import Run
from cohtb.trace.events import LEGACY_NOTE, LEGACY_VERSION, Header, read_all
from cohtb.trace.layout import regions_for

FORMAT = 8   # 4: the monitor's counters over simulated time (series) kept for timed runs; 5: queued spinlock
# acquisitions; 6: the lister's visits; 7: a kernel's run with no queued acquisition counts zeros; 8: the hottest
# line's chain of owners
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


class GemCheck(BaseModel):
    """The ideal monitor's transfers and dirty reads paired with gem5's evidence (cohtb.analysis.reconcile)."""

    event_format: int               # 1: legacy issue-time events, which cannot be paired transfer by transfer
    evidence: int                   # FWD_GETS, FWD_GETX and INV events in the stream (none: not from gem5)
    totals: LineCheck
    lines: dict[int, LineCheck]     # every line with an item or a remainder
    tolerance: float
    contended: list[int]            # lines with at least `CONTENDED` matched items
    outside: list[int]              # contended lines whose unexplained remainder exceeds the tolerance

    @property
    def verdict(self) -> str:
        if self.event_format == LEGACY_VERSION:
            return "not checked: " + LEGACY_NOTE
        if not self.evidence and not self.totals.matched and not self.totals.unexplained:
            return "agrees: nothing to pair (no transfer, dirty read or gem5 evidence: nothing was shared)"
        if not self.evidence:
            return "not checked: the stream holds none of gem5's evidence (FWD_GETS, FWD_GETX, INV)"
        ok = not self.outside and self.totals.within_tolerance()
        return (f"agrees: unexplained {self.totals.unexplained:,} of {self.totals.matched:,} items, every contended line "
                f"within {self.tolerance:.0%}" if ok else
                f"DISAGREES: unexplained {self.totals.unexplained:,} of {self.totals.matched:,} items; "
                f"{len(self.outside)} of {len(self.contended)} contended lines beyond {self.tolerance:.0%}")


class ReplayPerf(BaseModel):
    events: int
    cycles: int
    seconds: float
    eventsPerSecond: float
    wall_seconds: float


class Analysis(BaseModel):
    format: Literal[8]
    run: str
    variant: str
    params: MonitorParams
    regions: list[RegionRecord]
    rtl: Counters
    model_check: Literal["identical", "not run"]
    ideal: IdealSummary
    gem5: GemCheck
    replay: ReplayPerf
    line_size: int = DEFAULT_LINE_SIZE   # of the event file; counter files written before it was kept had 64
    # A timed run's counters over simulated time, in live.json's form (cohtb/monitor/live.py): the same counting
    # with a snapshot every interval of the run's, kept here so that plots never replay a run again.
    series: Optional[dict] = None
    # A timed full-system run's queued spinlock acquisitions in each of the series' intervals, from the kernel's
    # MCS nodes (cohtb/analysis/lock_queue.py); None for a run without them (SE, or no qnodes line traced).
    lock_queue: Optional[list[int]] = None
    # A full-system run with a lister (seed 004's collapse): its visits to the file dentry's lockref line
    # (cohtb/analysis/holder.py); None for other runs.
    lister_visits: Optional[list[holder.Visit]] = None
    # The hottest line's (ideal.hottest[0]) gaps from owner to owner (cohtb/analysis/line_chain.py); None for a
    # trace with fewer than two owners' events on that line.
    chain: Optional[line_chain.LineChain] = None

    def address(self, line: int) -> int:
        """A line's first byte (physical): how perf c2c and pahole name a line."""
        return line * self.line_size

    def region_of_line(self) -> dict[int, RegionRecord]:
        return {r.line: r for r in self.regions}


def analyse(run: Run, out: Path, check_model: bool = False, variant: str = "default") -> Analysis:
    header, recs = run.events()
    interval_ticks = int(run.spec.interval_us * 1_000_000) if run.spec.interval_us else None   # µs -> ticks (ps)
    # a kernel's run counts its queued acquisitions even if no CPU's node line is in its trace (then none queued)
    nodes = lock_queue.node_lines(run.manifest.kernel_symbols) if run.spec.kernel else None
    # the lister is the one thread after the workers, pinned to the CPU after theirs (workloads/common/bench.h,
    # which wraps a CPU number past the last: then it shares one, and nothing here is its alone)
    lister_cpu = run.manifest.workload.threads
    lister = holder.lister_visits(recs, run.fields, lister_cpu, nodes) \
        if nodes is not None and run.spec.intruder_period_us and lister_cpu < header.num_cores else None
    return analyse_events(run.id, header, recs, out, run.fields, check_model, variant, interval_ticks,
                          dirty_up=run.manifest.gem5.protocol == "CHI", nodes=nodes, lister_visits=lister)


def analyse_event_file(path: Path, out: Path | None, check_model: bool = False, variant: str = "default") -> Analysis:
    """A bare event file, with no run manifest: counters and per-line figures, no fields and no throughput; reconciled
    as CHI's where its header's source says the ingest read a CHI trace."""
    header, recs = read_all(path)
    return analyse_events(Path(path).name, header, recs, out, [], check_model, variant,
                          dirty_up=header.source.get("protocol") == "CHI")


def analyse_events(name: str, header: Header, recs: np.ndarray, out: Path | None, fields: list, check_model: bool,
                   variant: str, interval_ticks: int | None = None, dirty_up: bool = False,
                   nodes: dict[int, int] | None = None, lister_visits: list | None = None) -> Analysis:
    variant, cfg = ondemand.config_for(header.num_cores, header.num_sockets, variant)
    replay.check_fits(header, cfg, name)
    regions = regions_for(fields, cfg.params.regions)
    watch = [replay.Region(r.line, cfg.params.line_mask) for r in regions]

    t0 = time.perf_counter()
    rtl, perf = replay.replay_rtl(recs, watch, variant)
    series = queue = None
    if interval_ticks:   # the same counting again, snapshotted, by the compiled model: its last is rtl (checked)
        over_time = live.series(recs, variant, [(r.base, r.mask) for r in watch], interval_ticks, by_model=True)
        if diff_counters(rtl, over_time.snapshots[-1]):
            raise CohtbError(f"{name}: the monitor's counters over time do not end at its counters")
        series = {"variant": variant, "regions": [r.line for r in regions], **over_time.to_json()}
        if nodes is not None and over_time.origin_tick is not None:
            queue = lock_queue.per_interval(recs, nodes, over_time.origin_tick, interval_ticks, len(over_time.ends))
    check = "not run"
    if check_model:
        diffs = diff_counters(replay.replay_model(recs, watch, cfg), rtl)
        if diffs:
            raise CohtbError(f"{name}: RTL and reference model disagree: " + "; ".join(diffs[:8]))
        check = "identical"

    rec = reconcile(recs, header.num_sockets, dirty_up)
    ideal = rec.ideal
    checked = {line: c for line, c in sorted(rec.lines.items()) if c.matched or c.unexplained or c.explained}
    contended = [line for line, c in checked.items() if c.matched >= CONTENDED]
    watched = {r.line for r in regions} | {h.line for h in rtl.hot if h.valid}
    hottest = sorted(ideal.stats, key=lambda line: -ideal.stats[line].pingpong)[:HOTTEST]
    doc = Analysis(
        format=FORMAT, run=name, variant=variant, params=cfg.params, line_size=header.line_size,
        regions=[RegionRecord(index=r.index, line=r.line, fields=list(r.fields)) for r in regions],
        rtl=rtl, model_check=check,
        ideal=IdealSummary(totals=ideal.totals(), matrix=ideal.matrix, hottest=hottest,
                           lines={line: ideal.stats[line] for line in sorted(watched | set(hottest)) if line in ideal.stats}),
        gem5=GemCheck(event_format=header.version, evidence=sum(ideal.kinds[k] for k in (Kind.FWD_GETS, Kind.FWD_GETX, Kind.INV)), totals=rec.totals(), lines=checked, tolerance=TOLERANCE, contended=contended,
                      outside=[line for line in contended if not checked[line].within_tolerance()]),
        replay=ReplayPerf(**perf, wall_seconds=round(time.perf_counter() - t0, 3)), series=series,
        lock_queue=queue, lister_visits=lister_visits, chain=line_chain.chain(recs, hottest[0]) if hottest else None)
    if out is not None:
        write_text_atomic(out, doc.model_dump_json(by_alias=True, indent=1))
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
