"""Sets of runs to launch: the named plans (`cohtb launch --matrix`, `cohtb run`) and one-off runs built from the
command line's options. A measurement parameter a one-off run is not given comes from the declaration of the seed
its workload stands for, so that a one-off run and a declared one measure alike; the command line holds none."""

from __future__ import annotations

from dataclasses import replace

from cohtb.errors import CohtbError
from cohtb.experiments import declarations
from cohtb.experiments.declarations import Declaration
from cohtb.experiments.seeds import EXPERIMENTS, full_system
from cohtb.run.machines import core_of, hierarchy_of, known, shape_problem
from cohtb.run.spec import RunSpec

FS_SEED = "004-fs"     # the full-system experiment: one-off full-system runs measure as it declares
SE_SEED = "000"        # the experiment whose measurement a workload no seed experiment runs takes


def lockref_plan(sockets: int, cores_per_socket: int, ops: int, policies: tuple[str, ...], layouts: tuple[str, ...],
                 intruder: bool) -> list[RunSpec]:
    specs = [RunSpec("lockref", p, l, sockets, cores_per_socket, ops) for p in policies for l in layouts]
    if intruder:
        # Seed 004: a transient lock holder degrades retry100 to locked-only; the 2024 rework recovers.
        specs += [RunSpec("lockref", p, "split", sockets, cores_per_socket, ops, intruder_period_us=2, intruder_hold_ns=500)
                  for p in ("retry100", "unified")]
    return specs


def on(machine: str) -> dict:
    """A machine check's run fields: the machine, and its core model (an SE run's --cpu must be its machine's)."""
    return {"machine": machine, "cpu": core_of(machine)}


def calibration_plan(machine: str) -> list[RunSpec]:
    """The calibration benchmark (workloads/cclat.c) on the seeds' 8x4 machine wired as a glueless 8-socket box:
    the owner on core 0, a sharer beside it, the target on its socket, one hop and two hops away; lines homed on
    the owner's socket. Untraced: cclat times itself, and a trace of its barriers is hundreds of MB a run."""
    return [RunSpec("cclat", "all", "all", 8, 4, 50, topology="glueless-8s", traced=False, **on(machine),
                    extra=("--target", str(t), "--sharer", "1", "--interleave", "8", "--home", "0"))
            for t in (2, 4, 16)]


# The mesh check's placements: 4 cores on tiles 0, 16, 32 and 48 of an 8 x 8 mesh (the spread of 4 cores over 64
# tiles), the owner on core 0, the target on core 3 and the sharer on core 1; the lines' slice (--interleave 64
# --home H) at tiles 8, 36 and 63, so each kind of cell is measured at three hop counts.
MESH_HOMES = (8, 36, 63)
MESH_CELLS = (("cas", "M"), ("load", "S"), ("load", "I"))


def mesh_calibration_plan(machine: str) -> list[RunSpec]:
    """The calibration check of a mesh machine (docs/machine.md, "Calibration of a mesh part"): cclat's three kinds
    of cell (a compare-and-exchange on a line another core holds modified, a load the last level serves, a load from
    memory) with the line's slice at three distances, 50 lines each; and the chase's ticks per load at an L1- and an
    L2-resident footprint on one core. Untraced: both benchmarks time themselves."""
    placement = ("--owner", "0", "--target", "3", "--sharer", "1", "--interleave", "64")
    cells = [RunSpec("cclat", op, state, 1, 4, 50, traced=False, **on(machine),
                     extra=(*placement, "--home", str(home)))
             for op, state in MESH_CELLS for home in MESH_HOMES]
    chases = [RunSpec("chase", "random", "line", 1, 1, warmup_us=warmup, window_us=window, interval_us=window,
                      traced=False, **on(machine), extra=("--kib", str(kib)))
              for kib, warmup, window in ((32, 20, 20), (512, 300, 50))]
    return cells + chases


def atomicity_plan(machine: str) -> list[RunSpec]:
    """The locked-instruction check (workloads/atomicity.c): every core increments one count with lock xadd, a lock
    cmpxchg loop, an xchg lock and a ticket lock, on 1x4, 2x4 and 8x4; a lost increment or a ticket handed out
    twice is a locked RMW the machine broke. Untraced: the count is the result."""
    return [RunSpec("atomicity", p, "line", sockets, 4, ops, traced=False, **on(machine))
            for sockets, ops in ((1, 2000), (2, 2000), (8, 3000)) if sockets in sockets_of(machine)
            for p in ("xadd", "cmpxchg", "xchg", "ticket")]


def handoff_plan(machine: str) -> list[RunSpec]:
    """The locked-instruction check's 2x4 xchg and xadd runs again, traced: how many times the count's line moves
    per increment (the monitor's transfers), so a run's time splits into transfers per increment and time per
    transfer (docs/machine.md, open question 7)."""
    return [replace(s, traced=True) for s in atomicity_plan(machine) if s.sockets == 2 and s.policy in ("xadd", "xchg")]


# The contention benchmark's sizes: threads on one socket, then 4 per socket on 2 to 8 sockets.
CONTENTION_SIZES = ((1, 2), (1, 4), (1, 8), (1, 16), (2, 4), (4, 4), (8, 4))


def contention_plan(machine: str) -> list[RunSpec]:
    """The contention benchmark (workloads/contention.c): every thread updates one line by lock xadd, a load + lock
    cmpxchg loop, a ticket lock or a queued spinlock, at each size of CONTENTION_SIZES, timed as the SE seeds are
    (seed 000's declaration) and traced, so each run's transfers per update sit beside its throughput."""
    return [RunSpec("contention", p, "line", sockets, cores, **on(machine),
                    **_measure(declarations.current(SE_SEED), None, None, None, None))
            for sockets, cores in CONTENTION_SIZES if sockets in sockets_of(machine)
            for p in ("xadd", "cmpxchg", "ticket", "qspinlock")]


