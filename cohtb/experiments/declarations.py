"""What each seed experiment declared before its runs (seed_data/<seed>/<experiment>.toml, one [[version]] per change):
the machine, the lock model and why it is the seed era's, the windows, the repetitions and what varies between
them, the minimum effect that counts, the verdict rule and the magnitude prediction.

A run is judged only by the version it was recorded under. Runs recorded under a declared version carry its id
in their spec (RunSpec.declaration, so in their run id and manifest); runs recorded before declarations existed
belong to the `reconstructed` version that regenerates their ids. Declarations are data, read-only here."""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import dataclass, field, replace
from pathlib import Path

from cohtb.analysis.steady import last_quarter
from cohtb.data_file import STRICT, read_toml, validated
from cohtb.errors import CohtbError
from cohtb.experiments import seed_folders
from cohtb.run.machines import FILES as MACHINE_FILES, DeclaredMachine, declared_machines
from cohtb.tables import count


# What may vary between the repetitions of one configuration.
REPETITION_SOURCES = {
    "start skew": "thread i waits a seeded-random 0..skew_ns before its first operation (--seed k)",
    "home socket": "the home socket of every line (its L2 bank and directory) is rotated by a socket more in each "
                   "repetition after the skew-only ones",
    "placement": "the benchmark creates one more other file first in each repetition after the skew-only ones, so "
                 "the file's dentry sits in another slab slot",
}


def sockets_text(n: int) -> str:
    return count(n, "socket")


