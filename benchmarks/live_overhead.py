#!/usr/bin/env python3
"""Host time of one gem5 run three ways: untraced (no ProtocolTrace), traced to a file and counted afterwards
(today's way: gem5 writes trace.gz, then the ingest and the monitor's replay), and live (gem5 writes into a
pipe, the ingest and the Verilated monitor count while it runs); and, as the floor of any traced way, traced
with the text thrown away (/dev/null). Needs gem5 (GEM5 or gem5.opt on PATH).

    .venv/bin/python benchmarks/live_overhead.py [--machine flat] [--sockets 8 --cores-per-socket 4]
        [--policy retry100] [--window-us 200] [--repeat 1] [--report DIR]

Each way is timed twice: host (wall) seconds, and CPU seconds (this process and every process it waited for:
gem5, the ingest, the monitor), which do not depend on what else shares the cores and are the cost to compare
on a busy machine.

gem5 SE is deterministic, so each live run's snapshots and final counters must be the offline replay of the
traced-to-file run's events: checked on every repetition (exit 1 if not). --report writes the cohtb report of
the last live run (with its figure of the monitor over simulated time).

The goals: a traced run, counted, within 1.1x of an untraced one's CPU seconds, and a live run within 1.15x.
"""

from __future__ import annotations

import argparse
import json
import resource
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

GOAL_TRACED, GOAL_LIVE = 1.1, 1.15   # CPU seconds over an untraced run's


def cpu_seconds() -> float:
    """User and system seconds of this process and of every process it has waited for (theirs included)."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def timed(work) -> tuple[float, float, object]:
    """(host seconds, CPU seconds, result) of work()."""
    t0, c0 = time.monotonic(), cpu_seconds()
    result = work()
    return time.monotonic() - t0, cpu_seconds() - c0, result


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
    ways = ("untraced", "traced to /dev/null", "file: gem5", "file: gem5 + ingest + replay", "live")
    host: dict[str, list[float]] = {w: [] for w in ways}
    cpu: dict[str, list[float]] = {w: [] for w in ways}

    def keep(way: str, wall: float, used: float) -> None:
        host[way].append(wall)
        cpu[way].append(used)

    for k in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="cohtb-live-bench-") as tmp:
            tmp = Path(tmp)
            print(f"[{k + 1}/{args.repeat}] {spec.id}: untraced...", flush=True)
            keep("untraced", *timed(lambda: bare(spec, gem5, tmp / "untraced", traced=False))[:2])
            print(f"[{k + 1}/{args.repeat}] traced, the text thrown away...", flush=True)
            keep("traced to /dev/null", *timed(lambda: bare(spec, gem5, tmp / "devnull", traced=True))[:2])
            print(f"[{k + 1}/{args.repeat}] traced to a file...", flush=True)
            wall, used, (_, run_dir) = timed(lambda: recorded(spec, tmp / "file", None))
            manifest = json.loads((run_dir / "manifest.json").read_text())
            ingest = manifest["ingest"]["host_seconds"]
            if manifest["gem5"].get("cpu_seconds") is None:
                raise SystemExit(f"{run_dir}: the manifest has no gem5 cpu_seconds (a gem5 run older than the recorder)")
            keep("file: gem5", wall - ingest, manifest["gem5"]["cpu_seconds"])
            replay_wall, replay_cpu, _ = timed(lambda: analyse(runs.load(run_dir), tmp / "counters.json"))
            keep("file: gem5 + ingest + replay", wall + replay_wall, used + replay_cpu)
            simulated_ms = manifest["roi"]["seconds"] * 1e3
            print(f"[{k + 1}/{args.repeat}] live...", flush=True)
            wall, used, (_, live_dir) = timed(lambda: recorded(spec, tmp / "live", Live()))
            keep("live", wall, used)
            ingested = json.loads((live_dir / "manifest.json").read_text())["ingest"]
            events, lines = ingested["events"], ingested["lines"]
            intervals = same_as_offline(live_dir, run_dir)
            print(f"[{k + 1}/{args.repeat}] live: {intervals} snapshots and the final counters equal the offline "
                  f"replay of the traced run's {events:,} events", flush=True)
            if args.report and k == args.repeat - 1:
                ms = metrics_for([runs.load(live_dir)], tmp / "analysis", check_model=False)
                print(f"report: {report.write(ms, args.report, title=f'live {spec.id}')}", flush=True)
    base = statistics.median(cpu["untraced"])
    print(f"\n{spec.id}: {lines:,} trace lines, {events:,} events in the window, {simulated_ms:.2f} simulated ms; "
          f"median of {args.repeat}")
    print(f"{'way':32s} {'host s':>8s} {'CPU s':>8s} {'(min-max)':>14s} {'CPU / untraced':>15s} {'CPU s per sim. ms':>18s}")
    for way in ways:
        m = statistics.median(cpu[way])
        print(f"{way:32s} {statistics.median(host[way]):8.1f} {m:8.1f} {f'({min(cpu[way]):.1f}-{max(cpu[way]):.1f})':>14s} "
              f"{m / base:14.2f}x {m / simulated_ms:18.1f}")
    live_cpu, filed = statistics.median(cpu["live"]), statistics.median(cpu["file: gem5 + ingest + replay"])
    for what, ratio, goal in (("traced to a file and counted", filed / base, GOAL_TRACED),
                              ("live", live_cpu / base, GOAL_LIVE)):
        print(f"CPU: {what} / untraced {ratio:.2f}x (goal <= {goal}x: {'met' if ratio <= goal else 'MISSED'})")


if __name__ == "__main__":
    main()
