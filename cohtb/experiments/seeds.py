"""One experiment per seed (a patch's public message: published.json cites each): what the patch changed, the
published figures, and the gem5 runs that mirror the published setup as far as the simulator allows.

Published figures are kept as data with the lines of the message they are printed on (published.py); nothing here
is tuned to approach them. Every simulated configuration is repeated with REPETITIONS start perturbations
(RunSpec.seed 1..REPETITIONS: per-thread start skew), so a comparison carries its spread."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from cohtb.experiments.published import PUBLISHED, Published
from cohtb.sim.plans import RunSpec

REPETITIONS = 3

# will-it-scale's measurement, scaled to simulated time: a warm-up in which every thread has done tens of
# operations, then a window of 20 intervals.
WARMUP_US = 50
WINDOW_US = 200
INTERVAL_US = 10
# Start perturbation: thread i waits a seeded-random 0..SKEW_NS before its first op. The workloads' default (1 µs)
# left 8x4 runs identical op for op; 20 µs, well inside the warm-up, does not.
SKEW_NS = 20_000


@dataclass(frozen=True)
class Point:
    """One configuration compared: base and new runs (the seed-0 templates) and what was published."""

    label: str
    base: RunSpec
    new: RunSpec
    published: tuple[Published, ...]


@dataclass(frozen=True)
class Series:
    """A time-series experiment (seed 004's collapse): runs whose ops per interval are the result."""

    label: str
    runs: tuple[RunSpec, ...]
    published: tuple[Published, ...]
    event_at_us: float   # when the disturbance starts, µs into the window


@dataclass(frozen=True)
class Experiment:
    seed: str
    title: str
    change: str                 # what the patch changes, in one line
    base_name: str
    new_name: str
    published_setup: str
    simulated_setup: str
    differences: str            # what the simulation leaves out or changes, and why it matters
    points: tuple[Point, ...]
    series: tuple[Series, ...] = field(default_factory=tuple)

    def specs(self) -> list[RunSpec]:
        """Every run of the experiment: each point's base and new, and each series run, REPETITIONS times."""
        templates = [s for p in self.points for s in (p.base, p.new)] + [s for x in self.series for s in x.runs]
        return [replace(t, seed=k) for t in dict.fromkeys(templates) for k in range(1, REPETITIONS + 1)]


def timed(workload: str, policy: str, layout: str, sockets: int, cores: int = 4, *, window_us: int = WINDOW_US,
          interval_us: int = INTERVAL_US, extra: tuple[str, ...] = (), intruder_period_us: int = 0,
          intruder_hold_ns: int | None = None) -> RunSpec:
    return RunSpec(workload, policy, layout, sockets, cores, intruder_period_us=intruder_period_us,
                   intruder_hold_ns=intruder_hold_ns, extra=extra, warmup_us=WARMUP_US, window_us=window_us,
                   interval_us=interval_us, skew_ns=SKEW_NS)


USER_RANGES = ("10-100", "200-1000", "1100-2000")   # seed 000's table: one row per node count and range of users

TICKET = ("--spinlock", "ticket")   # 3.10's x86 spinlock, which d_lock and the lockref word were


def _000_point(label: str, sockets: int, extra: tuple[str, ...]) -> Point:
    nodes = f"{sockets} node{'s' if sockets > 1 else ''}"
    return Point(label, timed("open_close", "locked", "shared", sockets, extra=extra),
                 timed("open_close", "cmpxchg", "shared", sockets, extra=extra),
                 tuple(PUBLISHED["000"][f"{nodes}, users {users}"] for users in USER_RANGES))


E000 = Experiment(
    seed="000", title="Lockless dentry reference counts (lockref, 2013)",
    change="dget_parent and dput update d_count with cmpxchg on the lock+count word instead of taking d_lock",
    base_name="spinlock", new_name="lockref",
    published_setup="AIM7 short workload on ramdisk, 3.10 kernel, 8-socket 80-core x86-64 (HT off), restricted "
                    "to 1/2/4/8 nodes with numactl; jobs per minute",
    simulated_setup="open_close: every thread opens and closes its own file in one shared directory; each open "
                    "and close runs dget_parent + dput on the directory (fsnotify_parent). 1/2/4/8 sockets x 4 "
                    "cores, one thread per core; d_lock is 3.10's x86 ticket lock, and lockref's cmpxchg runs while "
                    "its head equals its tail; ops/s in a 200 µs window after 50 µs of warm-up. A control at 8 "
                    "sockets swaps the ticket lock for a test-and-test-and-set lock (today's uncontended shape)",
    differences="4 cores per socket, not 10; threads, not 10-2000 AIM7 processes; only the dentry path of "
                "open/close is simulated (no syscall entry, no file table, no AIM7 job mix), so the contended "
                "line is a larger share of each operation than in AIM7; "
                "which 3.10 caller of dget_parent AIM7 hit is not in the seed (see docs/workloads.md); the author "
                "calls the 2-node baseline abnormal (without lockref it still gains 79-96%), so the published "
                "2-node ratios are inflated. The lock matters: a ticket lock hands the lock over in arrival "
                "order, across sockets, while test-and-test-and-set lets a core on the holder's socket win it, "
                "unfair but keeping the lock's line on one socket; the control point shows what the spinlock "
                "baseline does with the latter",
    points=tuple(_000_point(f"{n} socket{'s' if n > 1 else ''}", n, TICKET) for n in (8, 4, 2, 1))
    + (_000_point("8 sockets, test-and-set lock (control)", 8, ()),),
)

E001 = Experiment(
    seed="001", title="List batching for the superblock's inode list (2016)",
    change="a thread that finds the list lock taken queues its add/delete; the lock holder performs the queue",
    base_name="spinlock", new_name="batched",
    published_setup="exit microbenchmark, 1000 threads with many inodes, 4-socket E7-4820 v3 (48 cores), 4.4 "
                    "kernel; elapsed seconds",
    simulated_setup="list_batch: every thread adds and deletes its own node on one list; 4 sockets x 4 cores; "
                    "ops/s in the window (the inverse of elapsed time for a fixed amount of work)",
    differences="16 threads, not 1000; the list operations alone, not thread exit; elapsed time compared as "
                "its inverse (throughput)",
    points=(Point("4 sockets", timed("list_batch", "locked", "shared", 4), timed("list_batch", "batched", "shared", 4),
                  (PUBLISHED["001"]["4-socket, 1000 threads, elapsed"],)),),
)

E002 = Experiment(
    seed="002", title="Reader optimistic spinning on a writer-owned rwsem (2016)",
    change="a reader that finds the rwsem writer-owned spins while the writer runs instead of sleeping",
    base_name="sleep", new_name="spin",
    published_setup="rwsem microbenchmark, 1:1 readers:writers, short critical section, 36 threads, 2-socket "
                    "E5-2699 v3; locking rate with 2 vs 5 patches applied (patch 3 moves macros, patch 4 changes "
                    "RWSEM_WAITING_BIAS for the reader trylock, patch 5 enables reader spinning)",
    simulated_setup="rwsem: even threads read, odd threads write, short critical section; 2 sockets x 4 cores",
    differences="8 threads, not 36; sleeping is a futex wait in gem5's syscall emulation, whose wake-up latency "
                "is not a kernel's; the critical section is short, as in the microbenchmark (the same table shows "
                "patch 5 cutting 36-thread fio, a long critical section, from 789 to 281 MB/s, which is not simulated)",
    points=(Point("2 sockets", timed("rwsem", "sleep", "shared", 2), timed("rwsem", "spin", "shared", 2),
                  (PUBLISHED["002"]["36 threads, locking rate"],)),),
)

E003 = Experiment(
    seed="003", title="Per-CPU statistics counters in ext4's extent cache (2016)",
    change="es_stats_cache_hits/misses become percpu counters instead of shared increments",
    base_name="shared", new_name="percpu",
    published_setup="38-thread fio on DAX ext4 (NVDIMM), 4-socket Haswell-EX, 4.6-rc1; aggregate bandwidth",
    simulated_setup="stat_counter: every thread increments a shared counter, or its own counter with the patch's "
                    "batch (1 << 30: in effect never folded); 4 sockets x 4 cores",
    differences="the counter alone, not the I/O path around it: in fio the counter is a small share of each "
                "I/O, so the published gain is a few percent while the simulated one is the counter's own",
    points=(Point("4 sockets", timed("stat_counter", "shared", "padded", 4),
                  timed("stat_counter", "percpu", "padded", 4, extra=("--batch", str(1 << 30))),
                  tuple(PUBLISHED["003"].values())),),
)

COLLAPSE_PERIOD_US = 100   # the intruder's one hold is 50 µs into the window (warm-up 50 µs)
COLLAPSE_HOLD_NS = 2000
COLLAPSE_POLICIES = ("retry100", "trywait", "unified", "locked")   # locked: the locked-only level itself
E004 = Experiment(
    seed="004", title="d_lockref out of the RCU-lookup lines, and lockref's collapse to locked-only (2024)",
    change="6.11 moves d_lockref to its own cache line; the lockref fixes wait for a transient lock holder "
           "instead of taking the lock",
    base_name="shared", new_name="split",
    published_setup="will-it-scale stat2 (20-way stat(2) of one tmpfs file), Sapphire Rapids; ops/s",
    simulated_setup="stat_path: stat(2) of /tmp/willitscale.XXXXXX through the 6.12 RCU walk, getattr and dput, "
                    "dentries laid out as before (shared) and after (split) the reorder, retry100 (mainline "
                    "lockref) in both; 8 sockets x 4 cores. Collapse: split, one transient holder takes the file's "
                    "d_lock once for 2 µs, 50 µs into a 400 µs window; retry100 against the two waiting policies, "
                    "and the locked policy for reference",
    differences="32 threads on 8 sockets, not 20 threads on one Sapphire Rapids machine; no syscall entry/exit "
                "(a large part of each real stat), so the contended lines weigh more per operation; the published "
                "'after' also had patch 1/2 (wait for unlock, 256 polls), while the simulation changes only the "
                "layout; the published 'after' varied from 7.8 to 9 million ops/s between runs; the transient "
                "holder is an abstraction of whatever took the lock (the seed does not know what did). Why the layout "
                "pair can come out even here: with 32 threads on 8 sockets every get and put moves the count word's "
                "line across sockets in both layouts, and those transfers bound the throughput; splitting the line "
                "removes the lookup's dirty reads of it (the attribution below shows them going to zero) but not the "
                "transfers, while on one Sapphire Rapids socket a transfer is cheap and the removed reads weigh more. "
                "The full-system runs of the real kernel (docs/fs.md) are the check on this",
    points=(Point("8 sockets", timed("stat_path", "retry100", "shared", 8), timed("stat_path", "retry100", "split", 8),
                  (PUBLISHED["004"]["20-way stat, tmpfs"],)),),
    series=(Series("collapse", tuple(timed("stat_path", p, "split", 8, window_us=400, interval_us=20,
                                           intruder_period_us=COLLAPSE_PERIOD_US, intruder_hold_ns=COLLAPSE_HOLD_NS,
                                           extra=("--intruder-holds", "1"))
                                     for p in COLLAPSE_POLICIES),
                   (PUBLISHED["004"]["retry100: expected performance -> everyone degraded"],),
                   event_at_us=COLLAPSE_PERIOD_US - WARMUP_US),),
)

# The real kernel (docs/fs.md): a guest restored from its boot checkpoint starts with empty caches, so
# its warm-up is longer; a stat(2) takes tens of simulated µs, so the intervals are too.
FS_WARMUP_US, FS_WINDOW_US, FS_INTERVAL_US = 500, 2000, 100


def full_system(kernel_variant: str, sockets: int, cores: int = 4, op: str = "stat",
                dentry_line_offset: int | None = None) -> RunSpec:
    """dentry_line_offset: where in its cache line the file's dentry starts (stat_file --dentry-line-offset);
    None: where the allocator puts it."""
    from cohtb.fs.kernel import FS_WORKLOAD, variant

    v = variant(kernel_variant)
    extra = ("--op", op) + (("--dentry-line-offset", str(dentry_line_offset)) if dentry_line_offset is not None else ())
    return RunSpec(FS_WORKLOAD, v.policy, v.layout, sockets, cores, extra=extra, warmup_us=FS_WARMUP_US,
                   window_us=FS_WINDOW_US, interval_us=FS_INTERVAL_US, skew_ns=SKEW_NS, kernel=kernel_variant)


E004FS = Experiment(
    seed="004-fs", title="d_lockref out of the RCU-lookup lines, in the real kernel (full system)",
    change=E004.change.split(";")[0],
    base_name="pre611", new_name="stock-6.12",
    published_setup=E004.published_setup,
    simulated_setup="Linux 6.12 booted on the simulated 8 sockets x 4 cores (docs/fs.md): every CPU runs a thread "
                    "calling stat(2) on /tmp/cohtb-stat.<pid> (tmpfs) through the real syscall, RCU walk, getattr "
                    "and dput; the kernel as shipped (stock-6.12: d_lockref at offset 128) against the same kernel "
                    "with the 6.10 dentry (pre611: d_lockref at 88, on the line with the name's tail when the dentry "
                    "starts a line; the guest places it there, or leaves it where its allocator puts it); ops/s in a "
                    f"{FS_WINDOW_US} µs window after {FS_WARMUP_US} µs of warm-up",
    differences="32 threads on 8 sockets, not 20 on one Sapphire Rapids machine; a TimingSimpleCPU (one "
                "instruction at a time, no out-of-order overlap of misses) and gem5's x86 full system; the kernel is "
                "a tinyconfig build (no LSM, no audit) with 6.12's qspinlock, but SLUB and -O2 as a distribution "
                "builds them; the published 'after' also had patch "
                "1/2 (wait for unlock), while the simulation changes only the layout; the real kernel shares other "
                "lines between the CPUs too (scheduler, timers, the per-mount and per-superblock state), which the "
                "attribution shows beside the dentry's",
    # A 184-byte dentry (pre611) starts at any 8-byte offset of a line, and which fields share d_lockref's line
    # depends on it; a 192-byte one (stock-6.12) always starts a line. The first point puts the pre611 dentry at
    # a line start, as pahole draws it and the seed describes (the inline name's tail, d_op, d_sb, d_time and
    # d_fsdata on d_lockref's line), and stock-6.12's the same way (it is there anyway: the pads are the
    # control); the second leaves both where the guest's allocator puts them. docs/fs.md has the other offsets.
    points=(Point("8 sockets, the dentry at a line start (as pahole draws it)",
                  full_system("pre611", 8, dentry_line_offset=0), full_system("stock-6.12", 8, dentry_line_offset=0),
                  E004.points[0].published),
            Point("8 sockets, the dentry where the allocator put it",
                  full_system("pre611", 8), full_system("stock-6.12", 8), E004.points[0].published)),
)

EXPERIMENTS = {e.seed: e for e in (E000, E001, E002, E003, E004, E004FS)}
