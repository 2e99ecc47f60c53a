"""Names for the kernel's own cache lines in a full-system trace: the vmlinux data symbols (nm) on each line.

The layout map names the fields of the objects the guest reports (the file's dentry, its directory's, its
inode); every other line the trace shows is the kernel's too. Those in the kernel image -- globals such as
locks, counters, seqcounts -- are named here from the vmlinux's symbol table, placed in physical memory by
its program headers (gem5 loads vmlinux at the physical addresses they give). The per-CPU variables (the
qspinlock's MCS nodes, run queues) are named per CPU: each CPU's copy sits at its symbol's offset from that
CPU's area, whose address the boot wrote into `__per_cpu_offset`, read from the checkpoint's memory; so is
the futex hash table, allocated at boot too (`__futex_data`). Slab objects have no symbol: they stay unnamed
(but for those the workload reports, cohtb/fs/runner.py), as do the __init pages (freed after boot and reused
by the allocators)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.fs import dwarf
from cohtb.run.line_names import Symbol
from cohtb.toolchain import tool_output

DATA_TYPES = set("bBdDrRvV")   # nm: bss, data, read-only data, weak objects
# x86-64's direct map of physical memory with 4-level paging and no KASLR (kernel/config-fragment turns
# RANDOMIZE_BASE, and with it RANDOMIZE_MEMORY, and X86_5LEVEL off): a per-CPU area is allocated there.
DIRECT_MAP = 0xffff888000000000


def load_segments(vmlinux: Path) -> list[tuple[int, int, int]]:
    """(vaddr, paddr, memsz) of each PT_LOAD segment (readelf -lW)."""
    segs = []
    for line in tool_output(["readelf", "-lW", str(vmlinux)]).splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[2], 16), int(f[3], 16), int(f[5], 16)))
    return segs


def _nm(vmlinux: Path) -> str:
    return tool_output(["nm", "-S", "--defined-only", str(vmlinux)])


def _sized(nm_text: str):
    """(address, size, type, name) of each nm line that gives a size."""
    for line in nm_text.splitlines():
        m = re.fullmatch(r"([0-9a-f]+) ([0-9a-f]+) (\S) (\S+)", line.strip())
        if m:
            yield int(m.group(1), 16), int(m.group(2), 16), m.group(3), m.group(4)


def data_symbols(vmlinux: Path) -> list[Symbol]:
    """The image's data objects with their physical addresses, sorted. Per-CPU variables (addresses from 0,
    a template copied at boot) fall in no loaded segment's kernel range and are left out."""
    segs = [s for s in load_segments(vmlinux) if s[0] >= 0xffffffff80000000]
    text = _nm(vmlinux)
    # __init data is freed after boot and its pages handed to the allocators: a name there would be wrong
    marks = {n: int(a, 16) for a, n in re.findall(r"^([0-9a-f]+) \S (__init_begin|__init_end)$", text, re.M)}
    init = (marks.get("__init_begin", 0), marks.get("__init_end", 0))
    out = []
    for vaddr, size, kind, name in _sized(text):
        if kind not in DATA_TYPES or init[0] <= vaddr < init[1]:
            continue
        for v, p, n in segs:
            if v <= vaddr < v + n:
                out.append(Symbol(p + vaddr - v, size, name))
                break
    return sorted(out, key=lambda s: s.paddr)


def percpu_template(nm_text: str) -> list[Symbol]:
    """The per-CPU variables as offsets into a CPU's area (x86-64 links them from 0 up to __per_cpu_end)."""
    start = re.search(r"^([0-9a-f]+) \S __per_cpu_start$", nm_text, re.M)
    end = re.search(r"^([0-9a-f]+) \S __per_cpu_end$", nm_text, re.M)
    if not start or not end or int(start.group(1), 16) != 0:
        raise CohtbError("the vmlinux has no per-CPU section linked from 0 (__per_cpu_start, __per_cpu_end): "
                         "not an SMP x86-64 kernel of the zero-based per-CPU layout")
    return [Symbol(a, size, name) for a, size, kind, name in _sized(nm_text)
            if kind in DATA_TYPES and a < int(end.group(1), 16)]


def percpu_offsets(pmem: Path, table_paddr: int, cpus: int) -> list[int]:
    """`__per_cpu_offset[0 .. cpus-1]` from a gem5 checkpoint's memory image (gzip of physical memory from 0)."""
    return read_words(pmem, table_paddr, cpus, "__per_cpu_offset")


def percpu_symbols(template: list[Symbol], offsets: list[int], where: str) -> list[Symbol]:
    """Each CPU's copy of each per-CPU variable, named `name (CPU k)`, at its physical address."""
    out = []
    for cpu, offset in enumerate(offsets):
        if not DIRECT_MAP <= offset < DIRECT_MAP + (1 << 46):
            raise CohtbError(f"{where}: __per_cpu_offset[{cpu}] = {offset:#x} is not in the direct map (a CPU the "
                             "boot did not bring up, or a kernel with KASLR)")
        out += [Symbol(offset - DIRECT_MAP + s.paddr, s.size, f"{s.name} (CPU {cpu})") for s in template]
    return sorted(out, key=lambda s: s.paddr)


