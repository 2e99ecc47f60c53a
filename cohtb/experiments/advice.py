"""The seeds' layout advice (seed_data/<seed>/advice.toml): `cohtb advise`'s proposal from every kept run of one kernel
under a declaration, with the declared constraints, and its proof.

The proof is an arm of the same declaration whose runs hold the advised object with the proposed layout, field for
field (their layout maps, from the kernel's DWARF): the declaration's point then measures the proposal against
the advised arm, with its repetitions and spread, on the same machine and rules. No such arm: the proposal is not
proven (it needs a kernel variant of its patch and a declaration of the pair). Where the seed's own patch is
another arm (seed_patch), its measured change stands beside the proposal's."""

from __future__ import annotations

from dataclasses import dataclass, field

from cohtb.analysis.layout_proposal import Proposal, object_fields, proposals
from cohtb.analysis.metrics import RunMetrics
from cohtb.data_file import Record, read_toml, validated
from cohtb.errors import CohtbError
from cohtb.experiments import seed_folders
from cohtb.experiments.reproduce import PointResult, Ratio, Spread

class SeedAdvice(Record):
    seed: str
    declaration: str
    kernel: str
    object: str
    question: str
    together: tuple[tuple[str, ...], ...] = ()
    together_why: str = ""
    max_size: int | None = None
    max_size_why: str = ""
    seed_patch: str = ""


class _File(Record):
    advice: tuple[SeedAdvice, ...]


def declared() -> list[SeedAdvice]:
    """Every seed's declared advice, seed by seed (seed_data/<seed>/advice.toml)."""
    return [a for path in seed_folders.advice_files() for a in validated(_File, read_toml(path), path).advice]


@dataclass
class AdviceResult:
    advice: SeedAdvice
    runs: list[RunMetrics]                   # the advised arm's kept runs
    proposals: list[tuple[str, Proposal]]    # of those with a profile's hot lines: (run id, the object's proposal)
    unconstrained: Proposal | None           # the first one's, without the declared groups
    proof_kernel: str | None                 # the arm whose runs have the proposed layout
    proof: list[tuple[str, Ratio | None]]    # per point: proof arm over advised arm (None: repetitions missing)
    seed_patch: list[tuple[str, Ratio | None]]   # per point: the seed's own patch's arm over the advised arm
    others_kept: bool = True                 # some other arm of the declaration has kept runs to compare layouts
    unadvised: list[str] = field(default_factory=list)   # runs with a profile that gave no proposal, and why

    @property
    def agree(self) -> bool:
        """Every run gives the same proposed layout."""
        return len({_offsets(p.after) for _, p in self.proposals}) <= 1


def _offsets(layout) -> tuple | None:
    return None if layout is None else tuple((m.name, m.offset, m.size) for m in layout.members)


def _arm(p: PointResult, kernel: str) -> list[RunMetrics] | None:
    for side in (p.base, p.new):
        if side and side[0].spec.kernel == kernel:
            return side
    return None


def _change(p: PointResult, advised: str, other: str) -> Ratio | None:
    """other's throughput over advised's, once both have every repetition."""
    a, b = _arm(p, advised), _arm(p, other)
    if a is None or b is None or not p.complete:
        return None
    return Ratio.of(Spread(tuple(m.throughput for m in a)), Spread(tuple(m.throughput for m in b)))


def advise(a: SeedAdvice, points: list[PointResult], proposal: Proposal | None = None) -> AdviceResult:
    """The proposal from the advised arm's runs at the declaration's points (or the one given: `cohtb advise
    --prove`), and its proof at each point."""
    runs, found, unadvised = [], [], []
    for p in points:
        runs += _arm(p, a.kernel) or []
    for m in runs if proposal is None else ():
        if not (m.run.profile() or {}).get("lines"):
            continue
        try:
            mine = [x for x in proposals(m.run, a.max_size, a.together) if x.object == a.object]
        except CohtbError as e:   # its hot lines hold none of the objects, say
            unadvised.append(f"{m.run.id}: {e}")
            continue
        found += [(m.run.id, x) for x in mine]
    if proposal is not None:
        found = [("the run given", proposal)]
    unconstrained = None
    if found and proposal is None:
        first = next(m.run for m in runs if m.run.id == found[0][0])
        unconstrained = next((x for x in proposals(first, a.max_size) if x.object == a.object), None)
    proof_kernel, proof, patch, others_kept = None, [], [], False
    wanted = _offsets(found[0][1].after) if found and found[0][1].moved else None
    for p in points:
        for side in (p.base, p.new):
            if not side or side[0].spec.kernel == a.kernel:
                continue
            others_kept = True
            _, fields = object_fields(side[0].run, a.object)
            if wanted is not None and tuple((f["name"], f["offset"], f["size"]) for f in fields) == wanted:
                proof_kernel = side[0].spec.kernel
                proof.append((p.point.label, _change(p, a.kernel, proof_kernel)))
        if a.seed_patch:
            patch.append((p.point.label, _change(p, a.kernel, a.seed_patch)))
    return AdviceResult(a, runs, found, unconstrained, proof_kernel, proof, patch, others_kept, unadvised)
