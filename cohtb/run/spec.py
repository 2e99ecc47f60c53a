"""What one run is: a value, compared, hashed, written into its manifest and read back. Which workloads and kernels
exist is the runners' to check (cohtb/se/runner.py, cohtb/fs/runner.py); the spec knows one by name, the guest
benchmark, since its arguments and id leave out the policy and layout its kernel fixes."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from pydantic import NonNegativeInt, PositiveInt

from cohtb.errors import CohtbError
from cohtb.run.machines import known, shape_problem

# The full-system benchmark (workloads/stat_file.c) whose lockref policy and dentry layout are its kernel
# variant's, so a run of it gives neither; other workloads in the guest take theirs as in SE.
GUEST_BENCHMARK = "stat_file"


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
    # A full-system run: the guest kernel variant (cohtb/run/kernels.py); for the guest benchmark (stat_file) its
    # lockref policy and dentry layout are `policy` and `layout`. "": an SE run.
    kernel: str = ""
    # Which socket is every line's home: line L's L2 bank and directory sit in socket (L + home_socket) mod S
    # (gem5-configs: --home-socket). A repetition source: the hot lines' home moves, the threads do not.
    home_socket: NonNegativeInt = 0
    # Which socket pairs a link joins (gem5-configs/multisocket/topologies/<name>.json); "": every pair, one hop
    # (complete-<sockets>s, the first machine's wiring).
    topology: str = ""
    # A full-system repetition source: the benchmark creates this many other files first, so the file's dentry
    # sits in another slab slot (stat_file --pad-files).
    placement: NonNegativeInt = 0
    # The declaration the run is recorded under (cohtb/experiments/declarations.py), e.g. "000v3"; "" for runs
    # recorded before declarations, and for runs outside the seed experiments.
    declaration: str = ""
    # Whether gem5 writes its ProtocolTrace (and the monitor counts it). False only for a workload that measures
    # itself in the guest (cclat times each operation with rdtsc): a whole run of its barriers traced is hundreds of
    # MB and says nothing the workload's own numbers do not.
    traced: bool = True
    # The simulated machine (cohtb/run/machines.py): a hierarchy, "flat" (MESI_Two_Level, a line's only point of
    # coherence its home socket's L2 bank), "socket" (CHI: a shared cache per socket, a home directory of sockets) or
    # "mesh" (CHI, one socket: a private L2 per core, the last level sliced over a mesh), with its defaults; or a
    # machine file, a hierarchy with its parameters fixed.
    machine: str = "flat"

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
        if self.kernel:   # the guest benchmark's policy and layout are its kernel's; another workload's are its own
            parts[:3] = ["fs", self.workload, self.kernel] + ([] if self.workload == GUEST_BENCHMARK else parts[1:3])
        if self.intruder_period_us:
            parts.append(f"intruder{self.intruder_period_us}us" + (f"{self.intruder_hold_ns}ns" if self.intruder_hold_ns else ""))
        if self.cpu != "timing":
            parts.append(self.cpu)
        if self.extra:
            parts.append(re.sub(r"[^A-Za-z0-9]+", "", "".join(self.extra)))
        if self.skew_ns:
            parts.append(f"skew{self.skew_ns}")
        if self.topology:
            parts.append(f"topo{re.sub(r'[^A-Za-z0-9]+', '', self.topology)}")
        if self.home_socket:
            parts.append(f"home{self.home_socket}")
        if self.placement:
            parts.append(f"place{self.placement}")
        if self.machine != "flat":
            parts.append(f"{self.machine}machine")
        if not self.traced:
            parts.append("untraced")
        if self.declaration:
            parts.append(f"d{self.declaration}")
        if self.seed:
            parts.append(f"s{self.seed}")
        return "-".join(parts)

    @property
    def repetition_of(self) -> str:
        """The id of the configuration, without what varies between its repetitions (the seed, the home socket,
        the dentry's placement) and without the declaration it was recorded under (an experiment's points are
        configurations; which declaration's runs are compared is the caller's choice of runs)."""
        return RunSpec(**{**asdict(self), "seed": 0, "home_socket": 0, "placement": 0, "declaration": ""}).id

    @property
    def timed(self) -> bool:
        return self.ops == 0

    def machine_args(self) -> list[str]:
        """The machine, as both gem5 configs take it (gem5-configs/multisocket/machine.py)."""
        return [*(["--machine", self.machine] if self.machine != "flat" else []), "--sockets", str(self.sockets), "--cores-per-socket", str(self.cores_per_socket),
                *(["--home-socket", str(self.home_socket)] if self.home_socket else []),
                *(["--topology", self.topology] if self.topology else [])]

    def workload_args(self) -> list[str]:
        args = ["--threads", str(self.threads), "--m5"]
        if not (self.kernel and self.workload == GUEST_BENCHMARK):   # stat_file's policy and layout: the kernel's
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

    @property
    def kind(self) -> str:
        """Which runner records it: "fs" (a full-system run of a guest kernel) or "se" (a workload under SE)."""
        return "fs" if self.kernel else "se"

    def check(self) -> None:
        """What any run must be, whatever runs it; its runner checks the rest (runner.check)."""
        if self.sockets < 1 or self.sockets & (self.sockets - 1):
            raise CohtbError(f"run {self.id}: sockets must be a power of two (gem5 interleaves memory channels by address bits)")
        if self.machine not in known():
            raise CohtbError(f"run {self.id}: unknown machine '{self.machine}' (known: {', '.join(known())})")
        shape = shape_problem(self.machine, self.sockets)
        if shape:
            raise CohtbError(f"run {self.id}: machine {self.machine}: {shape}")
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