def sockets_of(machine: str) -> tuple[int, ...]:
    """The socket counts a machine can be built with (the mesh machine: one)."""
    return tuple(n for n in (1, 2, 4, 8) if not shape_problem(machine, n))


def seeds_plan(*seeds: str) -> list[RunSpec]:
    """The runs of the seed experiments (cohtb/experiments/seeds.py), all or the ones named."""
    return [s for k, e in EXPERIMENTS.items() if not seeds or k in seeds for s in e.specs()]


PLANS = {
    # What the main job shows: every seed's SE experiment as declared (the full-system one needs the kernel source
    # and its boots: `seed004-fs`, or `cohtb seeds --seed 004-fs --launch`).
    "default": lambda: [s for s in seeds_plan() if not s.kernel],
    **{f"seed{k}": (lambda k=k: seeds_plan(k)) for k in EXPERIMENTS},
    # The earlier fixed-work lockref matrix (60 get+put pairs per thread), 2x4 to 8x4.
    "lockref-ops60": lambda: (lockref_plan(8, 4, 60, ("locked", "cmpxchg", "retry100", "unified"), ("shared", "split"), True)
                              + [s for n in (2, 4) for s in lockref_plan(n, 4, 60, ("locked", "retry100"), ("shared", "split"), False)]),
    # What a spin-wait poll costs in gem5 (PAUSE is a no-op there): 100-poll waits with and without PAUSE, 1x2.
    "pause": lambda: [RunSpec("pause", p, "private", 1, 2, warmup_us=20, window_us=100, interval_us=10)
                      for p in ("pause", "plain")],
    # The calibration benchmark on the flat machine, and on every other machine (calibration-<machine>).
    "calibration": lambda: calibration_plan("flat"),
    # A mesh machine's is its own: cells at known mesh distances and the chase per level (mesh_calibration_plan).
    **{f"calibration-{m}": (lambda m=m: mesh_calibration_plan(m) if hierarchy_of(m) == "mesh" else calibration_plan(m))
       for m in known() if m != "flat"},
    # The locked-instruction check on every CHI machine (the flat one's protocol blocks a snooped line itself).
    **{f"atomicity-{m}": (lambda m=m: atomicity_plan(m)) for m in known() if hierarchy_of(m) != "flat"},
    # The same runs traced on every socket machine: line moves per increment (docs/machine.md, question 7).
    **{f"handoff-{m}": (lambda m=m: handoff_plan(m)) for m in known() if hierarchy_of(m) == "socket"},
    # One line under contention on every machine (docs/machine.md): throughput and transfers per update by size.
    **{f"contention-{m}": (lambda m=m: contention_plan(m)) for m in known()},
    # A quick check of the whole path.
    "smoke": lambda: lockref_plan(2, 2, 100, ("locked", "cmpxchg"), ("shared",), False),
}


def plan(name: str) -> list[RunSpec]:
    if name not in PLANS:
        raise CohtbError(f"unknown run plan '{name}' (known: {', '.join(PLANS)})")
    return PLANS[name]()


def measuring(workload: str) -> Declaration:
    """The declaration whose measurement (warm-up, window, interval, skew) a one-off run of this workload takes:
    that of the seed experiment that runs it, else seed 000's."""
    for e in EXPERIMENTS.values():
        if any(s.workload == workload for s in e.specs()):
            return e.declaration
    return declarations.current(SE_SEED)


def _measure(d: Declaration, warmup_us: int | None, window_us: int | None, interval_us: int | None,
             skew_ns: int | None) -> dict:
    given = {"warmup_us": warmup_us, "window_us": window_us, "interval_us": interval_us, "skew_ns": skew_ns}
    return {k: getattr(d, k) if v is None else v for k, v in given.items()}


def workload_runs(workload: str, policies: list[str], layouts: list[str], sockets: int, cores_per_socket: int, *,
                  ops: int = 0, intruder_period_us: int = 0, cpu: str = "timing", seed: int = 0,
                  warmup_us: int | None = None, window_us: int | None = None, interval_us: int | None = None,
                  skew_ns: int | None = None) -> list[RunSpec]:
    """One-off SE runs: policy x layout. ops > 0: fixed work per thread; else a timed window measured as
    `measuring(workload)` declares, unless given."""
    timed = {} if ops else {"seed": seed, **_measure(measuring(workload), warmup_us, window_us, interval_us, skew_ns)}
    return [RunSpec(workload, p, l, sockets, cores_per_socket, ops, intruder_period_us, cpu=cpu, **timed)
            for p in policies for l in layouts]


def full_system_runs(kernels: list[str], sockets: int, cores_per_socket: int, seeds: list[int], op: str = "stat",
                     offsets: tuple[int | None, ...] = (None,), *, warmup_us: int | None = None,
                     window_us: int | None = None, interval_us: int | None = None,
                     skew_ns: int | None = None) -> list[RunSpec]:
    """One-off full-system runs: kernel x dentry line offset x seed, measured as seed 004-fs declares unless given.
    offsets: stat_file --dentry-line-offset (None: where the allocator puts the file's dentry)."""
    d = replace(declarations.current(FS_SEED), **_measure(declarations.current(FS_SEED), warmup_us, window_us,
                                                          interval_us, skew_ns))
    return [replace(full_system(d, k, sockets, cores_per_socket, op, offset), seed=seed)
            for k in kernels for offset in offsets for seed in seeds]