@dataclass(frozen=True)
class Declaration:
    __pydantic_config__ = STRICT   # read from its TOML by cohtb/data_file.py's rule
    experiment: str
    version: int
    machine: str
    lock: str
    lock_why: str
    sockets: tuple[int, ...]
    warmup_us: int
    window_us: int
    interval_us: int
    skew_ns: int
    repetitions: int
    repetition_sources: tuple[str, ...]
    min_effect: float            # a simulated |change| below this is no result
    rule: str                    # the point rule (cohtb/experiments/rules.py)
    magnitude: str               # "none", "dilution" or "direct" (cohtb/experiments/magnitude.py)
    reconstructed: bool = False  # written after its runs, from history, to say what they were recorded under
    recorded_in: str = ""        # reconstructed: the commit that bundled its runs
    rule_in: str = ""            # reconstructed: the commit whose rule it states, when not recorded_in's
    recorded_repetitions: int = 0   # reconstructed: how many repetitions were ever recorded, when fewer than declared
    skew_only_repetitions: int = 0  # the first N repetitions vary the start skew alone, the rest every source too
    layouts: tuple[str, ...] = ()  # SE: the base and new layouts compared, when not the experiment's first ones
    control_lock: str = ""       # a control point with another lock (not judged)
    control_sockets: tuple[int, ...] = ()
    control_judged: bool = False # whether the control point is held to the published figures
    collapse_rule: str = ""      # the series rule (seed 004)
    kernels: tuple[str, ...] = ()        # full system: base and new kernel variants
    kernel_note: str = ""
    kernel_labels: tuple[str, ...] = ()  # full system: what to call base and new when a name meant another build
    placements: tuple[str, ...] = ()     # full system: where the file's dentry is ("allocator", "line-start")
    sensitivity_offsets: tuple[int, ...] = ()   # full system: one run of the base kernel per dentry line offset
    intruder_period_us: int = 0  # full system: the intruder lists the file's directory every P µs (0: none)
    intruder_listings: int = 0   # full system: and stops after this many listings (0: lists to the end)
    idle_control: bool = False   # full system: the controls' lister runs and never lists (else its first listing
                                 # is due after the window, though it may come before the run ends)
    cores_per_socket: int = 4
    machine_why: str = ""        # why this machine, socket counts and cores per socket stand for the seed's
    magnitude_why: str = ""      # why this magnitude model stands for the seed (when it is not the seed's default)
    stands_beside: str = ""      # a machine check: the declaration (an id) this one differs from in the machine alone
    profile_functions: tuple[str, ...] = ()   # the functions whose published shares the base arm's profile is held to
    profile_band_points: float = 0.0         # ... within this many percentage points (cohtb/experiments/profile_band.py)
    profile_counterparts: tuple[tuple[str, tuple[str, ...]], ...] = ()   # a published function -> the guest's
                                 # functions that do its work (a TOML table; a function not named is itself)
    fs_paths: tuple[str, ...] = ()   # full system, seed 000: the paths recorded (default: every one)
    rejudges: int = 0            # a rule-only version: judges version N's runs again by its own rule (no new runs)
    declared: dict = field(default_factory=dict, compare=False, repr=False)   # the version's table as written

    def simulated_symbols(self, function: str) -> tuple[str, ...]:
        """The guest's functions whose time stands for a published function's (profile_counterparts): 3.10's ticket
        lock spun inside _raw_spin_lock, 6.12's qspinlock spins in queued_spin_lock_slowpath, which it calls."""
        return dict(self.profile_counterparts).get(function, (function,))

    @property
    def id(self) -> str:
        return f"{self.experiment}v{self.version}"

    @property
    def runs_id(self) -> str:
        """The declaration the runs judged under this one are recorded under: its own, or the version it rejudges."""
        return f"{self.experiment}v{self.rejudges or self.version}"

    @property
    def tagged(self) -> bool:
        """Runs recorded under a declared version carry its id (runs_id: a rule-only version's are the version's it
        rejudges); a reconstructed version's runs predate it."""
        return not self.reconstructed

    def digest(self) -> str:
        """A hash of what the version's table declares (not of defaults the code adds): the manifest records it
        beside the id, and a run is judged only while it still matches."""
        return hashlib.sha256(json.dumps(self.declared, sort_keys=True).encode()).hexdigest()[:16]

    def size_text(self) -> str:
        """The simulated machine's size as the pages say it: "8/4/2/1 sockets x 4 cores", "1 socket x 20 cores"."""
        return f"{'/'.join(map(str, self.sockets))} socket{'s' if self.sockets != (1,) else ''} x {count(self.cores_per_socket, 'core')}"

    def run_machine(self) -> str:
        """The machine the runs name (RunSpec.machine): the declared machine's hierarchy or machine file."""
        return simulated_machine(self.machine).run_machine

    def topology(self, sockets: int) -> str:
        """The wiring of the declared machine at this socket count ("": complete-<sockets>s)."""
        return simulated_machine(self.machine).topologies.get(sockets, "")

    def _beyond_skew(self, repetition: int) -> int:
        """How far repetition k moves the sources other than the start skew: 0 in the first
        skew_only_repetitions (so their spread is the start skew's alone), then 1, 2, ..."""
        return max(0, repetition - self.skew_only_repetitions) if self.skew_only_repetitions else repetition - 1

    def home_socket(self, sockets: int, repetition: int) -> int:
        """Repetition k's home-socket rotation, when the home socket is a declared source: 0 in the skew-only
        repetitions, then 1, 2, ... around the other sockets, never back to 0 (on one socket it cannot move)."""
        moved = self._beyond_skew(repetition)
        if "home socket" not in self.repetition_sources or not moved or sockets == 1:
            return 0
        return 1 + (moved - 1) % (sockets - 1)

    def placement(self, repetition: int) -> int:
        """Repetition k's dentry placement (after that many other files), when placement is a declared source."""
        return self._beyond_skew(repetition) if "placement" in self.repetition_sources else 0


