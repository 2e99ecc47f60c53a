#!/usr/bin/env python3
"""Events per second of the reference model (the Python specification, and the compiled model the main job
checks runs with) and of the Verilated monitor (in-process Verilated library).

    .venv/bin/python benchmarks/monitor_throughput.py [--events N] [--model-events M] [--repeat K] [--trials T]

All run the same seeded random stream; the compiled model's counters are compared with the specification's on the
part the specification ran, and the RTL's with the specification's there too.
"""

from __future__ import annotations

import argparse
import statistics
import time

from cohtb.monitor import config, replay, rtl
from cohtb.monitor.compiled_model import CompiledModel
from cohtb.monitor.models import BoundedModel
from cohtb.monitor.counters import diff_counters
from cohtb.verify import random_events as streams

# The replay harness's speed goal: events per second through the Verilated monitor on one core. ~5 M is what the
# issue asks to keep; the replay is not the bottleneck (gem5 produces coherence events thousands of times slower),
# so nothing beyond it is asked. The FPGA pipeline brought it below (docs/fpga-timing.md, "The cost in the
# Verilated replay").
GOAL_EVENTS_PER_SECOND = 5_000_000
# The reference model's goal: the main job checks every bundled run (about 10 M events) against it in seconds.
MODEL_GOAL_EVENTS_PER_SECOND = 1_000_000


def model_rate(model, recs) -> tuple[float, object]:
    t0 = time.perf_counter()
    model.apply_array(recs)
    return len(recs) / (time.perf_counter() - t0), model.snapshot()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=2_000_000, help="stream length for the RTL")
    ap.add_argument("--model-events", type=int, default=300_000, help="prefix the Python model runs")
    ap.add_argument("--repeat", type=int, default=5, help="times the RTL streams the file per trial")
    ap.add_argument("--trials", type=int, default=5, help="timed RTL runs")
    args = ap.parse_args()

    header, recs = streams.random_stream(args.events, seed=7)
    prefix = recs[: args.model_events]
    rtl.build_library("default")

    params = config.variant().params
    spec_rate, spec = model_rate(BoundedModel(params), prefix)
    _, compiled_prefix = model_rate(CompiledModel(params), prefix)
    compiled_rates = [model_rate(CompiledModel(params), recs)[0] for _ in range(args.trials)]
    rtl_prefix, _ = replay.replay_rtl(prefix, [])
    same = not diff_counters(spec, rtl_prefix) and not diff_counters(spec, compiled_prefix)
    print(f"reference model (Python specification): {args.model_events:>11,d} events at {spec_rate:>12,.0f} events/s")
    compiled = statistics.median(compiled_rates)
    print(f"reference model (compiled): {len(recs):>11,d} events, median {compiled:,.0f} events/s over {args.trials} "
          f"trials; goal {MODEL_GOAL_EVENTS_PER_SECOND:,d} events/s "
          f"({'met' if compiled >= MODEL_GOAL_EVENTS_PER_SECOND else 'not met'})")

    # A shared machine's speed drifts from run to run: report every trial, the median and the best.
    rates = []
    for trial in range(1, args.trials + 1):
        _, perf = replay.replay_rtl(recs, [], repeat=args.repeat)
        rates.append(perf["eventsPerSecond"])
        print(f"Verilated monitor (C++), trial {trial}/{args.trials}: {perf['events']:>11,d} events in "
              f"{perf['seconds']:7.2f} s = {perf['eventsPerSecond']:>12,.0f} events/s "
              f"({perf['cycles'] / perf['events']:.3f} cycles/event)")
    median = statistics.median(rates)
    print(f"Verilated monitor (C++): median {median:,.0f} events/s, "
          f"best {max(rates):,.0f} events/s over {args.trials} trials")
    print(f"replay-speed goal {GOAL_EVENTS_PER_SECOND:,d} events/s: median at {median / GOAL_EVENTS_PER_SECOND:.0%} "
          f"of it ({'met' if median >= GOAL_EVENTS_PER_SECOND else 'not met'})")
    print(f"RTL and compiled-model counters == the specification's on the {args.model_events:,d}-event prefix: {same}")
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
