"""One experiment per seed (a patch's public message: seed_data/<seed>/published.json cites each): what the patch changed, the
published figures, and the gem5 runs that mirror the published setup as far as the simulator allows.

Published figures are kept as data with the lines of the message they are printed on (published.py); nothing here
is tuned to approach them. Every experiment is built from a declaration (declarations.py: seed_data/<seed>/<experiment>.toml),
which fixes its machine, lock model, windows, repetitions, minimum effect and verdict rule before its runs; each
earlier version of the declaration builds the experiment its runs were recorded under (HISTORY)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from cohtb.errors import CohtbError
from cohtb.experiments import declarations, seed_folders
from cohtb.experiments.declarations import Declaration, sockets_text
from cohtb.experiments.published import PUBLISHED, Published
from cohtb.run.kernels import variant
from cohtb.run.gem5 import patches_needed
from cohtb.run.spec import GUEST_BENCHMARK, RunSpec

# The workloads' --spinlock for each declared lock model (workloads/common/spinlock.h); "tas" is their default.
LOCK_FLAGS = {"tas": (), "ticket": ("--spinlock", "ticket"), "qspinlock": ("--spinlock", "qspinlock")}


@dataclass(frozen=True)
class Point:
    """One configuration compared: base and new runs (templates: repetition 0) and what was published. A control
    point (judged False) shows what another model does and is not held to the published figures."""

    label: str
    base: RunSpec
    new: RunSpec
    published: tuple[Published, ...]
    judged: bool = True
    curve: str = ""   # the curve a shape rule judges the point in (its points over the socket counts)


@dataclass(frozen=True)
class Series:
    """A time-series experiment (seed 004's collapse): runs whose ops per interval are the result. Each run
    template's repetitions are filed under its label: its policy, or the label given (a full-system series names
    its kernels, and a control the same kernel without the intruder)."""

    label: str
    runs: tuple[RunSpec, ...]
    published: tuple[Published, ...]
    event_at_us: float   # when the disturbance starts, µs into the window
    labels: tuple[str, ...] = ()
    event: str = "the transient lock holder"   # what the disturbance is, as figures and tables name it
    controls: tuple[tuple[str, str], ...] = ()   # (label, its control's label): the same runs without the disturbance
    event_count: int = 0   # the disturbances each run with them reports (stat_file's listings); 0: none reported

    def labelled(self) -> dict[str, RunSpec]:
        return dict(zip(self.labels or [t.policy for t in self.runs], self.runs, strict=True))

    def control(self, label: str) -> str:
        return dict(self.controls)[label]


@dataclass(frozen=True)
class Experiment:
    seed: str
    declaration: Declaration
    title: str
    change: str                 # what the patch changes, in one line
    base_name: str
    new_name: str
    published_setup: str
    simulated_setup: str
    differences: str            # what the simulation leaves out or changes, and why it matters
    points: tuple[Point, ...]
    series: tuple[Series, ...] = field(default_factory=tuple)
    sensitivity: tuple[RunSpec, ...] = ()   # runs kept beside the experiment, reported but not judged

    @property
    def repetitions(self) -> int:
        return self.declaration.repetitions
    def repeat(self, template: RunSpec) -> list[RunSpec]:
        """A configuration's repetitions as declared: seed k, and whatever else the declaration varies with k."""
        d = self.declaration
        return [replace(template, seed=k, home_socket=d.home_socket(template.sockets, k), placement=d.placement(k),
                        declaration=d.runs_id if d.tagged else "")
                for k in range(1, d.repetitions + 1)]

    def specs(self) -> list[RunSpec]:
        """Every run of the experiment: each point's base and new, and each series run, repeated as declared."""
        templates = [s for p in self.points for s in (p.base, p.new)] + [s for x in self.series for s in x.runs]
        return [s for t in dict.fromkeys(templates) for s in self.repeat(t)]


def on_machine(d: Declaration, spec: RunSpec) -> RunSpec:
    """A run on the declared machine: its hierarchy or machine file, wired as declared for the run's socket count."""
    return replace(spec, machine=d.run_machine(), topology=d.topology(spec.sockets))


