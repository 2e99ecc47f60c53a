"""The cohtb command line: a registry of verbs, each a module of cohtb/commands/ imported only when given."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from importlib.metadata import PackageNotFoundError, version

from cohtb.errors import CohtbError

# verb -> one line of what it does (its module says the rest: cohtb/commands/<verb>.py)
VERBS = {
    "run": "the main job: gem5 runs (or the bundled reference runs), replay, report, compare",
    "replay": "stream runs' (or bare event files') events through the Verilated monitor, sized for them if the "
              "default is too small, and check them against gem5's evidence",
    "report": "Markdown, JSON, CSV, PNG plots and one HTML page for runs or bare event files",
    "compare": "base vs new: %% change tables and an attribution to lines and fields",
    "launch": "run gem5 simulations (needs gem5: GEM5 or gem5.opt on PATH)",
    "ingest": "convert a gem5 ProtocolTrace (plain, .gz or - for a pipe) to a cohtb event file",
    "bundle": "copy finished runs (manifest + compressed events) into reference-runs/",
    "native": "run the workload matrix on this machine and print ops/s per policy and layout",
    "profile": "where each run's simulated time went: its functions' share of the window, as perf report shows it",
    "advise": "layout advice, its first step: the fields on a run's hottest lines classified by their misses, and "
              "the false-sharing pairs",
    "latency": "the calibration table: what one operation on a line held elsewhere took in cclat runs, beside a "
               "published part's figures",
    "soak": "a long random stream (workload contention patterns mixed in) through the RTL and the bit-exact model, "
            "every counter compared after every chunk",
    "seeds": "the experiment of each seed: list them, record one with gem5 (--launch), print published vs simulated",
    "results": "write docs/results.md (and its figures) and the README's results block from the bundled runs",
    "kernel": "the full-system guest kernels: list the variants, or build them (cached; minutes each)",
    "synth": "synthesize the monitor: its size on Xilinx 7-series (Yosys), or a real place and route on a Lattice "
             "ECP5 with its Fmax (Yosys + nextpnr-ecp5)",
}

EXIT_CODES = """exit status: 0 done; 1 a check failed (RTL vs model, a soak mismatch, a failed gem5 run);
2 a usage or input error, or an output that cannot be written (one line on stderr naming the file and the field or
line); an output never replaces files cohtb did not write"""


class _HelpWithDefaults(argparse.ArgumentDefaultsHelpFormatter):
    """Shows an option's default where it has one and its help does not already say it."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if (action.default in (None, False, [], argparse.SUPPRESS) or "default" in (action.help or "")
                or action.nargs == 0):   # a flag: its stored default says nothing a user sets

            return action.help or ""
        return super()._get_help_string(action)


def command(verb: str):
    """The verb's module: add_arguments(parser), and run(args) -> exit status."""
    return importlib.import_module(f"cohtb.commands.{verb}")


def build_parser(verb: str | None = None) -> argparse.ArgumentParser:
    """Every verb is listed; only `verb`'s module is imported and its options added."""
    ap = argparse.ArgumentParser(prog="cohtb", description="Cache-coherence testbed: lockref ping-pong, counted.",
                                 epilog=EXIT_CODES, formatter_class=_HelpWithDefaults)
    ap.add_argument("--version", action="version", version=f"%(prog)s {package_version()}")
    sub = ap.add_subparsers(dest="verb", required=True, metavar="VERB")
    for name, summary in VERBS.items():
        p = sub.add_parser(name, help=summary, description=summary.replace("%%", "%"), epilog=EXIT_CODES, formatter_class=_HelpWithDefaults)
        if name == verb:
            module = command(name)
            module.add_arguments(p)
            p.set_defaults(func=module.run)
    return ap


def package_version() -> str:
    try:
        return version("cohtb")
    except PackageNotFoundError:
        return "(not installed)"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    verb = next((a for a in argv if not a.startswith("-")), None)   # the first word: only options come before it
    args = build_parser(verb).parse_args(argv)
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
