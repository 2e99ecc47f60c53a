"""`cohtb launch`: gem5 runs of a named plan, or one-off runs built from the options. A measurement option left
out comes from the declaration of the seed the runs stand for (cohtb/experiments/plans.py), never from here."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from cohtb.commands._shared import add_recording_arguments, print_cost, record
from cohtb.errors import CohtbError
from cohtb.experiments import plans
from cohtb.launch import check
from cohtb.places import CALIBRATION_RUNS, REFERENCE_RUNS, RUNS
from cohtb.run.machines import core_of, known
from cohtb.run.recorder import Live
from cohtb.run.spec import RunSpec

DECLARED = "default: as the seed's declaration says"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--matrix", default="default", help=f"named run plan: {', '.join(plans.PLANS)} (default: every "
                   "seed's SE experiment; seedNNN: one seed's runs as declared)")
    p.add_argument("--workload", help="instead of a plan: one workload, with the options below")
    p.add_argument("--fs", action="store_true", help="full-system runs of the guest kernels named by --kernel "
                   "(stat(2) or open/close of one tmpfs file; kernels and boot checkpoints are built and cached first)")
    p.add_argument("--kernel", help="with --fs: comma-separated kernel variants (`cohtb kernel list`)")
    p.add_argument("--op", choices=["stat", "open_close"], default="stat", help="with --fs: the guest benchmark's operation")
    p.add_argument("--dentry-line-offset", default="0",
                   help="with --fs: comma-separated byte offsets (0, 8 .. 56) of the file's dentry in its cache line, or "
                        "any: where the allocator puts it (default 0: at a line start, as pahole draws it)")
    p.add_argument("--repetitions", type=int, default=0, help="with --fs: seeds 1..N (perturbed starts); 0: --seed only")
    p.add_argument("--policy", default="locked", help="comma-separated policies (with --workload)")
    p.add_argument("--layout", default="shared", help="comma-separated layouts (with --workload)")
    p.add_argument("--sockets", type=int, default=2, help="sockets (a power of two; with --workload or --fs)")
    p.add_argument("--cores-per-socket", type=int, default=2, help="cores in each socket (with --workload or --fs)")
    p.add_argument("--ops", type=int, default=0, help="fixed work per thread (with --workload); 0: the timed window below")
    p.add_argument("--warmup-us", type=int, default=None, help=f"simulated µs every thread runs before the window ({DECLARED})")
    p.add_argument("--window-us", type=int, default=None, help=f"the measured window, simulated µs ({DECLARED})")
    p.add_argument("--interval-us", type=int, default=None, help=f"ops are counted per interval of this length ({DECLARED})")
    p.add_argument("--skew-ns", type=int, default=None, help=f"largest start skew with a seed ({DECLARED})")
    p.add_argument("--seed", type=int, default=0, help="start perturbation (per-thread skew); 0: none")
    p.add_argument("--intruder-period-us", type=int, default=0, help="an intruder takes the lock every N µs; 0: none")
    p.add_argument("--cpu", choices=["timing", "o3"],
                   help="gem5 CPU model (default: the machine's core: a machine file's, else timing)")
    p.add_argument("--machine", choices=known(), default="flat",
                   help="with --workload or --fs: the simulated machine, a hierarchy or a machine file "
                        "(docs/machine.md; each hierarchy needs its own gem5 build: GEM5 the flat one's, GEM5_CHI "
                        "the socket one's)")
    p.add_argument("--untraced", action="store_true",
                   help="with --workload: gem5 without ProtocolTrace (for a workload that times itself, e.g. cclat)")
    p.add_argument("--live", action="store_true",
                   help="count while gem5 runs: its trace goes through a pipe into the ingest and the Verilated "
                        "monitor, which takes a snapshot every --interval-us of simulated time (live.json); no "
                        "trace file is kept")
    p.add_argument("--keep-trace", action="store_true", help="with --live: keep gem5's trace too (trace.gz)")
    add_recording_arguments(p, "where run directories go", "print the runs it would record, each with its "
                            "predicted gem5 CPU time, and the whole set's CPU hours and wall time on --jobs slots, "
                            "and stop")


def offset_list(text: str) -> tuple[int | None, ...]:
    out: list[int | None] = []
    for part in dict.fromkeys(text.split(",")):   # each once
        if part == "any":
            out.append(None)
        elif part.isdigit() and int(part) % 8 == 0 and int(part) < 64:
            out.append(int(part))
        else:
            raise CohtbError(f"--dentry-line-offset {text}: comma-separated offsets 0, 8 .. 56, or any")
    return tuple(out)


def specs_of(args: argparse.Namespace) -> list[RunSpec]:
    one_off = one_off_specs(args)
    if one_off is None:
        if args.machine != "flat" or args.untraced:
            raise CohtbError("--machine and --untraced go with --workload or --fs: a plan names its own machine")
        return plans.plan(args.matrix)
    if args.untraced and args.fs:
        raise CohtbError("--untraced goes with --workload: full-system runs are always traced")
    return [replace(s, machine=args.machine, traced=not args.untraced) for s in one_off]


def one_off_specs(args: argparse.Namespace) -> list[RunSpec] | None:
    measure = {"warmup_us": args.warmup_us, "window_us": args.window_us, "interval_us": args.interval_us,
               "skew_ns": args.skew_ns}
    if args.fs:
        if not args.kernel:
            raise CohtbError("--fs needs --kernel VARIANT[,VARIANT...] (`cohtb kernel list` names them)")
        if args.ops:
            raise CohtbError("--fs runs are timed: give --warmup-us/--window-us, not --ops")
        seeds = list(range(1, args.repetitions + 1)) if args.repetitions else [args.seed]
        return plans.full_system_runs(args.kernel.split(","), args.sockets, args.cores_per_socket, seeds, args.op,
                                      offset_list(args.dentry_line_offset), **measure)
    if args.workload:
        return plans.workload_runs(args.workload, args.policy.split(","), args.layout.split(","), args.sockets,
                                   args.cores_per_socket, ops=args.ops, intruder_period_us=args.intruder_period_us,
                                   cpu=cpu_of(args), seed=args.seed, **measure)
    return None


def cpu_of(args: argparse.Namespace) -> str:
    """--cpu, else the machine's core; a machine whose core is out of order runs no timing core."""
    core = core_of(args.machine)
    if args.cpu == "timing" and core == "o3":
        raise CohtbError(f"--cpu timing: machine {args.machine} has o3 cores (leave --cpu out, or give another "
                         "--machine)")
    return args.cpu or core


def run(args: argparse.Namespace) -> int:
    if args.keep_trace and not args.live:
        raise CohtbError("--keep-trace goes with --live (a run without it keeps its trace anyway)")
    specs = specs_of(args)
    if args.dry_run:
        check(specs)
        print_cost(specs, [Path(args.runs), RUNS, REFERENCE_RUNS, CALIBRATION_RUNS], args.jobs)
        return 0
    return record(specs, args, "cohtb launch", Live(keep_trace=args.keep_trace) if args.live else None)
