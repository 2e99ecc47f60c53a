"""Full-system runs: the variant's kernel (cached build), a checkpoint of its boot on the machine (cached),
and the run restored from it, recorded as the same run directory as an SE run (manifest, events, layout).

The layout map depends on the guest workload. stat_file's objects are the kernel's: the project's patch prints
where the benchmark file's dentry, its directory's dentry and its inode are (physical addresses), and the built
vmlinux's DWARF gives their fields; the names match the SE stat_path workload's (file, tmpfs_root, file_inode),
so runs compare. A workload with objects of its own (rwsem) prints its layout map and the guest's page table
for it; one whose object is a kernel global (kernel_rwsem) has it from the vmlinux's symbol and DWARF."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Mapping
from pathlib import Path

from cohtb.atomic import atomic_dir, write_json_atomic
from cohtb.digest import file_sha256, inputs_digest
from cohtb.errors import CohtbError
from cohtb.fs import dwarf, initramfs, kernel, symbols
from cohtb.places import ROOT
from cohtb.run import gem5 as gem5_tool, kernels
from cohtb.run.machines import simulated
from cohtb.run.claim import exclusive
from cohtb.run.manifest import object_field
from cohtb.run.code_names import Code
from cohtb.run.recorder import Finished, tail
from cohtb.run.spec import GUEST_BENCHMARK, RunSpec
from cohtb.trace.layout import PAGE

CONFIG = ROOT / "gem5-configs" / "cohtb_fs.py"
BOOT_CODE = [CONFIG, *sorted((ROOT / "gem5-configs" / "multisocket").glob("*.py")),
             *sorted((ROOT / "gem5-configs" / "multisocket" / "topologies").glob("*.json"))]
CONSOLE = "board.pc.com_1.device"   # the guest's serial console, in gem5's output directory
PMEM = "board.physmem.store0.pmem"   # a checkpoint's memory image (gzip), physical addresses from 0
RESULT = "workload.json"            # what the guest's script writes back (m5 writefile), into gem5's outdir
STDERR = "workload.stderr"
# "cohtb-object <file> <type> <role> <phys hex> <size>" (kernel/patches/dcache-report-objects.patch)
_OBJECT = re.compile(r"cohtb-object (\S+) (dentry|inode) (file|parent) ([0-9a-f]+) (\d+)")
OBJECT_NAMES = {("dentry", "file"): "file", ("dentry", "parent"): "tmpfs_root", ("inode", "file"): "file_inode"}
STRUCT_OF = {name: struct for (struct, _), name in OBJECT_NAMES.items()}
# "cohtb-object kernel_rwsem (task|stack) <thread> <phys hex> <size>": a benchmark thread's own kernel objects,
# which kernel_rwsem --guest asks the benchmark's file for (kernel/patches/rwsem-bench.patch, its ioctl).
_THREAD_OBJECT = re.compile(r"cohtb-object kernel_rwsem (task|stack) (\d+) ([0-9a-f]+) (\d+)")
THREAD_REPORTS = {"kernel_rwsem"}   # the guest workloads whose every thread reports its objects so
# Guest workloads whose contended object is a kernel global: its symbol, its struct (the layout map is the
# symbol's address in the vmlinux and the struct's fields in its DWARF) and the kernel patch that adds it.
KERNEL_GLOBALS = {"kernel_rwsem": ("cohtb_rwsem", "rw_semaphore", "rwsem-bench")}


def _say(msg: str) -> None:
    sys.stdout.write(f"cohtb launch --fs: {msg}\n")   # one write: boots report from parallel threads
    sys.stdout.flush()


# Kernels and boots are built by one launch at a time, whichever client (cohtb/run/claim.py): another that needs
# the same waits for it and finds it in the cache. Claims live in the cache, beside what they guard.
BUILD_TIMEOUT = 4 * 3600   # the longest a kernel build or a boot may hold its claim


def prepare_kernels(specs: list[RunSpec]) -> dict[str, kernel.Built]:
    """Every variant the runs need, built (or found in the cache) one after another: make uses every core."""
    with exclusive(kernel.kernel_cache(), "initramfs", uuid.uuid4().hex, BUILD_TIMEOUT):   # two launches at once
        ramfs = initramfs.build()
    built = {}
    for name in dict.fromkeys(s.kernel for s in specs):
        with exclusive(kernel.kernel_cache(), f"kernel-{name}", uuid.uuid4().hex, BUILD_TIMEOUT):
            built[name] = kernel.build(name, ramfs.list_path, ramfs.digest)
    return built


def checked_checkpoint(built: kernel.Built, spec: RunSpec, gem5: Path, timeout: float) -> Path:
    """The boot's checkpoint, its CPUs checked to be numbered as gem5's cores before any run starts from it (the
    trace's per-CPU names depend on it, and the check would otherwise fail each run after its simulation)."""
    ckpt = checkpoint(built, spec, gem5, timeout)
    symbols.cpu_areas(built.vmlinux, symbols.data_symbols(built.vmlinux), ckpt / "ckpt" / PMEM,
                      spec.sockets * spec.cores_per_socket)
    return ckpt


def checkpoint(built: kernel.Built, spec: RunSpec, gem5: Path, timeout: float) -> Path:
    """The boot of this kernel on this machine, saved once /init is up (minutes; cached)."""
    key = inputs_digest([(f.name, f.read_bytes()) for f in BOOT_CODE] + [("kernel", built.dir.name.encode()),
                                                                          ("machine", " ".join(spec.machine_args()).encode()),
                                                                          ("machine file", simulated(spec.machine))])
    final = kernel.kernel_cache() / "checkpoints" / f"{built.dir.name}-{spec.sockets}x{spec.cores_per_socket}-{key[:12]}"
    if (final / "ckpt" / "m5.cpt").exists():
        return final
    with exclusive(final.parent, final.name, uuid.uuid4().hex, min(timeout, BUILD_TIMEOUT)):
        if (final / "ckpt" / "m5.cpt").exists():   # booted by the launch this one waited for
            return final
        return boot(built, spec, gem5, timeout, final)


def boot(built: kernel.Built, spec: RunSpec, gem5: Path, timeout: float, final: Path) -> Path:
    _say(f"booting {built.variant.name} on {spec.sockets}x{spec.cores_per_socket} for its checkpoint (minutes)")
    t0 = time.monotonic()
    with atomic_dir(final) as tmp:
        cmd = gem5_tool.command(gem5, tmp, CONFIG, ["--mode", "boot", *spec.machine_args(), "--kernel", str(built.vmlinux),
                                                    "--checkpoint", str(tmp / "ckpt"), "--out", str(tmp)], trace=None)
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        last = time.monotonic()
        while (cpu := gem5_tool.reap(proc)) is None:
            time.sleep(2)
            if time.monotonic() - t0 > timeout:
                proc.kill()
                proc.wait()
                raise CohtbError(f"the boot of {built.variant.name} ran past the {timeout:.0f} s timeout")
            if time.monotonic() - last > 30:
                last = time.monotonic()
                _say(f"  {time.monotonic() - t0:.0f} s: {tail(tmp / 'gem5' / CONSOLE, 1).strip()[:100]}")
        roi = json.loads((tmp / "roi.json").read_text()) if (tmp / "roi.json").exists() else {}
        if proc.returncode != 0 or roi.get("exit_cause") != "checkpoint":
            raise CohtbError(f"the boot of {built.variant.name} did not reach its checkpoint (gem5 exit "
                             f"{proc.returncode}, '{roi.get('exit_cause')}'):\n{tail(tmp / 'gem5' / CONSOLE)}\n"
                             f"{tail(tmp / 'gem5' / 'simerr.txt')}")
        size = sum(f.stat().st_size for f in (tmp / "ckpt").iterdir())
        write_json_atomic(tmp / "boot.json", {"host_seconds": round(time.monotonic() - t0, 1), "cpu_seconds": cpu,
                                              "simulated_seconds": roi["checkpoint_tick"] / 1e12, "bytes": size,
                                              "kernel": built.dir.name, "command": cmd})
    _say(f"checkpoint of {built.variant.name} {spec.sockets}x{spec.cores_per_socket}: "
         f"{time.monotonic() - t0:.0f} s, {size / 1e6:.1f} MB")
    return final


def guest_script(spec: RunSpec) -> str:
    """What the restored guest runs (run/run.sh of the payload): the workload alone. Every process costs
    milliseconds of simulated time and the serial console tens of µs per character, so the workload's --guest does
    the rest itself: printk off the console, what the host needs into its JSON (stat_file: the kernel's object
    lines), the JSON back to the host (m5 writefile); its errors come back the same way, if any."""
    args = " ".join([f"/run/{spec.workload}", *spec.workload_args(), "--guest"])
    return (f"{args} 2> /stderr.txt || /bin/cohtb-m5 writefile {STDERR} < /stderr.txt\n")


def kernel_objects(lines: list[str], file_name: str, where: str) -> dict[str, tuple[int, int]]:
    """name -> (physical address, size) of the objects the kernel reported for the benchmark's file (its log
    lines, which stat_file --guest copies into its JSON; other cohtb-* files are reported too)."""
    found = {}
    for m in (_OBJECT.search(line) for line in lines):
        if m is None or m.group(1) != file_name:
            continue
        found[OBJECT_NAMES[m.group(2), m.group(3)]] = (int(m.group(4), 16), int(m.group(5)))
    missing = sorted(set(OBJECT_NAMES.values()) - set(found))
    if missing:
        raise CohtbError(f"{where}: the kernel did not report {', '.join(missing)} (no 'cohtb-object' line: a kernel "
                         "without dcache-report-objects.patch?)")
    return found


def thread_symbols(lines: list[str], vmlinux: Path, threads: int | None = None, where: str = "") -> list[symbols.Symbol]:
    """The benchmark threads' own kernel objects, named like the kernel's globals: thread k's task_struct field
    by field (the vmlinux's DWARF, within the size the kernel reported) and each page of its kernel stack. None
    reported: none named; `threads` given (a workload that reports, THREAD_REPORTS), each must have reported."""
    found = [m for m in map(_THREAD_OBJECT.search, lines) if m]
    if threads is not None:
        reported = {int(m.group(2)) for m in found if m.group(1) == "task"}
        if reported != set(range(threads)):
            raise CohtbError(f"{where}: threads {sorted(set(range(threads)) - reported)} did not report their kernel "
                             "objects (a kernel without rwsem-bench.patch's ioctl?)")
    fields = dwarf.layouts(vmlinux, ("task_struct",))["task_struct"]["fields"] if found else []
    out = []
    for m in found:
        kind, thread, paddr, size = m.group(1), int(m.group(2)), int(m.group(3), 16), int(m.group(4))
        if kind == "stack":
            out.append(symbols.Symbol(paddr, size, f"thread {thread}'s kernel stack"))
        else:   # as long as fork allocates it (arch_task_struct_size): the FPU state at the end of its last
            # field, thread, is sized at boot for this CPU's features, shorter than the DWARF's
            out += [symbols.Symbol(paddr + f["offset"], min(f["size"], size - f["offset"]),
                                   object_field(f"thread {thread}'s task_struct", f["name"]))
                    for f in fields if f["offset"] < size]
    return out


def layout_map(objects: dict[str, tuple[int, int]], layout: dict, variant: kernels.Variant) -> dict:
    """The SE workloads' layout-map format, physical addresses: the reported objects with their DWARF fields."""
    out = []
    for name, (addr, size) in objects.items():
        fields = [{"name": f["name"], "address": addr + f["offset"], "size": f["size"]}
                  for f in layout[STRUCT_OF[name]]["fields"]]
        out.append({"name": name, "address": addr, "size": size, "fields": fields})
    return {"cache_line": 64, "layout": variant.layout, "objects": out}


def physical_layout(workload: dict, where: str) -> dict:
    """A guest workload's layout map with physical addresses: each address through the page table the guest
    printed beside it ("guest_pages": virtual page -> physical page, from its /proc/self/pagemap)."""
    try:
        pages = {int(v): int(p) for v, p in workload["guest_pages"].items()}
        layout = workload["layout_map"]
    except (KeyError, TypeError, ValueError, AttributeError):
        raise CohtbError(f"{where}: no 'layout_map' and 'guest_pages' (a workload without --guest's page table?)") from None

    def physical(address: int) -> int:
        page = address & ~(PAGE - 1)
        if page not in pages:
            raise CohtbError(f"{where}: guest_pages has no page {page:#x} of the layout map")
        return pages[page] + address - page

    return {**layout, "objects": [{**o, "address": physical(int(o["address"])),
                                   "fields": [{**f, "address": physical(int(f["address"]))} for f in o["fields"]]}
                                  for o in layout["objects"]]}


def global_layout(vmlinux: Path, symbol: str, struct: str, layout: str) -> dict:
    """The layout map of one kernel global: where the vmlinux puts the symbol (physical), its struct's fields."""
    found = [s for s in symbols.data_symbols(vmlinux) if s.name == symbol]
    if len(found) != 1:
        raise CohtbError(f"{vmlinux}: {len(found) or 'no'} data symbols {symbol} (one is the benchmark's; none: a "
                         "kernel variant without the patch that adds it)")
    sym, fields = found[0], dwarf.layouts(vmlinux, (struct,))[struct]["fields"]
    return {"cache_line": 64, "layout": layout, "objects": [
        {"name": symbol, "address": sym.paddr, "size": sym.size,
         "fields": [{"name": f["name"], "address": sym.paddr + f["offset"], "size": f["size"]} for f in fields]}]}


class FSRunner:
    def check(self, spec: RunSpec) -> None:
        v = kernels.variant(spec.kernel)
        if spec.workload not in initramfs.GUEST_WORKLOADS:
            raise CohtbError(f"run {spec.id}: a full-system run's workload is one of "
                             f"{', '.join(initramfs.GUEST_WORKLOADS)}")
        if spec.workload in KERNEL_GLOBALS and KERNEL_GLOBALS[spec.workload][2] not in v.patches:
            raise CohtbError(f"run {spec.id}: {spec.workload} needs a kernel with {KERNEL_GLOBALS[spec.workload][2]}."
                             f"patch (variant {spec.kernel} has not)")
        if spec.workload == GUEST_BENCHMARK and (spec.policy, spec.layout) != (v.policy, v.layout):
            raise CohtbError(f"run {spec.id}: {GUEST_BENCHMARK} in full system has its kernel's policy and "
                             f"layout ({v.policy}, {v.layout})")
        if spec.ops:
            raise CohtbError(f"run {spec.id}: a full-system run is timed (a window, not --ops)")
        if spec.intruder_hold_ns is not None:   # its intruder lists the directory (stat_file --intruder-period-us)
            raise CohtbError(f"run {spec.id}: a full-system run's intruder holds no lock of its own (no hold time)")
        if not spec.traced:
            raise CohtbError(f"run {spec.id}: full-system runs are always traced (their layout map is read from the "
                             "trace's kernel objects)")

    def shared(self) -> dict[Path, str]:
        return {kernel.kernel_cache(): "it builds the kernels and boot checkpoints the runs restore "
                                       "(COHTB_KERNEL_CACHE)"}

    def prepare(self, specs: list[RunSpec], gem5: Mapping[str, Path], timeout: float, workers: int) -> dict:
        """Run id -> (kernel build, checkpoint), or the error that prevents the run: the kernels built first (each
        uses every core), then one boot per (kernel, machine), `workers` at a time, each by its machine's gem5."""
        if not specs:
            return {}
        for machine in sorted({s.machine for s in specs}):
            if not gem5_tool.has_profile(gem5[machine]):
                raise CohtbError(f"{gem5[machine]}: built without the pc-profile patch, and every full-system run "
                                 f"records its profile (build gem5 with gem5-configs/build/build-gem5.sh: docs/gem5.md)")
        built = prepare_kernels(specs)
        boots = {(s.kernel, *s.machine_args()): s for s in specs}
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {k: pool.submit(checked_checkpoint, built[s.kernel], s, gem5[s.machine], timeout)
                       for k, s in boots.items()}
        ready: dict = {}
        for s in specs:
            fut = futures[(s.kernel, *s.machine_args())]
            err = fut.exception()
            ready[s.id] = (f"no checkpoint: {err}" if isinstance(err, CohtbError) else
                           f"no checkpoint: {type(err).__name__}: {err}") if err else (built[s.kernel], fut.result())
        return ready

    def command(self, spec: RunSpec, run_dir: Path, gem5: Path, prepared: tuple[kernel.Built, Path]) -> list[str]:
        built, ckpt = prepared
        initramfs.payload(guest_script(spec), spec.workload, run_dir / "payload.tar")
        return gem5_tool.command(gem5, run_dir, CONFIG, [
            "--mode", "run", *spec.machine_args(), "--kernel", str(built.vmlinux), "--checkpoint", str(ckpt / "ckpt"),
            "--payload", str(run_dir / "payload.tar"), "--out", str(run_dir), "--profile"])

    def pagemap(self, run_dir: Path) -> None:
        return None   # the trace's addresses are physical

    def finish(self, spec: RunSpec, tmp: Path, roi: dict, prepared: tuple[kernel.Built, Path]) -> Finished:
        built, ckpt = prepared
        if roi.get("error"):
            raise CohtbError(f"{spec.id}: {roi['error']}")
        try:
            workload = json.loads((tmp / "gem5" / RESULT).read_text())
        except (OSError, json.JSONDecodeError):
            raise CohtbError(f"the guest wrote back no JSON result:\n{tail(tmp / 'gem5' / STDERR)}\n"
                             f"{tail(tmp / 'gem5' / CONSOLE)}") from None
        if spec.workload == GUEST_BENCHMARK:   # its objects are the kernel's: where the kernel reported them
            objects = kernel_objects(workload.get("kernel_objects", []), Path(workload["path"]).name,
                                     f"{spec.id}: gem5/{RESULT} kernel_objects")
            workload["layout_map"] = layout_map(objects, built.layout, built.variant)
            how = "kernel-report"
        elif spec.workload in KERNEL_GLOBALS:
            symbol, struct, _ = KERNEL_GLOBALS[spec.workload]
            workload["layout_map"] = global_layout(built.vmlinux, symbol, struct, spec.layout)
            how = "kernel-symbol"
        else:   # its own objects: its layout map through the page table it printed
            workload["layout_map"] = physical_layout(workload, f"{spec.id}: gem5/{RESULT}")
            how = "guest-pagemap"
        boot = json.loads((ckpt / "boot.json").read_text())
        # The kernel's globals and per-CPU variables, by name (the reported objects' fields are the layout): the
        # recorder names the trace's lines they are on. The per-CPU areas are where the checkpoint's boot put them.
        named = symbols.kernel_symbols(built.vmlinux, ckpt / "ckpt" / PMEM, spec.sockets * spec.cores_per_socket)
        threads = workload.get("threads") if spec.workload in THREAD_REPORTS else None
        named = sorted(named + thread_symbols(workload.get("kernel_objects", []), built.vmlinux, threads,
                                              f"{spec.id}: gem5/{RESULT} kernel_objects"), key=lambda x: x.paddr)
        return Finished(workload, initramfs.GUEST_BUILD / spec.workload, None, layout_how=how,
                        code=[Code("[kernel.kallsyms]", built.vmlinux, kernel=True),
                              Code(spec.workload, initramfs.GUEST_BUILD / spec.workload, kernel=False)],
                        files={"console": f"gem5/{CONSOLE}"},
                        facts={"kernel": {**built.inputs, "vmlinux_sha256": file_sha256(built.vmlinux)},
                               "checkpoint": {"path": str(ckpt), **{k: boot[k] for k in (
                                   "host_seconds", "cpu_seconds", "simulated_seconds", "bytes") if k in boot}},
                               # the set-up on atomic CPUs, from the checkpoint to the switch to timing ones
                               "atomic_setup": {"simulated_seconds": round(
                                   roi["switch_tick"] / 1e12 - boot["simulated_seconds"], 9)}},
                        symbols=named)
