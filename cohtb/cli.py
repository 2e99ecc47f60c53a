"""The cohtb command line: one verb per job."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from pathlib import Path

from cohtb.atomic import check_output_dir, writable_dir, writing
from cohtb.errors import CohtbError

from cohtb.experiments import declarations  # noqa: E402
from cohtb.experiments.seeds import FS_WARMUP_US, WARMUP_US as SE_WARMUP_US  # noqa: E402  (the seeds' warm-ups)
from cohtb.monitor.ecp5 import SPEED_GRADES
from cohtb.report.tables import TERMINAL_WIDTH


def cmd_run(args: argparse.Namespace) -> int:
    from cohtb import mainjob

    return mainjob.run(Path(args.out), args.matrix, args.jobs, args.timeout)


def cmd_replay(args: argparse.Namespace) -> int:
    from cohtb.analysis.analyse import analyse, analyse_event_file
    from cohtb.analysis.pipeline import counters_path
    from cohtb.report.lines import line_table
    from cohtb.sim.runs import discover

    analysis_dir = writable_dir(args.out) if args.out else None
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
        g, perf, ideal = doc.rtl.totals, doc.replay, doc.ideal.totals
        print(wrap(f"{name}: {perf.events:,} events through the Verilated monitor ({doc.variant}, "
                   f"{perf.eventsPerSecond / 1e6:.1f} M events/s)"))
        print(f"  RTL vs model: {doc.model_check}")
        if path:
            print(f"  counters: {path}")
        print(f"  monitor RTL (bounded line table): transfers {g['transfers']:,}, cross-socket "
              f"{g['crossSocketTransfers']:,}, dirty reads (HITM) {doc.rtl.dirty_reads:,}")
        print(f"  ideal model (every line, as below): transfers {ideal.transfers:,}, "
              f"cross-socket {ideal.crossSocketTransfers:,}, dirty reads (HITM) {ideal.dirty_reads:,}")
        print(f"  against gem5: {doc.gem5.verdict}")
        if args.lines:
            print(line_table(doc, args.lines).text())
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from cohtb.analysis.pipeline import metrics_for, standard_comparisons
    from cohtb.report.html import write
    from cohtb.sim.runs import discover

    out = check_output_dir(args.out, args.force)   # before the replays, which take minutes
    if (out / "report.html").exists() and not args.force:
        raise CohtbError(f"{out}: a report is there already; name another --out, or --force to replace it")
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
    from cohtb.analysis.compare import attribution, check_comparable, configuration_tables, pair_by_key, pair_table
    from cohtb.analysis.pipeline import metrics_for
    from cohtb.sim.runs import discover

    analysis = Path(args.analysis) if args.analysis else None
    if args.key:
        try:
            key, values = args.key.split("=", 1)
            base_v, new_v = values.split(",", 1)
        except ValueError:
            raise CohtbError(f"--by wants KEY=BASE,NEW (e.g. layout=shared,split), got '{args.key}'") from None
        from cohtb.sim.plans import RunSpec

        if key not in RunSpec.__dataclass_fields__:
            raise CohtbError(f"--by {key}: runs have no '{key}' (keys: {', '.join(RunSpec.__dataclass_fields__)})")
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
        note = check_comparable(b, n, args.allow_mismatch)
        if note:
            print(note, file=sys.stderr)
        print(pair_table(b, n).text())
        table, text = attribution(b, n)
        print(table.text())
        print(wrap(text) + "\n")
    return 0


def wrap(prose: str) -> str:
    """A line of prose at the width of the tables around it."""
    return textwrap.fill(prose, TERMINAL_WIDTH, break_on_hyphens=False, subsequent_indent="  ")


def kept_runs(specs, dirs: list[Path]) -> tuple[list, list[str]]:
    """The finished runs of these specs found in the first of `dirs` that has each, and the ids not found.
    A run of that id recorded from another spec (an older warm-up, say) is an error, not a match."""
    from cohtb.sim.runs import load

    runs, missing = [], []
    for spec in specs:
        found = next((d / spec.id for d in dirs if (d / spec.id / "manifest.json").exists()), None)
        if found is None:
            missing.append(spec.id)
            continue
        run = load(found)
        if run.spec != spec:
            raise CohtbError(f"{run.path}: recorded from another spec than the experiment's ({run.spec} != {spec})")
        runs.append(run)
    return runs, missing


def cmd_seeds(args: argparse.Namespace) -> int:
    from cohtb.analysis.pipeline import metrics_for
    from cohtb.experiments.seeds import EXPERIMENTS, HISTORY
    from cohtb.report.results import latest_complete, point_table, seed_result, verdict_rows

    from cohtb.mainjob import REFERENCE_RUNS

    dirs = list(dict.fromkeys([Path(args.runs), Path("results/runs"), REFERENCE_RUNS]))
    if args.seed is None:
        for e in EXPERIMENTS.values():
            runs, missing = kept_runs(e.specs(), dirs)
            print(f"seed {e.seed}: {e.title} — {e.base_name} vs {e.new_name}; declaration {e.declaration.id}; "
                  f"{len(runs)}/{len(e.specs())} runs kept")
        return 0
    if args.seed == "all":   # every seed in turn, the full-system one last (its boots are the longest)
        return max(cmd_seeds(argparse.Namespace(**{**vars(args), "seed": k})) for k in EXPERIMENTS)
    if args.seed not in EXPERIMENTS:
        raise CohtbError(f"--seed {args.seed}: no such experiment (known: {', '.join(EXPERIMENTS)}, all)")
    e = EXPERIMENTS[args.seed]
    if args.launch:
        from cohtb.sim import gem5, launch

        if gem5.find() is None:
            raise CohtbError(f"--launch needs gem5: {gem5.why_missing()}")
        declared = declarations.records_for(e.specs())   # committed before its runs, or refused here
        _, missing = kept_runs(e.specs(), dirs)
        todo = [s for s in e.specs() if s.id in missing]
        writable_dir(args.runs)
        print(f"cohtb seeds: seed {e.seed}, declaration {e.declaration.id}: {len(todo)} of {len(e.specs())} runs to "
              f"record into {args.runs}", flush=True)
        outcomes = launch.launch(todo, Path(args.runs), args.jobs, args.timeout, declared=declared)
        failed = [o for o in outcomes if o.status == "failed"]
        for o in failed:
            print(f"FAILED {o.spec.id}: {o.error}", file=sys.stderr)
        if failed:
            return 1
    history = []
    for version in HISTORY[args.seed]:
        # a reconstructed version's runs are the bundle's: a run recorded since under the same id (a kernel
        # variant whose name now builds another dentry, say) is not one of them
        runs, _ = kept_runs(version.specs(), [REFERENCE_RUNS] if version.declaration.reconstructed else dirs)
        history.append(seed_result(version, metrics_for(runs, None, check_model=False) if runs else []))
    res = history[-1]
    if not res.complete:
        print(wrap(f"seed {e.seed}: {len(res.missing)} runs of declaration {e.declaration.id} are not recorded (first: "
                   f"{res.missing[0]}); `cohtb seeds --seed {e.seed} --launch` records them with gem5"))
        res = latest_complete(history[:-1])
        if res is None:
            return 2
        print(wrap(f"Under the earlier declaration {res.declaration.id}, whose runs are kept:"))
    print(point_table(res).text())
    for row in verdict_rows(res)[1 if res.points else 0:]:
        print(wrap(f"{row[0]}: {row[-1]}"))
    return 0


def cmd_results(args: argparse.Namespace) -> int:
    from cohtb.analysis.pipeline import metrics_for
    from cohtb.atomic import write_text_atomic
    from cohtb.experiments.seeds import HISTORY
    from cohtb.report import results, seed_plots
    from cohtb.toolchain import ROOT

    from cohtb.mainjob import REFERENCE_RUNS

    specs = list(dict.fromkeys(s for versions in HISTORY.values() for e in versions
                               for s in [*e.specs(), *e.sensitivity]))
    runs, missing = kept_runs(specs, [REFERENCE_RUNS])   # the page is of the bundled runs, the same on every checkout
    if missing:
        print(f"cohtb results: {len(missing)} of {len(specs)} runs are not recorded; their declarations say so on "
              "the page", file=sys.stderr)
    ms = metrics_for(runs, None, check_model=False)
    history = results.seed_history(ms)
    drawn = [r for r in (results.shown(v) for v in history.values()) if r is not None]
    page = results.page(history, seed_plots.figure_names(drawn), ms, seed_plots.history_figure_names(history))
    doc, readme, fs_doc = ROOT / "docs" / "results.md", ROOT / "README.md", ROOT / "docs" / "fs.md"
    blocks = ((readme, results.readme_block(history)), (fs_doc, results.fs_block(history, ms)))
    if args.check:
        stale = [str(p) for p, ok in ((doc, doc.exists() and doc.read_text() == page),
                                      *((p, results.write_block(p, b, check=True)) for p, b in blocks)) if not ok]
        if stale:
            print(f"not what the kept runs give: {', '.join(stale)} (run `cohtb results`)", file=sys.stderr)
            return 1
        print(f"{doc} and the results blocks of README.md and docs/fs.md match the kept runs")
        return 0
    with writing(ROOT / "docs" / "results"):   # they write their files by their own means
        seed_plots.write_all(drawn, ROOT / "docs" / "results", history)
    write_text_atomic(doc, page)
    for path, block in blocks:
        with writing(path):
            results.write_block(path, block, check=False)
    print(f"{doc}: written from {len(runs)} runs; figures in {ROOT / 'docs' / 'results'}; the results blocks of "
          f"{readme.name} and {fs_doc.relative_to(ROOT)} updated")
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
    if args.target == "ecp5":
        from cohtb.atomic import write_json_atomic
        from cohtb.monitor import ecp5

        out = Path(args.json) if args.json else None
        if out:   # now, not after the first place and route
            writable_dir(out.parent, out)
        done: list = []

        def keep(report) -> None:   # each seed's report is written as it comes: a later failure loses none
            done.append(report)
            if out:
                write_json_atomic(out, {"reports": [r.to_json() for r in done]})

        ecp5.place_and_route(args.variant, args.freq, tuple(dict.fromkeys(args.seed or [1])), args.device, args.package,
                             Path(args.keep) if args.keep else None, progress=lambda s: print(s, flush=True),
                             on_report=keep, speed=args.speed)
        missed = [r for r in done if not r.meets]
        if missed:
            print(f"cohtb synth: the {args.variant} monitor misses {args.freq:g} MHz (seed{'s' if len(missed) > 1 else ''} "
                  f"{', '.join(str(r.seed) for r in missed)}); critical path of seed {missed[0].seed}: "
                  f"{'; '.join(missed[0].critical_path)}")
            return 1
        return 0
    from cohtb.monitor import synth

    print(f"synthesizing the {args.variant} monitor with Yosys (Xilinx 7-series mapping, an estimate)...", flush=True)
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


def specs_from_args(args: argparse.Namespace):
    from cohtb.sim.plans import PLANS, RunSpec

    if args.fs:
        from cohtb.fs.launch import fs_specs

        if not args.kernel:
            raise CohtbError("--fs needs --kernel VARIANT[,VARIANT...] (`cohtb kernel list` names them)")
        if args.ops:
            raise CohtbError("--fs runs are timed: give --warmup-us/--window-us, not --ops")
        seeds = list(range(1, args.repetitions + 1)) if args.repetitions else [args.seed]
        return fs_specs(args.kernel.split(","), args.sockets, args.cores_per_socket,
                        FS_WARMUP_US if args.warmup_us is None else args.warmup_us, args.window_us, args.interval_us,
                        seeds, args.op, args.skew_ns, offset_list(args.dentry_line_offset))
    if args.workload:
        warmup = SE_WARMUP_US if args.warmup_us is None else args.warmup_us
        timed = {} if args.ops else {"warmup_us": warmup, "window_us": args.window_us,
                                     "interval_us": args.interval_us, "seed": args.seed}
        return [RunSpec(args.workload, p, l, args.sockets, args.cores_per_socket, args.ops, args.intruder_period_us,
                        cpu=args.cpu, **timed)
                for p in args.policy.split(",") for l in args.layout.split(",")]
    if args.matrix not in PLANS:
        raise CohtbError(f"unknown run plan '{args.matrix}' (known: {', '.join(PLANS)})")
    return PLANS[args.matrix]()


def cmd_launch(args: argparse.Namespace) -> int:
    from cohtb.sim import launch

    specs = specs_from_args(args)
    writable_dir(args.runs)   # now, not when the first run is done
    print(f"cohtb launch: {len(specs)} runs into {args.runs}", flush=True)
    live = launch.Live(keep_trace=args.keep_trace) if args.live else None
    if args.keep_trace and not args.live:
        raise CohtbError("--keep-trace goes with --live (a run without it keeps its trace anyway)")
    outcomes = launch.launch(specs, Path(args.runs), args.jobs, args.timeout, live,
                             declared=declarations.records_for(specs))
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
    if counts["events"] == 0:
        print(f"cohtb ingest: warning: {args.trace}: no coherence events in {counts['lines']:,} lines "
              "(was ProtocolTrace on, and the region of interest reached?)", file=sys.stderr)
    return 0


def cmd_bundle(args: argparse.Namespace) -> int:
    from cohtb.sim.bundle import bundle
    from cohtb.sim.runs import discover

    runs = discover([Path(r) for r in args.runs])
    size = bundle(runs, Path(args.into))
    print(f"bundled {len(runs)} runs into {args.into}: {size / 1e6:.2f} MB")
    return 0


EXIT_CODES = """exit status: 0 done; 1 a check failed (RTL vs model, a soak mismatch, a failed gem5 run);
2 a usage or input error, or an output that cannot be written (one line on stderr naming the file and the field or
line); an output never replaces files cohtb did not write"""


class _HelpWithDefaults(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default where it has one and its help does not already say it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default in (None, False, [], argparse.SUPPRESS) or "default" in (action.help or ""):
            return action.help or ""
        return super()._get_help_string(action)


def cmd_kernel(args: argparse.Namespace) -> int:
    from cohtb.fs import initramfs, kernel

    if args.action == "list":
        for v in kernel.VARIANTS.values():
            print(f"{v.name:12s} d_lockref at {v.d_lockref_offset:3d}, dentry {v.dentry_size} bytes: {v.about}")
        return 0
    names = args.variant or list(kernel.VARIANTS)
    for n in names:
        kernel.variant(n)   # an unknown name fails before anything is built
    ramfs = initramfs.build()
    for n in names:
        built = kernel.build(n, ramfs.list_path, ramfs.digest, args.jobs)
        d = built.layout["dentry"]
        lockref = next(f for f in d["fields"] if f["name"] == "d_lockref")
        print(f"{n}: {built.vmlinux} (struct dentry {d['size']} bytes, d_lockref at {lockref['offset']})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    fmt = _HelpWithDefaults
    ap = argparse.ArgumentParser(prog="cohtb", description="Cache-coherence testbed: lockref ping-pong, counted.",
                                 epilog=EXIT_CODES, formatter_class=fmt)
    ap.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    sub = ap.add_subparsers(dest="verb", required=True, metavar="VERB")

    def verb(name: str, help: str, func) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=help, epilog=EXIT_CODES, formatter_class=fmt)
        p.set_defaults(func=func)
        return p

    runs_help = ("run directories, directories of runs, or run ids (looked up in results/runs/ and reference-runs/)")

    run = verb("run", "the main job: gem5 runs (or the bundled reference runs), replay, report, compare", cmd_run)
    run.add_argument("--out", default="results", help="where runs, counters and the report go (its report is replaced)")
    run.add_argument("--matrix", default="default", help="the run plan to launch when gem5 is found")
    run.add_argument("--jobs", type=int, default=None, help="parallel gem5 runs (default: the machine's cores)")
    run.add_argument("--timeout", type=float, default=3600, help="seconds per gem5 run")

    rp = verb("replay", "stream runs' (or bare event files') events through the Verilated monitor, sized for them if "
              "the default is too small, and check them against gem5's evidence", cmd_replay)
    rp.add_argument("runs", nargs="+", help=runs_help + ", or bare event files")
    rp.add_argument("--check", action="store_true", help="also run the bit-exact model and fail on any difference")
    rp.add_argument("--out", help="write RUN_ID/counters.json here (default: the analysis cache, never the run; a bare "
                    "event file's counters are written only here)")
    rp.add_argument("--lines", type=int, default=10, help="print the N lines with the most transfers and dirty reads (0: none)")

    rep = verb("report", "Markdown, JSON, CSV, PNG plots and one HTML page for runs or bare event files", cmd_report)
    rep.add_argument("runs", nargs="+", help=runs_help + ", or bare event files")
    rep.add_argument("--out", default="results/report", help="the report's directory (an existing report is kept "
                     "unless --force)")
    rep.add_argument("--force", action="store_true", help="replace an existing report in --out, or write into a "
                     "directory holding other files (cohtb replaces only the files it wrote)")
    rep.add_argument("--analysis", help="where RUN_ID/counters.json are kept (default: the analysis cache, "
                     "$COHTB_CACHE or ~/.cache/cohtb)")
    rep.add_argument("--check", action="store_true", help="check the RTL against the model when replaying")
    rep.add_argument("--no-compare", dest="compare", action="store_false", help="leave out the standard comparisons")

    cp = verb("compare", "base vs new: %% change tables and an attribution to lines and fields", cmd_compare)
    cp.add_argument("base", help="the base run (or, with --by, a directory of runs)")
    cp.add_argument("new", nargs="*", help="runs to compare against the base")
    cp.add_argument("--by", dest="key", help="KEY=BASE,NEW: pair runs differing only in KEY (e.g. layout=shared,split)")
    cp.add_argument("--analysis", help="where RUN_ID/counters.json are kept (default: the analysis cache)")
    cp.add_argument("--allow-mismatch", action="store_true", help="compare runs of different machines or workloads")

    la = verb("launch", "run gem5 simulations (needs gem5: GEM5 or gem5.opt on PATH)", cmd_launch)
    la.add_argument("--matrix", default="default", help="named run plan: default (every seed's SE experiment), seed000 .. "
                    "seed004 (one), seed004-fs (the real kernel), lockref-ops60 (the earlier fixed-work lockref matrix) or smoke (2x2)")
    la.add_argument("--workload", help="instead of a plan: one workload, with the options below")
    la.add_argument("--fs", action="store_true", help="full-system runs of the guest kernels named by --kernel "
                    "(stat(2) or open/close of one tmpfs file; kernels and boot checkpoints are built and cached first)")
    la.add_argument("--kernel", help="with --fs: comma-separated kernel variants (`cohtb kernel list`)")
    la.add_argument("--op", choices=["stat", "open_close"], default="stat", help="with --fs: the guest benchmark's operation")
    la.add_argument("--dentry-line-offset", default="0",
                    help="with --fs: comma-separated byte offsets (0, 8 .. 56) of the file's dentry in its cache line, or "
                         "any: where the allocator puts it (default 0: at a line start, as pahole draws it; a 184-byte "
                         "dentry's fields fall on other lines at each offset, a 192-byte one always starts a line)")
    la.add_argument("--repetitions", type=int, default=0, help="with --fs: seeds 1..N (perturbed starts); 0: --seed only")
    la.add_argument("--skew-ns", type=int, default=0, help="largest start skew with a seed (0: the workload's default)")
    la.add_argument("--policy", default="locked", help="comma-separated policies (with --workload)")
    la.add_argument("--layout", default="shared", help="comma-separated layouts (with --workload)")
    la.add_argument("--sockets", type=int, default=2, help="sockets (a power of two; with --workload)")
    la.add_argument("--cores-per-socket", type=int, default=2, help="cores in each socket (with --workload)")
    la.add_argument("--ops", type=int, default=0, help="fixed work per thread (with --workload); 0: the timed window below")
    la.add_argument("--warmup-us", type=int, default=None, help="simulated µs every thread runs before the window "
                    f"(default {SE_WARMUP_US}; {FS_WARMUP_US} with --fs: a restored guest starts with cold caches)")
    la.add_argument("--window-us", type=int, default=200, help="the measured window, simulated µs")
    la.add_argument("--interval-us", type=int, default=10, help="ops are counted per interval of this length")
    la.add_argument("--seed", type=int, default=0, help="start perturbation (per-thread skew); 0: none")
    la.add_argument("--intruder-period-us", type=int, default=0, help="an intruder takes the lock every N µs; 0: none")
    la.add_argument("--cpu", choices=["timing", "o3"], default="timing", help="gem5 CPU model")
    la.add_argument("--runs", default="results/runs", help="where run directories go")
    la.add_argument("--jobs", type=int, default=None, help="parallel gem5 runs (default: the machine's cores)")
    la.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    la.add_argument("--live", action="store_true",
                    help="count while gem5 runs: its trace goes through a pipe into the ingest and the Verilated "
                         "monitor, which takes a snapshot every --interval-us of simulated time (live.json); no "
                         "trace file is kept")
    la.add_argument("--keep-trace", action="store_true", help="with --live: keep gem5's trace too (trace.gz)")

    ig = verb("ingest", "convert a gem5 ProtocolTrace (plain, .gz or - for a pipe) to a cohtb event file", cmd_ingest)
    ig.add_argument("trace", help="the trace: a file (plain or gzip) or - for stdin")
    ig.add_argument("out", help="the event file to write (written whole or not at all)")
    ig.add_argument("--socket-map", help="core->socket map: a file of '<core> <socket>' lines, or sockets in core "
                    "order as a list (0,0,1,1); a core is an L1 controller (the trace's version column)")
    ig.add_argument("--cores-per-socket", type=int, help="instead of a map: core c is in socket c // K, for as many "
                    "cores as the trace shows")
    ig.add_argument("--pagemap", help="also write the TLB page mappings found in the trace here")

    bu = verb("bundle", "copy finished runs (manifest + compressed events) into reference-runs/", cmd_bundle)
    bu.add_argument("runs", nargs="+", help=runs_help)
    bu.add_argument("--into", default="reference-runs", help="the directory of bundled runs")

    na = verb("native", "run the workload matrix on this machine and print ops/s per policy and layout", cmd_native)
    na.add_argument("workload", nargs="*", help="workloads to run (default: all)")
    na.add_argument("--threads", type=int, default=2, help="threads per run")
    na.add_argument("--ops", type=int, default=None, help="operations per thread (default: each workload's own)")
    na.add_argument("--repeat", type=int, default=3, help="runs per cell; the table shows the best")
    na.add_argument("--out", default="results/native.json", help="where the rows are written ('' for nowhere)")

    so = verb("soak", "a long random stream (workload contention patterns mixed in) through the RTL and the bit-exact "
              "model, every counter compared after every chunk", cmd_soak)
    so.add_argument("--events", type=int, default=10_000_000, help="events in all")
    so.add_argument("--seed", type=int, default=1, help="seed of the stream (the same seed, the same stream)")
    so.add_argument("--variant", default="default", help="monitor configuration (rtl/variants.txt)")
    so.add_argument("--chunk", type=int, default=200_000, help="events between comparisons")

    se = verb("seeds", "the experiment of each seed: list them, record one with gem5 (--launch), print published vs "
              "simulated", cmd_seeds)
    se.add_argument("--seed", help="the seed: 000, 001, 002, 003, 004, 004-fs (the real kernel) or all (each in turn); "
                    "without: list the experiments")
    se.add_argument("--launch", action="store_true", help="first record the runs that are missing (needs gem5)")
    se.add_argument("--runs", default="results/runs", help="where --launch puts run directories")
    se.add_argument("--jobs", type=int, default=None, help="parallel gem5 runs (default: the machine's cores)")
    se.add_argument("--timeout", type=float, default=3600, help="seconds per run")

    rs = verb("results", "write docs/results.md (and its figures) and the README's results block from the bundled runs",
              cmd_results)
    rs.add_argument("--check", action="store_true", help="only say whether they are current (exit 1 if not)")

    ke = verb("kernel", "the full-system guest kernels: list the variants, or build them (cached; minutes each)",
              cmd_kernel)
    ke.add_argument("action", choices=["list", "build"], help="list the variants, or build them")
    ke.add_argument("--variant", action="append", help="a variant to build (repeatable; default: every variant)")
    ke.add_argument("--jobs", type=int, default=None, help="make -j (default: the machine's cores)")

    sy = verb("synth", "synthesize the monitor: its size on Xilinx 7-series (Yosys), or a real place and route "
                       "on a Lattice ECP5 with its Fmax (Yosys + nextpnr-ecp5)", cmd_synth)
    sy.add_argument("--variant", default="default", help="monitor configuration (rtl/variants.txt)")
    sy.add_argument("--target", choices=["xc7", "ecp5"], default="xc7",
                    help="xc7: Yosys' Xilinx mapping, cells only; ecp5: synth_ecp5, place and route, timing")
    sy.add_argument("--freq", type=float, default=125.0, help="ecp5: the clock constraint, MHz (default 125)")
    sy.add_argument("--seed", type=int, action="append", help="ecp5: nextpnr seed (repeatable; default 1)")
    sy.add_argument("--device", default="85k", help="ecp5: 25k, 45k or 85k (default 85k: LFE5U-85F)")
    sy.add_argument("--package", default="CABGA381", help="ecp5: the package (default CABGA381)")
    sy.add_argument("--speed", type=int, default=SPEED_GRADES[0], choices=SPEED_GRADES,
                    help="ecp5: the speed grade, 6 (default, the slowest), 7 or 8")
    sy.add_argument("--keep", help="ecp5: keep the netlist, logs and nextpnr reports in this directory")
    sy.add_argument("--json", help="ecp5: write the reports here as JSON")
    return ap


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cohtb")
    except PackageNotFoundError:
        return "(not installed)"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except CohtbError as e:
        print(f"cohtb {args.verb}: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader went away (`cohtb compare ... | head`): not an error; stop writing quietly.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
