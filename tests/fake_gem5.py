#!/usr/bin/env python3
"""A stand-in for gem5.opt in launcher tests (never used for results): takes gem5's command line as
cohtb launch builds it, runs the workload natively, and writes what gem5 + cohtb_se.py would: simout,
roi.json, the workload's output and a small gzip trace with a TLB mapping and a few transitions.
FAKE_GEM5_FAIL_POLICY=<policy> makes runs of that policy fail; FAKE_GEM5_HANG_POLICY hangs them."""

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cohtb.contract import contiguous_socket_map  # noqa: E402  (the map cohtb's gem5 system builds)


def main() -> int:
    args = sys.argv[1:]
    outdir = next(a.split("=", 1)[1] for a in args if a.startswith("--outdir="))
    sep = args.index("--")
    opts, wargs = args[:sep], args[sep + 1:]
    get = lambda k: opts[opts.index(k) + 1]
    out, binary, sockets, cps = get("--out"), get("--binary"), int(get("--sockets")), int(get("--cores-per-socket"))
    policy = wargs[wargs.index("--policy") + 1]
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "simout.txt"), "w") as f:
        f.write("gem5 Simulator System.\ngem5 version 24.0.0.1 (fake, for tests)\n")
    if os.environ.get("FAKE_GEM5_FAIL_POLICY") == policy:
        with open(os.path.join(outdir, "simerr.txt"), "w") as f:
            f.write("fatal: fake failure for the test\n")
        return 1
    if os.environ.get("FAKE_GEM5_HANG_POLICY") == policy:
        time.sleep(600)
    native_args = [a for a in wargs if a != "--m5"]
    res = subprocess.run([binary, *native_args], capture_output=True, text=True)
    with open(os.path.join(out, "workload.stdout"), "w") as f:
        f.write(res.stdout)
    doc = json.loads(res.stdout)
    cores = sockets * cps
    lines = []
    for obj in doc["layout_map"]["objects"][:1]:
        page = obj["address"] & ~4095
        lines.append(f"   1000: board.processor.cores0.core.mmu.dtb: Mapping {page:#x} to {page + 0x100000:#x}\n")
        line = (obj["fields"][-1]["address"] + 0x100000) & ~63
        tick = 2000
        for i in range(40):
            core = i % cores
            tick += 500
            lines.append(f"{tick:15d} {core:3d} {'L1Cache':>10s}{'Store':>20s} {'I':>6s}>{'IM':<6s} [{line:#x}, line {line:#x}] \n")
            prev = (i - 1) % cores
            if i:
                lines.append(f"{tick + 100:15d} {prev:3d} {'L1Cache':>10s}{'Fwd_GETX':>20s} {'M':>6s}>{'I':<6s} [{line:#x}, line {line:#x}] \n")
    with gzip.open(os.path.join(outdir, "trace.gz"), "wt") as f:
        f.writelines(lines)
    roi = {"begin_tick": 2000, "end_tick": 30000, "roi_seconds": 28000 / 1e12, "exit_cause": "exiting with last active thread context",
           "final_tick": 40000, "sockets": sockets, "cores_per_socket": cps, "cores": cores, "cpu": "timing", "clock": "3GHz",
           "params": {"local_latency": 20, "socket_latency": 300}, "workload_args": wargs,
           "controllers": {"l1": [{"core": c, "socket": s} for c, s in enumerate(contiguous_socket_map(cores, sockets))]}}
    with open(os.path.join(out, "roi.json"), "w") as f:
        json.dump(roi, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