def timed(d: Declaration, workload: str, policy: str, layout: str, sockets: int, *,
          window_us: int | None = None, interval_us: int | None = None, extra: tuple[str, ...] = (),
          intruder_period_us: int = 0, intruder_hold_ns: int | None = None) -> RunSpec:
    return on_machine(d, RunSpec(workload, policy, layout, sockets, d.cores_per_socket,
                                 intruder_period_us=intruder_period_us, intruder_hold_ns=intruder_hold_ns, extra=extra,
                                 warmup_us=d.warmup_us, window_us=window_us or d.window_us,
                                 interval_us=interval_us or d.interval_us, skew_ns=d.skew_ns))


def _measure(d: Declaration) -> str:
    return (f"ops per simulated µs in a {d.window_us} µs window after {d.warmup_us} µs of warm-up, {d.repetitions} repetitions "
            f"({' and '.join(d.repetition_sources)} varied)")


def _threads(d: Declaration) -> str:
    return "/".join(str(n * d.cores_per_socket) for n in d.sockets)


USER_RANGES = ("10-100", "200-1000", "1100-2000")   # seed 000's table: one row per node count and range of users
LOCK_NAMES = {"tas": "a test-and-test-and-set lock", "ticket": "3.10's x86 ticket lock",
              "qspinlock": "the queued spinlock (qspinlock)"}


def e000(d: Declaration) -> Experiment:
    def point(label: str, sockets: int, lock: str, judged: bool = True) -> Point:
        nodes = f"{sockets} node{'s' if sockets > 1 else ''}"
        extra = LOCK_FLAGS[lock]
        return Point(label, timed(d, "open_close", "locked", "shared", sockets, extra=extra),
                     timed(d, "open_close", "cmpxchg", "shared", sockets, extra=extra),
                     tuple(PUBLISHED["000"][f"{nodes}, users {users}"] for users in USER_RANGES), judged)

    points = tuple(point(sockets_text(n), n, d.lock) for n in d.sockets)
    points += tuple(point(f"{sockets_text(n)}, {LOCK_NAMES[d.control_lock]} (control)", n, d.control_lock,
                          judged=d.control_judged) for n in d.control_sockets)
    control = (f" A control at {', '.join(map(str, d.control_sockets))} sockets swaps the lock for "
               f"{LOCK_NAMES[d.control_lock]}." if d.control_lock else "")
    return Experiment(
        seed="000", declaration=d, title="Lockless dentry reference counts (lockref, 2013)",
        change="dget_parent and dput update d_count with cmpxchg on the lock+count word instead of taking d_lock",
        base_name="spinlock", new_name="lockref",
        published_setup="AIM7 short workload on ramdisk, 3.10 kernel, 8-socket 80-core x86-64 (HT off), restricted "
                        "to 1/2/4/8 nodes with numactl; jobs per minute",
        simulated_setup="open_close: every thread opens and closes its own file in one shared directory; each open "
                        "and close runs dget_parent + dput on the directory (fsnotify_parent). "
                        f"{'/'.join(map(str, d.sockets))} sockets x {d.cores_per_socket} cores, one thread per core; d_lock is "
                        f"{LOCK_NAMES[d.lock]}, and lockref's cmpxchg runs while it is free; {_measure(d)}.{control}",
        differences=f"{d.cores_per_socket} cores per socket, not 10; threads, not 10-2000 AIM7 processes; only the dentry path of "
                    "open/close is simulated (no syscall entry, no file table, no AIM7 job mix), so the contended "
                    "line is a larger share of each operation than in AIM7; "
                    "which 3.10 caller of dget_parent AIM7 hit is not in the seed (see docs/workloads.md); the author "
                    "calls the 2-node baseline abnormal (without lockref it still gains 79-96%), so the published "
                    "2-node ratios are inflated. The lock matters: a ticket lock hands the lock over in arrival "
                    "order, across sockets, while test-and-test-and-set lets a core on the holder's socket win it, "
                    "unfair but keeping the lock's line on one socket",
        points=points)