def _declaration(path: Path, experiment: str, raw: dict) -> Declaration:
    where = f"{path}: version {raw.get('version', '?')}"
    counterparts = raw.get("profile_counterparts", {})
    if not (isinstance(counterparts, dict) and all(
            isinstance(v, list) and v and all(isinstance(x, str) for x in v) for v in counterparts.values())):
        raise CohtbError(f"{where}: field 'profile_counterparts' is not a table of function names to lists of them")
    stray = sorted(set(counterparts) - set(raw.get("profile_functions", ())))
    if stray:
        raise CohtbError(f"{where}: field 'profile_counterparts': '{stray[0]}' is not one of the profile_functions")
    values = {**raw, "experiment": experiment, "profile_counterparts": [[k, v] for k, v in counterparts.items()]}
    values.pop("declared", None)
    d = replace(validated(Declaration, values, where), declared={"experiment": experiment, **raw})
    bad = [s for s in d.repetition_sources if s not in REPETITION_SOURCES]
    if bad:
        raise CohtbError(f"{where}: field 'repetition_sources': unknown source '{bad[0]}'")
    if d.machine not in machines():
        raise CohtbError(f"{where}: field 'machine': unknown machine '{d.machine}' (no machine file declares it: "
                         f"declared_as in {MACHINE_FILES}/*.json)")
    if d.cores_per_socket < 1:
        raise CohtbError(f"{where}: field 'cores_per_socket' out of range")
    if d.repetitions < 1 or not 0 <= d.min_effect < 1:
        raise CohtbError(f"{where}: field 'repetitions' or 'min_effect' out of range")
    if not 0 < d.interval_us <= d.window_us:
        raise CohtbError(f"{where}: field 'interval_us' out of range (more than 0, at most the window)")
    if bool(d.profile_functions) != (d.profile_band_points > 0):
        raise CohtbError(f"{where}: field 'profile_band_points': a profile band names its functions and a width "
                         "above 0 points, or neither")
    if d.intruder_listings and not d.intruder_period_us:
        raise CohtbError(f"{where}: field 'intruder_listings' needs an 'intruder_period_us'")
    if d.intruder_period_us and d.intruder_period_us - d.warmup_us < d.interval_us:
        raise CohtbError(f"{where}: field 'intruder_period_us': the first listing must come at least one interval "
                         "into the window (the level before it is measured there)")
    late_from = last_quarter(list(range(0, d.window_us, d.interval_us)))[0]   # µs into the window
    if d.intruder_listings and d.intruder_period_us * d.intruder_listings - d.warmup_us >= late_from:
        raise CohtbError(f"{where}: field 'intruder_listings': the last listing must come before the window's last "
                         "quarter (what lasts is measured there)")
    return d


def simulated_machine(name: str) -> DeclaredMachine:
    found = declared_machines()
    if name not in found:
        raise CohtbError(f"machine '{name}': no machine file declares it (declared_as of {MACHINE_FILES}/*.json; "
                         f"declared: {', '.join(found)})")
    return found[name]


def machines() -> dict[str, str]:
    return {name: m.about for name, m in declared_machines().items()}


def versions(experiment: str) -> list[Declaration]:
    """Every version of an experiment's declaration, oldest first."""
    path = seed_folders.declaration_file(experiment)
    doc = read_toml(path)
    if doc.get("experiment") != experiment:
        raise CohtbError(f"{path}: field 'experiment' is {doc.get('experiment')!r}, not {experiment!r}")
    out = [_declaration(path, experiment, v) for v in doc.get("version", [])]
    if [d.version for d in out] != list(range(1, len(out) + 1)):
        raise CohtbError(f"{path}: field 'version': versions must be 1, 2, ... in order")
    for d in out:
        if d.rejudges:
            _check_rejudging(path, d, out)
        if d.stands_beside:
            _check_beside(path, d)
    return out


def _check_beside(path: Path, d: Declaration) -> None:
    """A machine check differs from the declaration it stands beside in the machine alone."""
    where = f"{path}: version {d.version}: field 'stands_beside'"
    other = by_id(d.stands_beside)
    if other.experiment == d.experiment:
        raise CohtbError(f"{where}: names a version of its own experiment")
    differ = [x for x in differences(other, d) if not x.startswith("machine:")]
    if differ:
        raise CohtbError(f"{where}: differs from {other.id} in more than the machine ({differ[0]})")


