#!/usr/bin/env python3
"""A stand-in for gem5.opt in launcher tests (never used for results): takes gem5's command line as
cohtb launch builds it, runs the workload natively, and writes what gem5 + cohtb_se.py would: simout,
roi.json, the workload's output and a small gzip trace with a TLB mapping and a few transitions.
FAKE_GEM5_FAIL_POLICY=<policy> makes runs of that policy fail; FAKE_GEM5_HANG_POLICY hangs them;
FAKE_GEM5_SLOW_SECONDS makes every SE run take that much longer.
With cohtb_fs.py's --mode it stands in for a full-system boot (a checkpoint directory) or a restored run
(the guest script's benchmark run natively, the kernel's object lines and the result written back); FAKE_GEM5_NO_OBJECTS=1 leaves the object lines out (a kernel without the project's patch); FAKE_GEM5_NO_OPS=1
reports a window in which no operation completed. With --profile it writes the window's profile as a gem5 built
with the project's pc-profile patch does (and this text has that build's marker, cohtb/run/gem5.py INSTRUMENTS:
"PcProfile: cannot write")."""

import gzip
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cohtb.contract import contiguous_socket_map  # noqa: E402  (the map cohtb's gem5 system builds)
from cohtb.run.machines import config_module  # noqa: E402  (the configs' standard-library modules, as gem5 runs them)

topology, placement = config_module("topology"), config_module("placement")


def trace_lines(line: int, cores: int) -> list[str]:
    """A line passed from core to core: a store miss, the previous owner's forward and the store's completion, 40 times."""
    lines, tick = [], 2000
    step = int(os.environ.get("FAKE_GEM5_TICK_STEP", 500))   # a larger one spreads the trace over several µs
    for i in range(40):
        core = i % cores
        tick += step
        lines.append(f"{tick:15d} {core:3d} {'L1Cache':>10s}{'Store':>20s} {'I':>6s}>{'IM':<6s} [{line:#x}, line {line:#x}] \n")
        prev = (i - 1) % cores
        if i:
            lines.append(f"{tick + 100:15d} {prev:3d} {'L1Cache':>10s}{'Fwd_GETX':>20s} {'M':>6s}>{'I':<6s} [{line:#x}, line {line:#x}] \n")
        # the store completes once the data and acks are in: the WRITE the ingest takes (docs/event-format.md)
        lines.append(f"{tick + 200:15d} {core:3d} {'L1Cache':>10s}{'Data_all_Acks':>20s} {'IM':>6s}>{'M':<6s} [{line:#x}, line {line:#x}] \n")
    return lines