def e001(d: Declaration) -> Experiment:
    extra = LOCK_FLAGS[d.lock]
    return Experiment(
        seed="001", declaration=d, title="List batching for the superblock's inode list (2016)",
        change="a thread that finds the list lock taken queues its add/delete; the lock holder performs the queue",
        base_name="spinlock", new_name="batched",
        published_setup="exit microbenchmark, 1000 threads with many inodes, 4-socket E7-4820 v3 (48 cores), 4.4 "
                        "kernel; elapsed seconds",
        simulated_setup="list_batch: every thread adds and deletes its own node on one list under "
                        f"{LOCK_NAMES[d.lock]}; {d.size_text()}; {_measure(d)} (the inverse of elapsed time for "
                        "a fixed amount of work)",
        differences=f"{_threads(d)} threads, not 1000; the list operations alone, not thread exit; elapsed time compared as "
                    "its inverse (throughput)",
        points=tuple(Point(sockets_text(n), timed(d, "list_batch", "locked", "shared", n, extra=extra),
                           timed(d, "list_batch", "batched", "shared", n, extra=extra),
                           (PUBLISHED["001"]["4-socket, 1000 threads, elapsed"],)) for n in d.sockets))


# What workloads/rwsem.c adds to every critical section: its invariant check.
RWSEM_CHECK = ("each critical section also updates one of the workload's two shared check counters and reads the "
               "other (its invariant check, inside_readers and inside_writers): two more contended lines, which the "
               "kernel's rwsem benchmark does not have")


def e002(d: Declaration) -> Experiment:
    return Experiment(
        seed=d.experiment, declaration=d, title="Reader optimistic spinning on a writer-owned rwsem (2016)",
        change="a reader that finds the rwsem writer-owned spins while the writer runs instead of sleeping",
        base_name="sleep", new_name="spin",
        published_setup="rwsem microbenchmark, 1:1 readers:writers, short critical section, 36 threads, 2-socket "
                        "E5-2699 v3; locking rate with 2 vs 5 patches applied (patch 3 moves macros, patch 4 changes "
                        "RWSEM_WAITING_BIAS for the reader trylock, patch 5 enables reader spinning)",
        simulated_setup=f"rwsem: even threads read, odd threads write, short critical section; {d.size_text()}; "
                        f"{_measure(d)}",
        differences=f"{_threads(d)} threads, not 36; sleeping is a futex wait in gem5's syscall emulation, whose wake-up latency "
                    "is not a kernel's; the critical section is short, as in the microbenchmark (the same table shows "
                    "patch 5 cutting 36-thread fio, a long critical section, from 789 to 281 MB/s, which is not "
                    f"simulated); {RWSEM_CHECK}",
        points=tuple(Point(sockets_text(n), timed(d, "rwsem", "sleep", "shared", n), timed(d, "rwsem", "spin", "shared", n),
                           (PUBLISHED["002"]["36 threads, locking rate"],)) for n in d.sockets))


def e003(d: Declaration) -> Experiment:
    return Experiment(
        seed="003", declaration=d, title="Per-CPU statistics counters in ext4's extent cache (2016)",
        change="es_stats_cache_hits/misses become percpu counters instead of shared increments",
        base_name="shared", new_name="percpu",
        published_setup="38-thread fio on DAX ext4 (NVDIMM), 4-socket Haswell-EX, 4.6-rc1; aggregate bandwidth",
        simulated_setup="stat_counter: every thread increments a shared counter, or its own counter with the patch's "
                        f"batch (1 << 30: in effect never folded); {d.size_text()}; {_measure(d)}",
        differences="the counter alone, not the I/O path around it: in fio the counter is a small share of each "
                    "I/O, so the published gain is a few percent while the simulated one is the counter's own",
        points=tuple(Point(sockets_text(n), timed(d, "stat_counter", "shared", "padded", n),
                           timed(d, "stat_counter", "percpu", "padded", n, extra=("--batch", str(1 << 30))),
                           tuple(PUBLISHED["003"].values())) for n in d.sockets))


