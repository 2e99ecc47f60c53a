#!/usr/bin/env python3
"""Host time of one gem5 run three ways: untraced (no ProtocolTrace), traced to a file and counted afterwards
(today's way: gem5 writes trace.gz, then the ingest and the monitor's replay), and live (gem5 writes into a
pipe, the ingest and the Verilated monitor count while it runs); and, as the floor of any traced way, traced
with the text thrown away (/dev/null). Needs gem5 (GEM5 or gem5.opt on PATH).

    .venv/bin/python benchmarks/live_overhead.py [--machine flat] [--sockets 8 --cores-per-socket 4]
        [--policy retry100] [--window-us 200] [--repeat 1] [--report DIR]

gem5 SE is deterministic, so each live run's snapshots and final counters must be the offline replay of the
traced-to-file run's events: checked on every repetition (exit 1 if not). --report writes the cohtb report of
the last live run (with its figure of the monitor over simulated time).

The goal (issue 15): live costs no more than 1.3x an untraced run and no more than a traced-to-file run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from cohtb.analysis.analyse import analyse
from cohtb.analysis.pipeline import metrics_for
from cohtb.monitor import live, rtl
from cohtb.report import html as report
from cohtb import launch
from cohtb.experiments.plans import workload_runs
from cohtb.run import gem5 as gem5_tool, runs
from cohtb.run.recorder import Live
from cohtb.run.spec import RunSpec
from cohtb.se import runner as se_runner

GOAL_VS_UNTRACED = 1.3


def bare(spec: RunSpec, gem5: Path, tmp: Path, traced: bool) -> float:
    """The run's own gem5 command line, alone: untraced (--no-trace, no debug file), or traced with the text thrown
    away (--debug-file=/dev/null: what gem5's formatting of ProtocolTrace costs, whatever reads it)."""
    cmd = se_runner.command(spec, tmp, gem5, trace="/dev/null" if traced else None,
                            config_args=() if traced else ("--no-trace",))
    t0 = time.monotonic()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    seconds = time.monotonic() - t0
    roi = json.loads((tmp / "roi.json").read_text())
    if "roi_seconds" not in roi:
        raise SystemExit(f"the {'traced' if traced else 'untraced'} run never reached its work-end: {roi.get('exit_cause')}")
    return seconds


def recorded(spec: RunSpec, into: Path, live: Live | None) -> tuple[float, Path]:
    t0 = time.monotonic()
    [o] = launch.launch([spec], into, jobs=1, live=live)
    if o.status != "done":
        raise SystemExit(f"{spec.id}: {o.error}")
    return time.monotonic() - t0, into / spec.id


def same_as_offline(live_dir: Path, traced_dir: Path) -> int:
    """The live run's live.json against the same counting of the traced run's event file; the number of snapshots.
    Exits 1 when they differ."""
    doc = json.loads((live_dir / "live.json").read_text())
    _, recs = runs.load(traced_dir).events()
    offline = live.series(recs, doc["variant"], [], doc["interval_ticks"]).to_json()
    final, _ = rtl.replay(recs, [], doc["variant"])
    if doc != {"variant": doc["variant"], "regions": [], **offline} or doc["final"] != final.to_json():
        raise SystemExit(f"{live_dir.name}: the live counters differ from the offline replay of the traced run")
    return len(doc["intervals"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--machine", default="flat", help="a hierarchy or a machine file (docs/machine.md)")
    ap.add_argument("--sockets", type=int, default=8)
    ap.add_argument("--cores-per-socket", type=int, default=4)
    ap.add_argument("--workload", default="lockref")
    ap.add_argument("--policy", default="retry100")
    ap.add_argument("--layout", default="split")
    ap.add_argument("--warmup-us", type=int, default=None, help="default: as the seeds declare")
    ap.add_argument("--window-us", type=int, default=None, help="default: as the seeds declare")
    ap.add_argument("--interval-us", type=int, default=None, help="default: as the seeds declare")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each way (the median is reported)")
    ap.add_argument("--report", type=Path, help="write the report of the last live run here")
    args = ap.parse_args()
    gem5 = gem5_tool.require(args.machine)
    # As the seeds' runs are: a seeded start skew (without one, 32 threads starting at once can starve thread 0,
    # which marks the window, through all of it)
    [spec] = workload_runs(args.workload, [args.policy], [args.layout], args.sockets, args.cores_per_socket, seed=1,
                           warmup_us=args.warmup_us, window_us=args.window_us, interval_us=args.interval_us)
    spec = replace(spec, machine=args.machine)
    launch.check([spec])
    times: dict[str, list[float]] = {"untraced": [], "traced to /dev/null": [], "file: gem5": [],
                                     "file: gem5 + ingest + replay": [], "live": []}
    for k in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="cohtb-live-bench-") as tmp:
            tmp = Path(tmp)
            print(f"[{k + 1}/{args.repeat}] {spec.id}: untraced...", flush=True)
            times["untraced"].append(bare(spec, gem5, tmp / "untraced", traced=False))
            print(f"[{k + 1}/{args.repeat}] traced, the text thrown away...", flush=True)
            times["traced to /dev/null"].append(bare(spec, gem5, tmp / "devnull", traced=True))
            print(f"[{k + 1}/{args.repeat}] traced to a file...", flush=True)
            total, run_dir = recorded(spec, tmp / "file", None)
            t0 = time.monotonic()
            analyse(runs.load(run_dir), tmp / "counters.json")   # the monitor's replay of the event file
            replay = time.monotonic() - t0
            manifest = json.loads((run_dir / "manifest.json").read_text())
            simulated_ms = manifest["roi"]["seconds"] * 1e3
            times["file: gem5"].append(total - manifest["ingest"]["host_seconds"])
            times["file: gem5 + ingest + replay"].append(total + replay)
            print(f"[{k + 1}/{args.repeat}] live...", flush=True)
            live_s, live_dir = recorded(spec, tmp / "live", Live())
            times["live"].append(live_s)
            ingested = json.loads((live_dir / "manifest.json").read_text())["ingest"]
            events, lines = ingested["events"], ingested["lines"]
            intervals = same_as_offline(live_dir, run_dir)
            print(f"[{k + 1}/{args.repeat}] live: {intervals} snapshots and the final counters equal the offline "
                  f"replay of the traced run's {events:,} events", flush=True)
            if args.report and k == args.repeat - 1:
                ms = metrics_for([runs.load(live_dir)], tmp / "analysis", check_model=False)
                print(f"report: {report.write(ms, args.report, title=f'live {spec.id}')}", flush=True)
    base = statistics.median(times["untraced"])
    print(f"\n{spec.id}: {lines:,} trace lines, {events:,} events in the window; host seconds, median of "
          f"{args.repeat}")
    print(f"{'way':32s} {'seconds':>9s} {'(min-max)':>14s} {'/ untraced':>11s} {'per simulated ms':>17s}")
    for name, values in times.items():
        m = statistics.median(values)
        print(f"{name:32s} {m:9.1f} {f'({min(values):.1f}-{max(values):.1f})':>14s} {m / base:10.2f}x "
              f"{m / simulated_ms:16.1f}")
    live, filed = statistics.median(times["live"]), statistics.median(times["file: gem5 + ingest + replay"])
    print(f"\nlive / untraced {live / base:.2f}x (goal <= {GOAL_VS_UNTRACED}x: {'met' if live / base <= GOAL_VS_UNTRACED else 'MISSED'}); "
          f"live / traced to a file and counted {live / filed:.2f}x (goal <= 1: {'met' if live <= filed else 'MISSED'})")


if __name__ == "__main__":
    main()