def write_trace(outdir: str, text: list[str]) -> None:
    """Into gem5's --debug-file: gzip when its name ends in .gz (gem5's rule), else plain -- a live run's pipe."""
    name = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("--debug-file=")), None)
    if name is None or "--no-trace" in sys.argv:   # an untraced run (benchmarks/live_overhead.py)
        return
    path = os.path.join(outdir, name)
    if os.environ.get("FAKE_GEM5_CRASH_MID_TRACE"):   # half the trace, then a crash
        with open(path, "w") as f:
            f.writelines(text[:len(text) // 2])
            f.write("  12345 0 L1Cache")   # cut mid-line
        sys.exit(134)
    if os.environ.get("FAKE_GEM5_BAD_LINE"):   # a line the ingest refuses; then, like gem5 (which ignores
        try:                                    # SIGPIPE), simulate on as if nothing had happened
            with open(path, "w") as f:
                f.write("this is not a ProtocolTrace line\n")
                f.flush()
                for _ in range(1200):   # two minutes: far longer than a run that stops it may take
                    time.sleep(0.1)
                    f.writelines(text)
                    f.flush()
        except BrokenPipeError:
            time.sleep(60)
        sys.exit(0)
    with (gzip.open(path, "wt") if name.endswith(".gz") else open(path, "w")) as f:
        f.writelines(text)


def entry(binary: Path) -> int:
    """The ELF's entry point (e_entry): an address in its code, as a profile of it would have."""
    return int.from_bytes(binary.read_bytes()[24:32], "little")


def machine(opts: list[str]) -> dict:
    get = lambda k: opts[opts.index(k) + 1]
    sockets, cps = int(get("--sockets")), int(get("--cores-per-socket"))
    cores = sockets * cps
    wiring = topology.load(get("--topology") if "--topology" in opts else f"complete-{sockets}s")
    home_socket = int(get("--home-socket")) if "--home-socket" in opts else 0
    return {"sockets": sockets, "cores_per_socket": cps, "cores": cores, "cpu": "timing", "clock": "3GHz",
            "topology": wiring.record(), "machine": get("--machine") if "--machine" in opts else "flat",
            "params": {"local_latency": 20, "socket_latency": 300}, "protocol": "MESI_Two_Level",
            "controllers": {"l1": [{"core": c, "socket": s} for c, s in enumerate(contiguous_socket_map(cores, sockets))],
                            "directory": [{"controller": f"directory_controllers{b}",
                                           "socket": placement.socket_of_home(b, home_socket, sockets)}
                                          for b in range(sockets)]}}


def write_profile(opts: list[str], out: str, cores: int, begin: int, end: int, pcs: list[int]) -> dict:
    """pc-profile.tsv as PcProfile dumps it when the config asks for one: each core's window split between the
    addresses (a third each, the rest to the last) and a little unretired time; the roi.json entry that names it."""
    if "--profile" not in opts:
        return {}
    lines = ["# cohtb pc-profile 1", f"# window {begin} {end}", "# core\tpc\tinstructions\tticks"]
    for core in range(cores):
        left = end - begin - 7
        for i, pc in enumerate(pcs):
            ticks = left if i == len(pcs) - 1 else (end - begin) // 3
            left -= ticks
            lines.append(f"{core}\t{pc:#x}\t{10 + i}\t{ticks}")
        lines += [f"{core}\tasleep\t0\t0", f"{core}\tunretired\t0\t7"]
    Path(out, "pc-profile.tsv").write_text("\n".join(lines) + "\n")
    # and a slow retirement on every core each 250 ticks over the fake trace's ticks (trace_lines: from 2000, the
    # same in both modes), so its stores find one after them
    slow = [f"{t}\t{core}\t{pcs[0]:#x}\t20000\t0" for t in range(2000, 2000 + 41 * 2000, 250) for core in range(cores)]
    Path(out, "pc-slow.tsv").write_text("\n".join(["# cohtb pc-slow 1", f"# window {begin} {end} slow 15000",
                                                   "# tick\tcore\tpc\tticks\tdata", *slow]) + "\n")
    return {"profile": "pc-profile.tsv", "profile_slow": "pc-slow.tsv"}


FAKE_KERNEL_PC = 0xffffffff81000010   # tests/test_fs.py's fake vmlinux has a function there
GUEST_PAGES_AT = 0x40000000   # where the fake guest's pages are, physically, from their virtual addresses


def full_system(opts: list[str], outdir: str) -> int:
    get = lambda k: opts[opts.index(k) + 1]
    out, sockets, cps = get("--out"), int(get("--sockets")), int(get("--cores-per-socket"))
    os.makedirs(out, exist_ok=True)
    roi = {"mode": get("--mode"), **machine(opts)}
    if get("--mode") == "boot":
        ckpt = Path(get("--checkpoint"))
        ckpt.mkdir(parents=True)
        (ckpt / "m5.cpt").write_text("[fake checkpoint]\n")
        roi.update(exit_cause="checkpoint", checkpoint_tick=60_000_000_000, final_tick=60_000_000_000)
    else:
        with tarfile.open(get("--payload")) as tar:   # what /init would unpack
            # tarfile's extraction filters came with 3.11.4 (3.12 warns without one); this runs on any python3
            tar.extractall(Path(out) / "guest", **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
        script = next(l for l in (Path(out) / "guest" / "run" / "run.sh").read_text().splitlines()
                      if l.startswith("/run/"))
        bench = script.split(" 2> ")[0].split()
        bench_path = Path(out) / "guest" / bench[0].lstrip("/")
        dentry, parent, inode = 0x743000, 0x357900, 0x61bab0
        res = subprocess.run([str(Path(out) / "guest" / bench[0].lstrip("/")),
                              *[a for a in bench[1:] if a not in ("--m5", "--guest")]], capture_output=True, text=True,
                             check=True)
        doc = json.loads(res.stdout)
        if bench[0] == "/run/stat_file":
            name = os.path.basename(doc["path"])
            doc["kernel_objects"] = ["cohtb-object cohtb-m5 dentry file 37f7e8 184"]   # /bin/cohtb-m5's, at boot
            doc["kernel_objects"] += [] if os.environ.get("FAKE_GEM5_NO_OBJECTS") else [
                f"cohtb-object {name} dentry file {dentry:x} 192", f"cohtb-object {name} dentry parent {parent:x} 192",
                f"cohtb-object {name} inode file {inode:x} 552"]
            hot = dentry + 128   # the file's d_lockref line
        else:   # a workload with its own layout map: the guest's page table moves every page by GUEST_PAGES_AT
            pages = {f["address"] & ~4095 for o in doc["layout_map"]["objects"] for f in o["fields"]}
            pages |= {o["address"] & ~4095 for o in doc["layout_map"]["objects"]}
            doc["guest_pages"] = {str(v): v + GUEST_PAGES_AT for v in pages}
            hot = doc["layout_map"]["objects"][0]["fields"][0]["address"] + GUEST_PAGES_AT
        if os.environ.get("FAKE_GEM5_NO_OPS"):   # a window in which no operation completed
            doc["ops"] = 0
        (Path(outdir) / "workload.json").write_text(json.dumps(doc))   # what the workload's --guest writes back
        (Path(outdir) / "board.pc.com_1.device").write_text("cohtb-guest: running the host's payload\n")
        write_trace(outdir, trace_lines(hot, sockets * cps))
        roi.update(begin_tick=62_000_002_000, end_tick=62_000_030_000, roi_seconds=28000 / 1e12,
                   exit_cause="m5_exit instruction encountered", final_tick=62_000_040_000)
        if os.environ.get("FAKE_GEM5_NO_SWITCH"):   # what cohtb_fs.py says of a benchmark that never switched
            roi["error"] = "the benchmark never asked for switchcpu: the whole run was atomic"
        else:
            roi["switch_tick"] = 61_000_000_000
        roi.update(write_profile(opts, out, sockets * cps, roi["begin_tick"], roi["end_tick"], [FAKE_KERNEL_PC, entry(bench_path)]))
    with open(os.path.join(out, "roi.json"), "w") as f:
        json.dump(roi, f)
    return 0


def main() -> int:
    args = sys.argv[1:]
    outdir = next(a.split("=", 1)[1] for a in args if a.startswith("--outdir="))
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "simout.txt"), "w") as f:
        f.write("gem5 Simulator System.\ngem5 version 24.0.0.1 (fake, for tests)\n")
    if "--mode" in args:
        return full_system(args, outdir)
    sep = args.index("--")
    opts, wargs = args[:sep], args[sep + 1:]
    get = lambda k: opts[opts.index(k) + 1]
    out, binary, sockets, cps = get("--out"), get("--binary"), int(get("--sockets")), int(get("--cores-per-socket"))
    policy = wargs[wargs.index("--policy") + 1]
    if os.environ.get("FAKE_GEM5_FAIL_POLICY") == policy:
        with open(os.path.join(outdir, "simerr.txt"), "w") as f:
            f.write("fatal: fake failure for the test\n")
        return 1
    if os.environ.get("FAKE_GEM5_HANG_POLICY") == policy:
        time.sleep(600)
    time.sleep(float(os.environ.get("FAKE_GEM5_SLOW_SECONDS", 0)))   # a run long enough to kill its worker under it
    native_args = [a for a in wargs if a != "--m5"]
    res = subprocess.run([binary, *native_args], capture_output=True, text=True)
    with open(os.path.join(out, "workload.stdout"), "w") as f:
        f.write(res.stdout)
    doc = json.loads(res.stdout)
    obj = doc["layout_map"]["objects"][0]
    page = obj["address"] & ~4095
    tlb = f"   1000: board.processor.cores0.core.mmu.dtb: Mapping {page:#x} to {page + 0x100000:#x}\n"
    write_trace(outdir, [tlb, *trace_lines((obj["fields"][-1]["address"] + 0x100000) & ~63, sockets * cps)])
    roi = {"begin_tick": 2000, "end_tick": 30000, "roi_seconds": 28000 / 1e12, "exit_cause": "exiting with last active thread context",
           "final_tick": 40000, "workload_args": wargs, **machine(opts),
           **write_profile(opts, out, sockets * cps, 2000, 30000, [entry(Path(binary))])}
    with open(os.path.join(out, "roi.json"), "w") as f:
        json.dump(roi, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