COLLAPSE_PERIOD_US = 100   # the intruder's one hold is 50 µs into the window (warm-up 50 µs)
COLLAPSE_HOLD_NS = 2000
COLLAPSE_POLICIES = ("retry100", "trywait", "unified", "locked")   # locked: the locked-only level itself


DENTRY_ERAS = {"shared": "6.1 .. 6.7's", "pre611": "6.8 .. 6.10's", "split": "6.11's"}


def e004(d: Declaration) -> Experiment:
    extra = LOCK_FLAGS[d.lock]
    n = d.sockets[0]
    before, after = d.layouts or ("shared", "split")
    return Experiment(
        seed="004", declaration=d,
        title="d_lockref out of the RCU-lookup lines, and lockref's collapse to locked-only (2024)",
        change="6.11 moves d_lockref to its own cache line; the lockref fixes wait for a transient lock holder "
               "instead of taking the lock",
        base_name=before, new_name=after,
        published_setup="will-it-scale stat2 (20-way stat(2) of one tmpfs file), Sapphire Rapids; ops/s",
        simulated_setup="stat_path: stat(2) of /tmp/willitscale.XXXXXX through the 6.12 RCU walk, getattr and dput, "
                        f"dentries laid out as {DENTRY_ERAS[before]} ({before}) and {DENTRY_ERAS[after]} ({after}), "
                        "retry100 (mainline "
                        f"lockref) in both, d_lock {LOCK_NAMES[d.lock]}; {d.size_text()}; {_measure(d)}. "
                        "Collapse: split, one transient holder takes the file's d_lock once for 2 µs, 50 µs into a "
                        "400 µs window; retry100 against the two waiting policies, and the locked policy for reference",
        differences=f"{_threads(d)} threads on {sockets_text(n)}, not 20 threads on one Sapphire Rapids machine; no syscall entry/exit "
                    "(a large part of each real stat), so the contended lines weigh more per operation; the published "
                    "'after' also had patch 1/2 (wait for unlock, 256 polls), while the simulation changes only the "
                    "layout; the published 'after' varied from 7.8 to 9 million ops/s between runs; the transient "
                    "holder is an abstraction of whatever took the lock (the seed does not know what did)"
                    + (f". Why the layout pair can come out even here: with {_threads(d)} threads on {sockets_text(n)} "
                       "every get and put moves the count word's line across sockets in both layouts, and those "
                       "transfers bound the throughput; splitting the line removes the lookup's dirty reads of it but "
                       "not the transfers, while on one Sapphire Rapids socket a transfer is cheap and the removed "
                       "reads weigh more. The full-system runs of the real kernel (docs/fs.md) are the check on this"
                       if n > 1 else ""),
        points=(Point(sockets_text(n), timed(d, "stat_path", "retry100", before, n, extra=extra),
                      timed(d, "stat_path", "retry100", after, n, extra=extra),
                      (PUBLISHED["004"]["20-way stat, tmpfs"],)),),
        series=(Series("collapse", tuple(timed(d, "stat_path", p, "split", n, window_us=400, interval_us=20,
                                               intruder_period_us=COLLAPSE_PERIOD_US, intruder_hold_ns=COLLAPSE_HOLD_NS,
                                               extra=("--intruder-holds", "1") + extra)
                                         for p in COLLAPSE_POLICIES),
                       (PUBLISHED["004"]["retry100: expected performance -> everyone degraded"],),
                       event_at_us=COLLAPSE_PERIOD_US - d.warmup_us),))


