"""Run specifications and the named run plans (sets of runs) that `cohtb launch --matrix` and `cohtb run` use."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from pydantic import NonNegativeInt, PositiveInt

from cohtb.sim.workloads import WORKLOADS


@dataclass(frozen=True)
class RunSpec:
    """What one run is. The constrained types are checked where a manifest is read (pydantic)."""

    workload: str
    policy: str
    layout: str
    sockets: PositiveInt
    cores_per_socket: PositiveInt
    ops: NonNegativeInt = 0              # fixed work per thread; 0: a timed window (the ones below)
    intruder_period_us: NonNegativeInt = 0
    intruder_hold_ns: NonNegativeInt | None = None   # None: the workload's own default
    cpu: str = "timing"
    extra: tuple[str, ...] = field(default_factory=tuple)
    # will-it-scale's measurement, in simulated microseconds: every thread runs a warm-up, then the window,
    # ops counted per interval. `seed` perturbs the start (per-thread skew); repetitions differ only in it.
    warmup_us: NonNegativeInt = 0
    window_us: NonNegativeInt = 0
    interval_us: NonNegativeInt = 0
    seed: NonNegativeInt = 0
    skew_ns: NonNegativeInt = 0          # largest start skew with a seed; 0: the workload's default
    # A full-system run: the guest kernel variant (cohtb/fs/kernel.py), whose lockref policy and dentry layout
    # are `policy` and `layout`; the workload is the guest benchmark (stat_file). "": an SE run.
    kernel: str = ""
    # Which socket is every line's home: line L's L2 bank and directory sit in socket (L + home_socket) mod S
    # (gem5-configs: --home-socket). A repetition source: the hot lines' home moves, the threads do not.
    home_socket: NonNegativeInt = 0
    # A full-system repetition source: the benchmark creates this many other files first, so the file's dentry
    # sits in another slab slot (stat_file --pad-files).
    placement: NonNegativeInt = 0
    # The declaration the run is recorded under (cohtb/experiments/declarations.py), e.g. "000v3"; "" for runs
    # recorded before declarations, and for runs outside the seed experiments.
    declaration: str = ""

    @property
    def cores(self) -> int:
        return self.sockets * self.cores_per_socket

    @property
    def threads(self) -> int:
        """One CPU per thread: the intruder, when there is one, takes the last CPU."""
        return self.cores - (1 if self.intruder_period_us else 0)

    @property
    def id(self) -> str:
        measure = f"ops{self.ops}" if self.ops else f"warm{self.warmup_us}-win{self.window_us}-int{self.interval_us}"
        parts = [self.workload, self.policy, self.layout, f"{self.sockets}x{self.cores_per_socket}", measure]
        if self.kernel:
            parts[:3] = ["fs", self.workload, self.kernel]
        if self.intruder_period_us:
            parts.append(f"intruder{self.intruder_period_us}us" + (f"{self.intruder_hold_ns}ns" if self.intruder_hold_ns else ""))
        if self.cpu != "timing":
            parts.append(self.cpu)
        if self.extra:
            parts.append(re.sub(r"[^A-Za-z0-9]+", "", "".join(self.extra)))
        if self.skew_ns:
            parts.append(f"skew{self.skew_ns}")
        if self.home_socket:
            parts.append(f"home{self.home_socket}")
        if self.placement:
            parts.append(f"place{self.placement}")
        if self.declaration:
            parts.append(f"d{self.declaration}")
        if self.seed:
            parts.append(f"s{self.seed}")
        return "-".join(parts)

    @property
    def repetition_of(self) -> str:
        """The id of the configuration, without what varies between its repetitions (the seed, the home socket,
        the dentry's placement)."""
        return RunSpec(**{**asdict(self), "seed": 0, "home_socket": 0, "placement": 0}).id

    @property
    def timed(self) -> bool:
        return self.ops == 0

    def machine_args(self) -> list[str]:
        """What the gem5 config takes beyond sockets, cores and CPU (gem5-configs/multisocket/machine.py)."""
        return ["--home-socket", str(self.home_socket)] if self.home_socket else []

    def workload_args(self) -> list[str]:
        args = ["--threads", str(self.threads), "--m5"]
        if not self.kernel:   # the guest benchmark has no policy or layout: the kernel is them
            args += ["--policy", self.policy, "--layout", self.layout]
        if self.ops:
            args += ["--ops", str(self.ops)]
        else:
            args += ["--warmup-us", str(self.warmup_us), "--window-us", str(self.window_us),
                     "--interval-us", str(self.interval_us), "--seed", str(self.seed)]
            if self.skew_ns:
                args += ["--skew-ns", str(self.skew_ns)]
        if self.intruder_period_us:
            args += ["--intruder-period-us", str(self.intruder_period_us)]
            if self.intruder_hold_ns is not None:
                args += ["--intruder-hold-ns", str(self.intruder_hold_ns)]
        if self.placement:
            args += ["--pad-files", str(self.placement)]
        return args + list(self.extra)

    def validate(self) -> None:
        from cohtb.errors import CohtbError

        if self.kernel:
            from cohtb.fs.kernel import FS_WORKLOAD, variant

            v = variant(self.kernel)
            if self.workload != FS_WORKLOAD or (self.policy, self.layout) != (v.policy, v.layout):
                raise CohtbError(f"run {self.id}: a full-system run is {FS_WORKLOAD} with its kernel's policy and layout "
                                 f"({v.policy}, {v.layout})")
            if self.intruder_period_us or self.ops:
                raise CohtbError(f"run {self.id}: a full-system run is timed and has no intruder")
            if self.home_socket:   # its boot checkpoint is of one machine; the placement moves its lines instead
                raise CohtbError(f"run {self.id}: a full-system run keeps every line's home (home_socket 0)")
        else:
            w = WORKLOADS.get(self.workload)
            if w is None:
                raise CohtbError(f"run {self.id}: unknown workload '{self.workload}'")
            if self.policy not in w.policies or self.layout not in w.layouts:
                raise CohtbError(f"run {self.id}: {self.workload} takes policies {w.policies} and layouts {w.layouts}")
        if self.sockets < 1 or self.sockets & (self.sockets - 1):
            raise CohtbError(f"run {self.id}: sockets must be a power of two (gem5 interleaves memory channels by address bits)")
        if self.placement and not self.kernel:
            raise CohtbError(f"run {self.id}: placement is the full-system benchmark's (stat_file --pad-files)")
        if self.home_socket >= self.sockets and self.home_socket:
            raise CohtbError(f"run {self.id}: home_socket must be under the number of sockets")
        if self.threads < 1:
            raise CohtbError(f"run {self.id}: no CPU left for a worker thread")
        if not self.ops and not (self.window_us and self.interval_us and self.window_us % self.interval_us == 0):
            raise CohtbError(f"run {self.id}: a timed run needs a window that is a whole number of intervals (or ops)")

    def to_json(self) -> dict:
        d = asdict(self)
        d["extra"] = list(self.extra)
        return d

    @staticmethod
    def from_json(d: dict) -> "RunSpec":
        return RunSpec(**{**d, "extra": tuple(d.get("extra", ()))})


def lockref_plan(sockets: int, cores_per_socket: int, ops: int, policies: tuple[str, ...], layouts: tuple[str, ...],
                   intruder: bool) -> list[RunSpec]:
    specs = [RunSpec("lockref", p, l, sockets, cores_per_socket, ops) for p in policies for l in layouts]
    if intruder:
        # Seed 004: a transient lock holder degrades retry100 to locked-only; the 2024 rework recovers.
        specs += [RunSpec("lockref", p, "split", sockets, cores_per_socket, ops, intruder_period_us=2, intruder_hold_ns=500)
                  for p in ("retry100", "unified")]
    return specs


def seeds_plan(*seeds: str) -> list[RunSpec]:
    """The runs of the seed experiments (cohtb/experiments/seeds.py), all or the ones named."""
    from cohtb.experiments.seeds import EXPERIMENTS

    return [s for k, e in EXPERIMENTS.items() if not seeds or k in seeds for s in e.specs()]


PLANS = {
    # What the main job shows: every seed's SE experiment, each configuration 3 times (the full-system one needs
    # the kernel source and its boots: `seed004-fs`, or `cohtb seeds --seed 004-fs --launch`).
    "default": lambda: [s for s in seeds_plan() if not s.kernel],
    **{f"seed{k}": (lambda k=k: seeds_plan(k)) for k in ("000", "001", "002", "003", "004", "004-fs")},
    # The earlier fixed-work lockref matrix (60 get+put pairs per thread), 2x4 to 8x4.
    "lockref-ops60": lambda: (lockref_plan(8, 4, 60, ("locked", "cmpxchg", "retry100", "unified"), ("shared", "split"), True)
                              + [s for n in (2, 4) for s in lockref_plan(n, 4, 60, ("locked", "retry100"), ("shared", "split"), False)]),
    # What a spin-wait poll costs in gem5 (PAUSE is a no-op there): 100-poll waits with and without PAUSE, 1x2.
    "pause": lambda: [RunSpec("pause", p, "private", 1, 2, warmup_us=20, window_us=100, interval_us=10)
                      for p in ("pause", "plain")],
    # A quick check of the whole path.
    "smoke": lambda: lockref_plan(2, 2, 100, ("locked", "cmpxchg"), ("shared",), False),
}
