"""The cohtb command line: one verb per job."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cohtb.errors import CohtbError


def cmd_run(args: argparse.Namespace) -> int:
    from cohtb import mainjob

    return mainjob.run(Path(args.out), args.matrix, args.jobs, args.timeout)


def cmd_replay(args: argparse.Namespace) -> int:
    from cohtb.analysis.analyse import analyse, analyse_event_file
    from cohtb.analysis.pipeline import counters_path
    from cohtb.report.lines import line_table
    from cohtb.sim.runs import discover

    analysis_dir = Path(args.out) if args.out else None
    files = [Path(r) for r in args.runs if Path(r).is_file()]
    runs = discover([Path(r) for r in args.runs if not Path(r).is_file()]) if len(files) < len(args.runs) else []
    done = []
    for f in files:
        path = analysis_dir / f.name / "counters.json" if analysis_dir else None
        done.append((f.name, analyse_event_file(f, path, check_model=args.check), path))
    for run in runs:
        path = counters_path(run, analysis_dir)
        done.append((run.id, analyse(run, path, check_model=args.check), path))
    for name, doc, path in done:
        g, perf = doc.rtl.totals, doc.replay
        print(f"{name}: {perf.events:,} events through the Verilated monitor ({doc.variant}, "
              f"{perf.eventsPerSecond / 1e6:.1f} M events/s); transfers {g['transfers']:,}, "
              f"cross-socket {g['crossSocketTransfers']:,}, dirty reads {doc.rtl.dirty_reads:,}; "
              f"RTL vs model: {doc.model_check}" + (f"; -> {path}" if path else ""))
        print(f"  against gem5: {doc.gem5.verdict}")
        if args.lines:
            print(line_table(doc, args.lines).text())
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from cohtb.analysis.pipeline import metrics_for, standard_comparisons
    from cohtb.report.html import write
    from cohtb.sim.runs import discover

    files = [Path(r) for r in args.runs if Path(r).is_file()]
    if files:
        from cohtb.analysis.analyse import analyse_event_file
        from cohtb.report import event_files

        if len(files) < len(args.runs):
            raise CohtbError("report takes either run directories or bare event files, not both")
        docs = [analyse_event_file(f, None, check_model=args.check) for f in files]
        print(f"report of {len(docs)} event files: {event_files.write(docs, Path(args.out))}")
        return 0
    runs = discover([Path(r) for r in args.runs])
    ms = metrics_for(runs, Path(args.analysis) if args.analysis else None, check_model=args.check)
    tables, _ = standard_comparisons(ms) if args.compare else ([], [])
    html = write(ms, Path(args.out), extra_tables=tables)
    print(f"report of {len(ms)} runs: {html} (and report.md, report.json, plots/ beside it)")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from cohtb.analysis.compare import attribution, configuration_tables, pair_by_key, pair_table
    from cohtb.analysis.pipeline import metrics_for
    from cohtb.sim.runs import discover

    analysis = Path(args.analysis) if args.analysis else None
    if args.key:
        try:
            key, values = args.key.split("=", 1)
            base_v, new_v = values.split(",", 1)
        except ValueError:
            raise CohtbError(f"--by wants KEY=BASE,NEW (e.g. layout=shared,split), got '{args.key}'") from None
        ms = metrics_for(discover([Path(args.base), *map(Path, args.new)]), analysis)
        pairs = pair_by_key(ms, key, base_v, new_v)
        for t in configuration_tables(pairs, f"{key}={base_v}", f"{key}={new_v}"):
            print(t.text())
    else:
        if not args.new:
            raise CohtbError("compare needs BASE and at least one NEW run (or --by KEY=BASE,NEW over directories of runs)")
        base, *news = metrics_for(discover([Path(args.base)]) + discover([Path(n) for n in args.new]), analysis)
        pairs = [(base, n) for n in news]
    for b, n in pairs:
        print(pair_table(b, n).text())
        table, text = attribution(b, n)
        print(table.text())
        print(text + "\n")
    return 0


def cmd_soak(args: argparse.Namespace) -> int:
    from cohtb.monitor.soak import soak

    if args.events < 1 or args.chunk < 1:
        raise CohtbError("--events and --chunk must be at least 1")
    result = soak(args.events, args.seed, args.variant, args.chunk)
    print(result.summary())
    for line in result.first_mismatch:
        print("  first mismatch: " + line)
    return 1 if result.mismatched_chunks else 0


def cmd_synth(args: argparse.Namespace) -> int:
    from cohtb.monitor import synth

    print(f"synthesizing the {args.variant} monitor with Yosys (Xilinx 7-series mapping)...", flush=True)
    report = synth.synthesize(args.variant)
    print(report.summary())
    return 0


def cmd_native(args: argparse.Namespace) -> int:
    from cohtb.sim import native
    from cohtb.sim.workloads import WORKLOADS

    names = args.workload or list(WORKLOADS)
    for n in names:
        if n not in WORKLOADS:
            raise CohtbError(f"unknown workload '{n}' (known: {', '.join(WORKLOADS)})")
    rows = native.run_matrix(names, args.threads, args.ops, args.repeat, Path(args.out) if args.out else None)
    print(native.table(rows))
    return 0


def specs_from_args(args: argparse.Namespace):
    from cohtb.sim.plans import PLANS, RunSpec

    if args.workload:
        return [RunSpec(args.workload, p, l, args.sockets, args.cores_per_socket, args.ops, args.intruder_period_us,
                        cpu=args.cpu)
                for p in args.policy.split(",") for l in args.layout.split(",")]
    if args.matrix not in PLANS:
        raise CohtbError(f"unknown run plan '{args.matrix}' (known: {', '.join(PLANS)})")
    return PLANS[args.matrix]()


def cmd_launch(args: argparse.Namespace) -> int:
    from cohtb.sim import launch

    specs = specs_from_args(args)
    print(f"cohtb launch: {len(specs)} runs into {args.runs}", flush=True)
    outcomes = launch.launch(specs, Path(args.runs), args.jobs, args.timeout)
    failed = [o for o in outcomes if o.status == "failed"]
    for o in failed:
        print(f"FAILED {o.spec.id}: {o.error}", file=sys.stderr)
    return 1 if failed else 0


def cmd_ingest(args: argparse.Namespace) -> int:
    from cohtb.trace import ingest

    if (args.socket_map is None) == (args.cores_per_socket is None):
        raise CohtbError("give the sockets as --socket-map FILE|LIST or as --cores-per-socket K (one of the two)")
    if args.cores_per_socket is not None and args.cores_per_socket < 1:
        raise CohtbError(f"--cores-per-socket {args.cores_per_socket}: must be at least 1")
    smap = ingest.read_socket_map(args.socket_map) if args.socket_map else None
    counts = ingest.ingest(args.trace, Path(args.out), smap, {"trace": str(args.trace)},
                           pagemap=Path(args.pagemap) if args.pagemap else None, cores_per_socket=args.cores_per_socket)
    print(f"{args.trace}: {counts['lines']:,} lines -> {counts['events']:,} events of {counts['cores']} cores in "
          f"{counts['sockets']} sockets in {args.out}")
    print("  " + ", ".join(f"{k} {v:,}" for k, v in counts.items() if k not in ("lines", "events", "cores", "sockets")))
    return 0


def cmd_bundle(args: argparse.Namespace) -> int:
    from cohtb.sim.bundle import bundle
    from cohtb.sim.runs import discover

    runs = discover([Path(r) for r in args.runs])
    size = bundle(runs, Path(args.into))
    print(f"bundled {len(runs)} runs into {args.into}: {size / 1e6:.2f} MB")
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="cohtb", description="Cache-coherence testbed: lockref ping-pong, counted.")
    sub = ap.add_subparsers(dest="verb", required=True)

    run = sub.add_parser("run", help="the main job: gem5 runs (or the bundled reference runs), replay, report, compare")
    run.add_argument("--out", default="results", help="where runs, counters and the report go (default results/)")
    run.add_argument("--matrix", default="default", help="the matrix to launch when gem5 is found")
    run.add_argument("--jobs", type=int, default=None)
    run.add_argument("--timeout", type=float, default=3600, help="seconds per gem5 run")
    run.set_defaults(func=cmd_run)

    rp = sub.add_parser("replay", help="stream runs' (or bare event files') events through the Verilated monitor, a monitor "
                        "sized for them if the default is too small; check them against gem5's evidence")
    rp.add_argument("runs", nargs="+", help="run directories (or directories of runs), or bare event files")
    rp.add_argument("--check", action="store_true", help="also run the reference model and fail on any difference")
    rp.add_argument("--out", help="write RUN_ID/counters.json here instead of into each run directory "
                    "(a bare event file's counters are written only here)")
    rp.add_argument("--lines", type=int, default=10, help="print the N lines with the most transfers and dirty reads "
                    "(0: none)")
    rp.set_defaults(func=cmd_replay)

    rep = sub.add_parser("report", help="Markdown, JSON, PNG plots and an HTML page for runs")
    rep.add_argument("runs", nargs="+", help="run directories (or directories of runs), or bare event files")
    rep.add_argument("--out", default="results/report")
    rep.add_argument("--analysis", help="where counters.json files are (default: inside each run)")
    rep.add_argument("--check", action="store_true", help="check the RTL against the model when replaying")
    rep.add_argument("--no-compare", dest="compare", action="store_false", help="leave out the standard comparisons")
    rep.set_defaults(func=cmd_report)

    cp = sub.add_parser("compare", help="base vs new: %% change tables and an attribution to lines and fields")
    cp.add_argument("base", help="the base run (or, with --by, a directory of runs)")
    cp.add_argument("new", nargs="*", help="runs to compare against the base")
    cp.add_argument("--by", dest="key", help="KEY=BASE,NEW: pair runs differing only in KEY (e.g. layout=shared,split)")
    cp.add_argument("--analysis", help="where counters.json files are (default: inside each run)")
    cp.set_defaults(func=cmd_compare)

    la = sub.add_parser("launch", help="run a matrix of gem5 simulations (needs gem5: GEM5 or gem5.opt on PATH)")
    la.add_argument("--matrix", default="default", help="named matrix: default (8x4 lockref) or smoke (2x2)")
    la.add_argument("--workload", help="instead of a named matrix: one workload ...")
    la.add_argument("--policy", default="locked", help="... comma-separated policies")
    la.add_argument("--layout", default="shared", help="... comma-separated layouts")
    la.add_argument("--sockets", type=int, default=2)
    la.add_argument("--cores-per-socket", type=int, default=2)
    la.add_argument("--ops", type=int, default=100)
    la.add_argument("--intruder-period-us", type=int, default=0)
    la.add_argument("--cpu", choices=["timing", "o3"], default="timing")
    la.add_argument("--runs", default="results/runs", help="where run directories go")
    la.add_argument("--jobs", type=int, default=None, help="parallel gem5 runs (default: the machine's cores)")
    la.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    la.set_defaults(func=cmd_launch)

    ig = sub.add_parser("ingest", help="convert a gem5 ProtocolTrace (plain, .gz or - for a pipe) to a cohtb event file")
    ig.add_argument("trace")
    ig.add_argument("out")
    ig.add_argument("--socket-map", help="core->socket map: a file of '<core> <socket>' lines, or sockets in core "
                    "order as a list (0,0,1,1); a core is an L1 controller (the trace's version column)")
    ig.add_argument("--cores-per-socket", type=int, help="instead of a map: core c is in socket c // K, for as many "
                    "cores as the trace shows")
    ig.add_argument("--pagemap", help="also write the TLB page mappings found in the trace here")
    ig.set_defaults(func=cmd_ingest)

    bu = sub.add_parser("bundle", help="copy finished runs (manifest + compressed events) into reference-runs/")
    bu.add_argument("runs", nargs="+")
    bu.add_argument("--into", default="reference-runs")
    bu.set_defaults(func=cmd_bundle)

    na = sub.add_parser("native", help="run the workload matrix on this machine and print ops/s per policy and layout")
    na.add_argument("workload", nargs="*", help="workloads to run (default: all)")
    na.add_argument("--threads", type=int, default=2)
    na.add_argument("--ops", type=int, default=None, help="operations per thread (default: each workload's own)")
    na.add_argument("--repeat", type=int, default=3, help="runs per cell; the table shows the best")
    na.add_argument("--out", default="results/native.json", help="where the rows are written ('' for nowhere)")
    na.set_defaults(func=cmd_native)

    so = sub.add_parser("soak", help="a long random stream (workload contention patterns mixed in) through the RTL and "
                        "the bit-exact model, every counter compared after every chunk")
    so.add_argument("--events", type=int, default=10_000_000)
    so.add_argument("--seed", type=int, default=1)
    so.add_argument("--variant", default="default")
    so.add_argument("--chunk", type=int, default=200_000, help="events between comparisons")
    so.set_defaults(func=cmd_soak)

    sy = sub.add_parser("synth", help="synthesize the monitor with Yosys and report its size")
    sy.add_argument("--variant", default="default")
    sy.set_defaults(func=cmd_synth)
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CohtbError as e:
        print(f"cohtb {args.verb}: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
