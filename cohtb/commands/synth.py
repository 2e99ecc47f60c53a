"""`cohtb synth`: the monitor's size on Xilinx 7-series (Yosys), or a place and route on a Lattice ECP5."""

from __future__ import annotations

import argparse
from pathlib import Path

from cohtb.fpga import ecp5, synth
from cohtb.toolchain import monitor_dir



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant", default="default", help="monitor configuration (rtl/variants.txt)")
    p.add_argument("--target", choices=["xc7", "ecp5"], default="xc7",
                   help="xc7: Yosys' Xilinx mapping, cells only; ecp5: synth_ecp5, place and route, timing")
    p.add_argument("--freq", type=float, default=125.0, help="ecp5: the clock constraint, MHz (default 125)")
    p.add_argument("--seed", type=int, action="append", help="ecp5: nextpnr seed (repeatable; default 1)")
    p.add_argument("--device", default="85k", help="ecp5: 25k, 45k or 85k (default 85k: LFE5U-85F)")
    p.add_argument("--package", default="CABGA381", help="ecp5: the package (default CABGA381)")
    p.add_argument("--speed", type=int, default=ecp5.SPEED_GRADES[0], choices=ecp5.SPEED_GRADES,
                   help="ecp5: the speed grade, 6 (default, the slowest), 7 or 8")
    p.add_argument("--keep", help="ecp5: keep the netlist, logs and nextpnr reports in this directory")
    p.add_argument("--json", help="ecp5: write the reports here as JSON")


def run(args: argparse.Namespace) -> int:
    monitor_dir(args.variant)   # an unknown variant is refused before anything starts
    if args.target == "xc7":
        print(f"synthesizing the {args.variant} monitor with Yosys (Xilinx 7-series mapping, an estimate)...", flush=True)
        print(synth.synthesize(args.variant).summary())
        return 0
    done = ecp5.place_and_route(args.variant, args.freq, tuple(dict.fromkeys(args.seed or [1])), args.device,
                                args.package, Path(args.keep) if args.keep else None,
                                progress=lambda s: print(s, flush=True), speed=args.speed,
                                json_out=Path(args.json) if args.json else None)
    missed = [r for r in done if not r.meets]
    if missed:
        print(f"cohtb synth: the {args.variant} monitor misses {args.freq:g} MHz (seed{'s' if len(missed) > 1 else ''} "
              f"{', '.join(str(r.seed) for r in missed)}); critical path of seed {missed[0].seed}: "
              f"{'; '.join(missed[0].critical_path)}")
        return 1
    return 0
