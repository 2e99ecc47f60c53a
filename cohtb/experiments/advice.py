"""The seeds' layout advice (declared/advice.toml): `cohtb advise`'s proposal from every kept run of one kernel
under a declaration, with the declared constraints, and its proof.

The proof is an arm of the same declaration whose runs hold the advised object with the proposed layout, field for
field (their layout maps, from the kernel's DWARF): the declaration's point then measures the proposal against
the advised arm, with its repetitions and spread, on the same machine and rules. No such arm: the proposal is not
proven (it needs a kernel variant of its patch and a declaration of the pair). Where the seed's own patch is
another arm (seed_patch), its measured change stands beside the proposal's."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

from cohtb.analysis.layout_proposal import Proposal, object_fields, proposals
from cohtb.analysis.metrics import RunMetrics
from cohtb.errors import CohtbError
from cohtb.experiments.declarations import DECLARED
from cohtb.experiments.reproduce import PointResult, Ratio, Spread

ADVICE_FILE = DECLARED / "advice.toml"


@dataclass(frozen=True)
class SeedAdvice:
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


def declared() -> list[SeedAdvice]:
    try:
        doc = tomllib.loads(ADVICE_FILE.read_text())
        return [SeedAdvice(**{**a, "together": tuple(tuple(g) for g in a.get("together", ()))})
                for a in doc["advice"]]
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError) as e:
        raise CohtbError(f"{ADVICE_FILE}: {e}") from None


@dataclass
class AdviceResult:
    advice: SeedAdvice
    runs: list[RunMetrics]                   # the advised arm's kept runs
    proposals: list[tuple[str, Proposal]]    # of those with a profile: (run id, the object's proposal)
    unconstrained: Proposal | None           # the first one's, without the declared groups
    proof_kernel: str | None                 # the arm whose runs have the proposed layout
    proof: Ratio | None                      # proof arm over advised arm (None: no such arm, or runs missing)
    seed_patch: Ratio | None                 # the seed's own patch's arm over the advised arm

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


def advise(a: SeedAdvice, points: list[PointResult]) -> AdviceResult:
    """The proposal from the advised arm's runs at the declaration's points, and its proof."""
    runs, found = [], []
    for p in points:
        runs += _arm(p, a.kernel) or []
    for m in runs:
        if not m.run.profile():
            continue
        mine = [x for x in proposals(m.run, a.max_size, a.together) if x.object == a.object]
        found += [(m.run.id, x) for x in mine]
    unconstrained = None
    if found:
        first = next(m.run for m in runs if m.run.id == found[0][0])
        unconstrained = next((x for x in proposals(first, a.max_size) if x.object == a.object), None)
    proof_kernel = proof = patch = None
    moves = found and found[0][1].moved
    wanted = _offsets(found[0][1].after) if moves else None
    for p in points:
        for side in (p.base, p.new):
            if not side or side[0].spec.kernel == a.kernel or wanted is None:
                continue
            _, fields = object_fields(side[0].run, a.object)
            if tuple((f["name"], f["offset"], f["size"]) for f in fields) == wanted:
                proof_kernel = side[0].spec.kernel
                proof = _change(p, a.kernel, proof_kernel)
        if a.seed_patch:
            patch = _change(p, a.kernel, a.seed_patch)
    return AdviceResult(a, runs, found, unconstrained, proof_kernel, proof, patch)