def full_system(d: Declaration, kernel_variant: str, sockets: int, cores: int = 4, op: str = "stat",
                dentry_line_offset: int | None = None) -> RunSpec:
    """dentry_line_offset: where in its cache line the file's dentry starts (stat_file --dentry-line-offset);
    None: where the allocator puts it."""
    v = variant(kernel_variant)
    extra = ("--op", op) + (("--dentry-line-offset", str(dentry_line_offset)) if dentry_line_offset is not None else ())
    return RunSpec(GUEST_BENCHMARK, v.policy, v.layout, sockets, cores, extra=extra, warmup_us=d.warmup_us,
                   window_us=d.window_us, interval_us=d.interval_us, skew_ns=d.skew_ns, kernel=kernel_variant)


FS_PLACEMENTS = {"line-start": ("the dentry at a line start (as pahole draws it)", 0),
                 "allocator": ("the dentry where the allocator put it", None)}


def e004fs(d: Declaration) -> Experiment:
    base, new = d.kernels
    base_name, new_name = d.kernel_labels or d.kernels
    n = d.sockets[0]
    declared = lambda kernel, offset: on_machine(d, full_system(d, kernel, n, d.cores_per_socket,
                                                                dentry_line_offset=offset))
    points = tuple(Point(f"{sockets_text(n)}, {FS_PLACEMENTS[p][0]}", declared(base, FS_PLACEMENTS[p][1]),
                         declared(new, FS_PLACEMENTS[p][1]), (PUBLISHED["004"]["20-way stat, tmpfs"],))
                   for p in d.placements)
    sensitivity = tuple(replace(declared(base, o), seed=1) for o in d.sensitivity_offsets)
    return Experiment(
        seed=d.experiment, declaration=d, title="d_lockref out of the RCU-lookup lines, in the real kernel (full system)",
        change="6.11 moves d_lockref to its own cache line",
        base_name=base_name, new_name=new_name,
        published_setup="will-it-scale stat2 (20-way stat(2) of one tmpfs file), Sapphire Rapids; ops/s",
        simulated_setup=f"Linux 6.12 booted on the simulated {d.size_text()} (docs/fs.md): every CPU runs a "
                        "thread calling stat(2) on /tmp/cohtb-stat.<pid> (tmpfs) through the real syscall, RCU walk, "
                        f"getattr and dput; {new_name} (d_lockref at offset 128) against {base_name} "
                        f"({d.kernel_note or variant(base).about}); {_measure(d)}",
        differences=f"{_threads(d)} threads on {sockets_text(n)}, not 20 on one Sapphire Rapids machine; a TimingSimpleCPU (one "
                    "instruction at a time, no out-of-order overlap of misses) and gem5's x86 full system; the kernel "
                    "is a tinyconfig build (no LSM, no audit) with 6.12's qspinlock, but SLUB and -O2 as a "
                    "distribution builds them; the published 'after' also had patch 1/2 (wait for unlock), while the "
                    "simulation changes only the layout; the real kernel shares other lines between the CPUs too "
                    "(scheduler, timers, the per-mount and per-superblock state), which the attribution shows beside "
                    "the dentry's",
        points=points, sensitivity=sensitivity)


# kernel_rwsem: lock/unlock pairs per system call, so the kernel's rwsem, not the call around it, is the bulk of
# each operation (the seed's benchmark loops in the kernel); an operation is one call.
KERNEL_RWSEM_PAIRS = 16