# what a rule-only version may change: the rule, and the band it holds the published figure to
RULE_FIELDS = {"version", "rejudges", "rule", "collapse_rule", "magnitude", "magnitude_why", "profile_functions",
               "profile_counterparts", "profile_band_points"}


def _check_rejudging(path: Path, d: Declaration, earlier: list[Declaration]) -> None:
    """A version that judges an earlier version's runs again declares those runs as they were: it may change
    the rule, nothing else, and the version it names must have its own runs."""
    where = f"{path}: version {d.version}: field 'rejudges'"
    if not 0 < d.rejudges < d.version or earlier[d.rejudges - 1].rejudges or earlier[d.rejudges - 1].reconstructed:
        raise CohtbError(f"{where}: must name an earlier declared version that has its own runs")
    src = earlier[d.rejudges - 1].declared
    differ = sorted(k for k in set(d.declared) | set(src) if k not in RULE_FIELDS and d.declared.get(k) != src.get(k))
    if differ:
        raise CohtbError(f"{where}: '{differ[0]}' differs from version {d.rejudges}'s (a version that judges its "
                         "runs again may change the rule only)")


# What a declaration says about itself, not about its runs or its rule: no difference between two declarations.
BOOKKEEPING = {"experiment", "version", "reconstructed", "recorded_in", "rule_in", "recorded_repetitions", "rejudges",
               "machine_why", "lock_why", "kernel_note", "magnitude_why", "stands_beside"}


def differences(a: Declaration, b: Declaration) -> list[str]:
    """Every field in which b differs from a, as "field: a's -> b's" (a field left out is its default; the
    reasons left out)."""
    keys = sorted(k for k in set(a.declared) | set(b.declared) if k not in BOOKKEEPING and getattr(a, k) != getattr(b, k))
    show = lambda v: "/".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)
    return [f"{k}: {show(getattr(a, k))} -> {show(getattr(b, k))}" for k in keys]


def runs_declaration(d: Declaration) -> Declaration:
    """The version whose runs `d` judges: itself, or the one it rejudges."""
    return by_id(d.runs_id) if d.rejudges else d


def current(experiment: str) -> Declaration:
    """The newest version: new runs are recorded under it (or, if it only rejudges, under the version it names)."""
    return versions(experiment)[-1]


def by_id(declaration_id: str) -> Declaration:
    experiment, _, version = declaration_id.rpartition("v")
    for d in versions(experiment):
        if str(d.version) == version:
            return d
    raise CohtbError(f"no declaration {declaration_id}")


def committed(experiment: str) -> str:
    """The commit that holds the experiment's declaration as it is on disk, or a CohtbError: a run may be recorded
    only under a declaration committed before it (declare, commit, then run)."""
    path = seed_folders.declaration_file(experiment)
    root = seed_folders.SEEDS.parent.parent.parent
    rel = path.relative_to(root)
    try:
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", str(rel)],
                               capture_output=True, text=True, check=True).stdout.strip()
        head = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%H", "--", str(rel)],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        raise CohtbError(f"{rel}: cannot tell whether the declaration is committed (no git checkout)") from None
    if dirty or not head:
        raise CohtbError(f"{rel}: the declaration has changes that are not committed; commit it before its runs")
    return head


def record(declaration_id: str) -> dict:
    """What a run recorded under a declaration keeps of it: the id, the digest of what it declares and the commit
    that holds it. Taken once, before a launch; a declaration with uncommitted changes is refused: declare,
    commit, then run."""
    d = by_id(declaration_id)
    return {"id": d.id, "digest": d.digest(), "commit": committed(d.experiment)}


def records_for(specs) -> dict[str, dict]:
    """The record of every declaration the runs are declared under (cohtb.launch.launch takes them)."""
    return {d: record(d) for d in sorted({s.declaration for s in specs if s.declaration})}
