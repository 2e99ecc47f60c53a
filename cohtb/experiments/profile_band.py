"""The profile band: where a seed publishes its perf profile, a declaration can hold its base arm to it, so that a
throughput verdict is read beside whether the simulated machine spends its time where the seed's did. Declared
with the experiment (profile_functions, profile_band_points), before its runs: each named function's share of the
simulated window, the mean over the base arm's repetitions, must lie within the band's points of the published
share. Where the guest's kernel does a published function's work in more functions than the seed's (3.10's ticket
lock spun inside _raw_spin_lock; 6.12's qspinlock spins in queued_spin_lock_slowpath), the declaration names them
(profile_counterparts) and their shares are summed. The new arm's profile is shown beside its published one, not judged.

The rule's answers are known before any run (outcomes): the published shares themselves reach the band, and a
function moved just past the band's edge, either way, does not."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from cohtb.analysis.profile import of, share_of
from cohtb.experiments.declarations import Declaration
from cohtb.experiments.published import PROFILES, Profile
from cohtb.experiments.reproduce import PointResult

REACHES, OUTSIDE = "reaches the band: the simulated machine spends its time where the seed's did", \
    "outside the band: the simulated machine does not spend its time where the seed's did"


def inside(published: Profile, symbol: str, simulated: float, points: float) -> bool:
    """The rule: a function's simulated share (the repetitions' mean) within `points` of its published share."""
    return abs(simulated - published.share(symbol)) * 100 <= points + 1e-9


@dataclass(frozen=True)
class ProfileCheck:
    arm: str                     # "base" or "new"
    published: Profile
    shares: dict[str, tuple[float, ...]]   # function -> its share in each repetition's profile
    runs: int                    # of the arm's runs kept, those with a profile
    of_runs: int                 # the arm's declared repetitions
    judged: bool                 # the base arm is held to the band; the new arm is shown
    points: float                # the band's half width, in percentage points
    counterparts: dict[str, tuple[str, ...]]   # function -> the guest's functions whose shares are summed for it

    def mean(self, symbol: str) -> float:
        return statistics.fmean(self.shares[symbol])

    def inside(self, symbol: str) -> bool:
        return inside(self.published, symbol, self.mean(symbol), self.points)

    @property
    def complete(self) -> bool:
        return self.runs == self.of_runs > 0

    @property
    def verdict(self) -> str:
        if not self.judged:
            return "shown, not judged"
        if not self.complete:
            return f"no verdict: {self.runs} of {self.of_runs} runs have a profile"
        return REACHES if all(self.inside(s) for s in self.shares) else OUTSIDE


def published_for(d: Declaration, configuration: str, arm: str) -> Profile | None:
    seed = d.experiment.split("-")[0]
    return next((p for p in PROFILES.get(seed, ()) if p.arm == arm and p.configuration == configuration), None)


def checks(d: Declaration, p: PointResult) -> list[ProfileCheck]:
    """The point's arms held to (base) or shown beside (new) their published profiles, when the declaration
    declares a band and the seed publishes them."""
    if not d.profile_functions:
        return []
    out = []
    for arm, runs in (("base", p.base), ("new", p.new)):
        for pub in p.point.published:
            profile = published_for(d, pub.configuration, arm)
            if profile is None:
                continue
            rows = [r for r in (of(m.run) for m in runs) if r is not None]
            symbols = d.profile_functions if arm == "base" else tuple(s for s, _ in profile.functions)
            shares = {s: tuple(sum(share_of(r, g) for g in d.simulated_symbols(s)) for r in rows) for s in symbols}
            out.append(ProfileCheck(arm, profile, shares, len(rows), p.repetitions, arm == "base",
                                    d.profile_band_points, {s: d.simulated_symbols(s) for s in symbols}))
    return out


def outcomes(d: Declaration, profile: Profile) -> list[tuple[str, bool]]:
    """Before any run: simulated base profiles and whether each reaches the band (the power page's table): the
    published shares, then each declared function half a point inside and half a point past the band's edges."""
    points = d.profile_band_points
    published = {s: profile.share(s) for s in d.profile_functions}
    cases = [("the published shares", published)]
    for s in d.profile_functions:
        for delta in (points - 0.5, points + 0.5, -(points + 0.5)):
            if 0 <= published[s] + delta / 100 <= 1:
                cases.append((f"{s} at {100 * published[s] + delta:.2f}% ({delta:+.1f} points)",
                              {**published, s: published[s] + delta / 100}))
    return [(what, all(inside(profile, s, v, points) for s, v in shares.items())) for what, shares in cases]