def e002fs(d: Declaration, workload: str = "rwsem") -> Experiment:
    (k,) = d.kernels
    n = d.sockets[0]
    kernel_rwsem = workload == "kernel_rwsem"
    extra = ("--pairs", str(KERNEL_RWSEM_PAIRS)) if kernel_rwsem else ()
    fs = lambda policy: on_machine(d, RunSpec(workload, policy, "shared", n, d.cores_per_socket, warmup_us=d.warmup_us,
                                              window_us=d.window_us, interval_us=d.interval_us, skew_ns=d.skew_ns,
                                              kernel=k, extra=extra))
    return Experiment(
        seed="002-kernel-fs" if kernel_rwsem else "002-fs", declaration=d,
        title=("Reader optimistic spinning on a writer-owned rwsem, on the kernel's rwsem (full system)" if kernel_rwsem
               else "Reader optimistic spinning on a writer-owned rwsem, with the kernel's futex (full system)"),
        change="a reader that finds the rwsem writer-owned spins while the writer runs instead of sleeping",
        base_name="sleep", new_name="spin",
        published_setup="rwsem microbenchmark, 1:1 readers:writers, short critical section, 36 threads, 2-socket "
                        "E5-2699 v3; locking rate with 2 vs 5 patches applied (patch 5 enables reader spinning)",
        simulated_setup=f"Linux 6.12 booted on the simulated {d.size_text()} (docs/fs.md), variant {k} "
                        f"({variant(k).about}), one thread per CPU, even threads read and odd threads write: "
                        + (f"each read(2) or write(2) of /proc/cohtb-rwsem takes the kernel's benchmark rwsem "
                           f"{KERNEL_RWSEM_PAIRS} times around a short critical section (one operation); sleep: 6.12's "
                           "rwsem (readers queue and sleep at once on a "
                           "writer-owned lock), spin: its reader optimistic spinning switched on"
                           if kernel_rwsem else
                           "the SE workload's rwsem (workloads/rwsem.c) in user space, sleeping on the kernel's own "
                           "futex; sleep: a reader sleeps at once on a writer-owned rwsem, spin: it spins first")
                        + f"; {_measure(d)}",
        differences=f"{_threads(d)} threads, not 36; "
                    + ("6.12's rwsem keeps, switched on or off, what 4.x gained after the seed (writers spinning on "
                       "readers, reader lock stealing, the handoff), so 'sleep' is not the seed's 2-patch kernel but "
                       f"6.12's; each operation is also a system call (for {KERNEL_RWSEM_PAIRS} lock/unlock pairs), "
                       "which the seed's in-kernel benchmark did not pay; the seed's third step (5 -> 8 patches, "
                       "1760 -> 5439 Mop/s) is writers spinning on a reader-owned lock, another mechanism, which 6.12 "
                       "has in both arms: it is neither simulated nor judged"
                       if kernel_rwsem else
                       "the rwsem is the workload's (count, owner and a futex word), not the kernel's; its slow path "
                       f"has no wait_lock and no queue: the futex is its queue; {RWSEM_CHECK}")
                    + ("" if "x86-sti-shadow" in patches_needed(d.run_machine()) else
                       "; and this machine's gem5 has no STI interrupt shadow, so a wakeup taken at an idle CPU's hlt "
                       "can wait for that CPU's next tick, up to 10 ms (docs/fs.md, 'Lost wakeups'): every run in "
                       "which threads sleep is exposed, by an amount these runs do not measure"),
        points=(Point(sockets_text(n), fs("sleep"), fs("spin"), (PUBLISHED["002"]["36 threads, locking rate"],)),))


# seed 000's full-system paths: (its curve's name, the benchmark's flags, what it does as the setup says it)
FS_PATHS_000 = {"stat": ("stat(2) of one file", (),
                         "every thread stat(2)s one tmpfs file (the file's dentry: the lookup's lockref get and dput)"),
                "open_close": ("open+close of each thread's own file in a watched directory", ("--own-files", "--watch-dir"),
                               "the seed's own path, every thread opens and closes its own file in a directory with an "
                               "inotify watch (fsnotify_parent: dget_parent and dput of the directory's dentry on "
                               "each open and each close; each thread its own descriptor table)")}