def read_words(pmem: Path, paddr: int, n: int, what: str) -> list[int]:
    """`what`[0 .. n-1], little-endian 64-bit words at a physical address of a gem5 checkpoint's memory image
    (gzip of physical memory from 0)."""
    return read_at(pmem, [(f"{what}[{i}]", paddr + 8 * i) for i in range(n)])


def check_cpu_numbers(template: list[Symbol], offsets: list[int], pmem: Path) -> None:
    """The trace numbers cores as gem5 does, and gem5 gives core k APIC id k; the names `(CPU k)` and the
    analyses that read a CPU's own lines (cohtb/analysis/lock_queue.py) take trace core k to be the guest's CPU
    k. That holds if the boot numbered CPU k the one of APIC id k: each CPU's `x86_cpu_to_apicid`, read from
    the checkpoint's memory (one pass, in address order), says so or the run is refused."""
    apic = [s for s in template if s.name == "x86_cpu_to_apicid"]
    if not apic:
        raise CohtbError("the vmlinux has no per-CPU x86_cpu_to_apicid: which trace core is which CPU cannot be checked")
    ids = {cpu: word & 0xffffffff for cpu, word in   # a u32: the low half of the word at its address
           enumerate(read_at(pmem, [(f"x86_cpu_to_apicid (CPU {cpu})", o - DIRECT_MAP + apic[0].paddr)
                                    for cpu, o in enumerate(offsets)]))}
    wrong = [(cpu, ids[cpu]) for cpu in sorted(ids) if ids[cpu] != cpu]
    if wrong:
        raise CohtbError(f"{pmem}: the guest numbered its CPUs otherwise than gem5 its cores (CPU, APIC id): "
                         f"{wrong[:4]}; the trace's per-CPU names would be wrong")


def read_at(pmem: Path, places: list[tuple[str, int]]) -> list[int]:
    """The little-endian 64-bit word at each (name, physical address) of a gem5 checkpoint's memory image (gzip of
    physical memory from 0), read in one pass in address order (each seek of a gzip from its start would
    decompress the image up to it again)."""
    words = {}
    name = "a word"
    try:
        with gzip.open(pmem) as f:
            for paddr, name in sorted({p: n for n, p in places}.items()):
                f.seek(paddr)
                raw = f.read(8)
                if len(raw) != 8:
                    raise CohtbError(f"{pmem}: ends before {name} at {paddr:#x}")
                words[paddr] = int.from_bytes(raw, "little")
    except (OSError, EOFError) as e:
        raise CohtbError(f"{pmem}: cannot read {name}: {e}") from None
    return [words[p] for _, p in places]


def futex_buckets(vmlinux: Path, image: list[Symbol], pmem: Path) -> list[Symbol]:
    """The futex hash table, allocated at boot (futex_init: 256 buckets per possible CPU, rounded up to a power
    of two), each bucket named `futex hash bucket k`: where `__futex_data` (its `queues` pointer and `hashsize`)
    says in the checkpoint's memory, buckets as long as the DWARF's struct futex_hash_bucket. A kernel without
    the symbol, or whose table is not in the direct map, has none named."""
    data = [s for s in image if s.name == "__futex_data"]
    if not data:
        return []
    queues, size = read_words(pmem, data[0].paddr, 2, "__futex_data")
    if not DIRECT_MAP <= queues < DIRECT_MAP + (1 << 46) or not 0 < size <= 1 << 24:
        return []   # vmalloc'ed (a NUMA kernel's hashdist) or not set up: its lines stay unnamed, the run stands
    bucket = dwarf.layouts(vmlinux, ("futex_hash_bucket",))["futex_hash_bucket"]["size"]
    return [Symbol(queues - DIRECT_MAP + k * bucket, bucket, f"futex hash bucket {k}") for k in range(size)]


def cpu_areas(vmlinux: Path, image: list[Symbol], pmem: Path, cpus: int) -> tuple[list[Symbol], list[int]]:
    """The per-CPU template and each CPU's area (`__per_cpu_offset`) in a checkpoint, its CPUs checked to be
    numbered as gem5's cores (check_cpu_numbers)."""
    table = [s for s in image if s.name == "__per_cpu_offset"]
    if len(table) != 1:
        raise CohtbError(f"{vmlinux}: no data symbol __per_cpu_offset")
    template, offsets = percpu_template(_nm(vmlinux)), percpu_offsets(pmem, table[0].paddr, cpus)
    check_cpu_numbers(template, offsets, pmem)
    return template, offsets


def kernel_symbols(vmlinux: Path, pmem: Path, cpus: int) -> list[Symbol]:
    """The image's data objects, every CPU's per-CPU variables and the futex hash buckets, placed in physical
    memory, sorted."""
    image = data_symbols(vmlinux)
    template, offsets = cpu_areas(vmlinux, image, pmem, cpus)
    placed = percpu_symbols(template, offsets, str(pmem))
    return sorted(image + placed + futex_buckets(vmlinux, image, pmem), key=lambda s: s.paddr)