def e000fs(d: Declaration) -> Experiment:
    base, new = d.kernels
    unknown = [op for op in d.fs_paths if op not in FS_PATHS_000]
    if unknown:
        raise CohtbError(f"{seed_folders.declaration_file(d.experiment)}: version {d.version}: field 'fs_paths': "
                         f"unknown path '{unknown[0]}' (known: {', '.join(FS_PATHS_000)})")
    paths = d.fs_paths or tuple(FS_PATHS_000)

    def run(kernel: str, op: str, sockets: int) -> RunSpec:
        spec = on_machine(d, full_system(d, kernel, sockets, d.cores_per_socket, op=op))
        return replace(spec, extra=spec.extra + FS_PATHS_000[op][1])

    def point(op: str, n: int) -> Point:
        nodes = f"{n} node{'s' if n > 1 else ''}"
        return Point(f"{FS_PATHS_000[op][0]}, {sockets_text(n)}", run(base, op, n), run(new, op, n),
                     tuple(PUBLISHED["000"][f"{nodes}, users {users}"] for users in USER_RANGES),
                     curve=FS_PATHS_000[op][0])

    return Experiment(
        seed=d.experiment, declaration=d, title="Lockless dentry reference counts (lockref), in the real kernel (full system)",
        change="dget_parent and dput update d_count with cmpxchg on the lock+count word instead of taking d_lock",
        base_name=base, new_name=new,
        published_setup="AIM7 short workload on ramdisk, 3.10 kernel, 8-socket 80-core x86-64 (HT off), restricted "
                        "to 1/2/4/8 nodes with numactl; jobs per minute",
        simulated_setup=f"Linux 6.12 booted on the simulated {d.size_text()} (docs/fs.md), one thread per CPU, on "
                        "one hot dentry" + (" two ways: " if len(paths) == 2 else ": ")
                        + ", and ".join(FS_PATHS_000[op][2] for op in paths) + "; "
                        f"{base} ({variant(base).about}) against {new} (6.12's lockref, its d_lock the qspinlock); "
                        f"{_measure(d)}",
        differences=f"{d.cores_per_socket} cores per socket, not 10; threads, not AIM7's processes (each with its own "
                    "descriptor table, as processes have); 6.12's kernel and qspinlock, not 3.10's and its ticket "
                    "lock; the directory watch stands for whichever 3.10 caller of dget_parent AIM7 hit (the seed does "
                    "not say); the 2-node baseline the author calls abnormal is reported, not judged",
        points=tuple(point(op, n) for op in paths for n in d.sockets))


NO_INTRUDER = "without the listings"   # a collapse series' control: the same kernel, nobody lists the directory


def e004collapse_fs(d: Declaration) -> Experiment:
    base, new = d.kernels
    n, period, listings = d.sockets[0], d.intruder_period_us, d.intruder_listings

    def run(kernel: str, intruder: bool) -> RunSpec:
        """Both arms have the lister on the last CPU. The control's lister runs and never lists (idle_control), or,
        in the earlier versions, its first listing is due after the window: it waits there, as the other arm's
        does after its last listing, but may list once after the window, before the workload stops it."""
        spec = on_machine(d, full_system(d, kernel, n, d.cores_per_socket))
        extra = spec.extra + ("--intruder-listings", str(listings))
        if intruder or d.idle_control:
            return replace(spec, intruder_period_us=period,
                           extra=extra + (() if intruder else ("--idle-intruder",)))
        return replace(spec, intruder_period_us=d.warmup_us + d.window_us + period, extra=extra)

    first, last = period - d.warmup_us, period * listings - d.warmup_us
    return Experiment(
        seed="004-collapse-fs", declaration=d,
        title="lockref's collapse to locked-only after a few listings of the directory, in the real kernel (full system)",
        change="lockref waits for a transient lock holder in its cmpxchg loop instead of taking the lock itself",
        base_name=base, new_name=new,
        published_setup="will-it-scale stat2 (20-way stat(2) of one tmpfs file), Sapphire Rapids, 'ls /tmp' a few "
                        "times; ops per second, reported once a second",
        simulated_setup=f"Linux 6.12 booted on the simulated {d.size_text()} (docs/fs.md): every CPU but the last "
                        "runs a thread calling stat(2) on /tmp/cohtb-stat.<pid> (tmpfs); the last lists /tmp "
                        f"(getdents64: tmpfs's offset_readdir takes the file dentry's d_lock for a dget, and puts it) "
                        f"{listings} times, every {period} µs, {first} to {last} µs into the window; {base} "
                        f"(lockref's 100 cmpxchg tries, then the lock) against {new} ({variant(new).about}), each "
                        "also with a lister that " + ("runs and never lists (--idle-intruder)" if d.idle_control else
                                                      "is due to list first after the window (it may list once "
                                                      "after the window, before the workload stops it)") +
                        f" as the control; ops per {d.interval_us} µs over a "
                        f"{d.window_us} µs window after {d.warmup_us} µs of warm-up, {d.repetitions} repetitions "
                        f"({' and '.join(d.repetition_sources)} varied)",
        differences="simulated milliseconds, not seconds or minutes: the published collapse came within seconds to "
                    "minutes and was read from once-a-second reports, so here 'lasting' can only mean the window's "
                    "last quarter, after the last listing; the published 'ls' is a process (fork, exec, the "
                    "listing, its output), the simulated one the listing alone from a thread already running; the "
                    f"wait is the project's patch ({variant(new).about}); a TimingSimpleCPU and a tinyconfig kernel "
                    "as in the layout experiment",
        points=(),
        series=(Series("collapse after a few listings", (run(base, True), run(new, True), run(base, False), run(new, False)),
                       (PUBLISHED["004"]["retry100: expected performance -> everyone degraded"],),
                       event_at_us=first, labels=(base, new, f"{base} {NO_INTRUDER}", f"{new} {NO_INTRUDER}"),
                       event="the first listing", event_count=listings,
                       controls=((base, f"{base} {NO_INTRUDER}"), (new, f"{new} {NO_INTRUDER}"))),))


def machine_check(build):
    """An experiment that stands beside another seed experiment's declaration on the other machine, the same in
    everything else (Declaration.stands_beside): the machine's effect alone."""
    def built(d: Declaration) -> Experiment:
        e = build(d)
        return replace(e, title=f"{e.title}, on the other machine than {d.stands_beside} (a machine check)")
    return built


def on_out_of_order_cores(build):
    """An experiment recorded on a machine with out-of-order cores, its own declaration (not a machine check: it
    records a part of the other's points)."""
    def built(d: Declaration) -> Experiment:
        e = build(d)
        return replace(e, title=f"{e.title}, on out-of-order cores")
    return built


# Each seed's SE experiment, then its full-system ones beside it, then the machine checks and the other cores.
BUILDERS = {"000": e000, "000-fs": e000fs, "001": e001, "002": e002, "002-fs": e002fs,
            "002-kernel-fs": lambda d: e002fs(d, "kernel_rwsem"), "003": e003, "004": e004, "004-fs": e004fs,
            "004-collapse-fs": e004collapse_fs, "002-flat": machine_check(e002), "004-fs-8x4": machine_check(e004fs),
            "004-fs-o3": machine_check(e004fs), "000-fs-o3": on_out_of_order_cores(e000fs)}

class _BuiltOnFirstUse(Mapping):
    """seed -> what `build` makes of it, in BUILDERS' order, each built when first asked for: a command about one
    seed reads that seed's declarations alone."""

    def __init__(self, build):
        self._build, self._built = build, {}

    def __getitem__(self, seed: str):
        if seed not in BUILDERS:
            raise KeyError(seed)
        if seed not in self._built:
            self._built[seed] = self._build(seed)
        return self._built[seed]

    def __contains__(self, seed) -> bool:   # without building it
        return seed in BUILDERS

    def __setitem__(self, seed: str, value) -> None:   # a test's stand-in for a seed (monkeypatch.setitem)
        if seed not in BUILDERS:
            raise KeyError(seed)
        self._built[seed] = value

    def __delitem__(self, seed: str) -> None:   # built again when next asked for
        self._built.pop(seed, None)

    def __iter__(self):
        return iter(BUILDERS)

    def __len__(self) -> int:
        return len(BUILDERS)


# Every version of every experiment, oldest first: the runs of each are judged by its own declaration.
HISTORY = _BuiltOnFirstUse(lambda seed: tuple(BUILDERS[seed](d) for d in declarations.versions(seed)))
# The experiments new runs are recorded under: the newest declaration of each.
EXPERIMENTS = _BuiltOnFirstUse(lambda seed: HISTORY[seed][-1])
