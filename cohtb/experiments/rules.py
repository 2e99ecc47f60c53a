"""The verdict rules, each under the name a declaration gives it (seed_data/<seed>/<experiment>.toml: `rule`, `collapse_rule`). A rule
is never changed in place once a declaration names it: a new rule gets a new name, so every run is judged by the
rule it was recorded under, and an earlier verdict can always be computed again.

Point rules judge a published figure against the simulated new/base speed-up over the repetitions:
  sign-2x           the sign holds beyond the spread (every pair of repetitions on the published side of 1); a
                    published no-change is reproduced by a mean change under NULL_EFFECT; a change over
                    RATIO_FACTOR times the published one is called out but still counts as reproduced.
  sign-effect-band  the sign holds beyond the spread and the mean change is at least the declared minimum effect;
                    a published no-change is reproduced when the whole range lies within the minimum effect; the
                    published figure must lie in the band predicted from the seed's own profile
                    (cohtb/experiments/magnitude.py), or the verdict says the magnitude is not testable.
  sign-effect-band-null-under-effect  the same, but a published change smaller than the minimum effect is a
                    published no change (a difference under the minimum effect is no result, the seed's as ours):
                    reproduced only by a whole range within the minimum effect.
Shape rules judge the points of each curve (a path, over the socket counts) together:
  level-from-4      seed 000's published shape: on one socket no change beyond the minimum effect (its whole
                    range), at 4 and at 8 sockets a gain beyond the spread and the minimum effect, and level from 4
                    to 8 (the 8-socket speed-up within LEVEL of the 4-socket one); 2 sockets reported, not judged.
  level-from-4-in-logs  the same, with "level" on the logarithms of the speed-ups (ln r8 / ln r4 within LEVEL), so
                    that a small gain that triples is not level; says "in shape": the magnitude is not judged.
Series rules judge seed 004's collapse after one transient holder of the lock:
  collapse-locked-level  retry100's last quarter falls beyond its spread below its level before and to within
                    COLLAPSED of the locked policy's level (locked-only operation, which the published collapse
                    reached and kept); every waiting policy's last quarter is back at RECOVERED of its level or
                    more, in every repetition.
  collapse-trough   retry100's lowest interval falls under COLLAPSED_TO of its level in every repetition and no
                    waiting policy's does in any; whether it lasts is reported, not judged.
  collapse-half-lasting  (full system: the base and new kernels, each with and without the listing intruder) the
                    base kernel's last quarter is under COLLAPSED_TO of its level before the first listing in every
                    repetition with the intruder, and in none without it; the new kernel's is in none with it.
  collapse-stays-under-half  the same, made harder to pass by mistake: each run made the declared listings (the
                    controls none); the base kernel's level before the first listing is at least COLLAPSED_TO of the
                    new kernel's (else not testable: collapsed before it); and every interval of its last quarter,
                    not their mean, is under COLLAPSED_TO of its level in every repetition.
  collapse-stays-under-half-in-window  the same, the listings counted where they can act: in the window, as
                    each run's trace shows them (the lister's visits to the file dentry's line), the declared number
                    in the runs with the listings and none in the controls. A control's lister may still list
                    after the window closes, before the workload stops it; the workload's own count includes that.
  collapse-stays-under-half-counted-twice  the same, each run's listings counted twice: by the workload itself (to
                    the end of the run) and in the window by its trace; both must be the declared number in the runs
                    with the listings and none in the controls, whose lister runs and never lists."""

from __future__ import annotations

import math
from dataclasses import dataclass

from cohtb.experiments.declarations import Declaration
from cohtb.experiments.magnitude import band, share_for
from cohtb.experiments.published import SHARES, Published
from cohtb.experiments.reproduce import PointResult, SeriesResult

NULL_EFFECT = 0.05     # sign-2x: a simulated |change| below 5% is "no change"
RATIO_FACTOR = 2.0     # sign-2x: a change more than 2x (or under half) the published one is called out
COLLAPSED = 1.25       # collapse-locked-level: within 25% of the locked-only level
RECOVERED = 0.9        # back to (or, for a lasting collapse, still under) 90% of the level before
COLLAPSED_TO = 0.5     # collapse-trough, collapse-half-lasting: under half the level before
LEVEL = 1.25           # level-from-4: the 8-socket speed-up within 25% of the 4-socket one


@dataclass(frozen=True)
class Verdict:
    reproduced: bool
    text: str
    band: str = ""            # the predicted band, when the rule has one
    called_out: bool = False  # reproduced, but the rule calls the magnitude out (sign-2x: beyond RATIO_FACTOR)


def expected_sign(pub: Published) -> int:
    return 0 if pub.null else (1 if pub.ratio > 1 else -1)


def _pct(r: float) -> str:
    return f"{(r - 1) * 100:+.0f}%"


def sign_2x(pub: Published, res: PointResult, d: Declaration) -> Verdict:
    sim = res.ratio
    want = expected_sign(pub)
    if want == 0:
        ok = abs(sim.mean - 1) < NULL_EFFECT
        return Verdict(ok, "yes: no change, as published" if ok else
                       f"no: published no change, simulated {(sim.mean - 1) * 100:+.0f}%")
    if sim.sign == 0:
        return Verdict(False, "no: the simulated change is within the spread of the repetitions")
    if sim.sign != want:
        return Verdict(False, "no: opposite sign")
    factor = (sim.mean - 1) / (pub.ratio - 1)
    if factor > RATIO_FACTOR or factor < 1 / RATIO_FACTOR:
        return Verdict(True, f"yes in sign; the change is {factor:.1f}x the published one", called_out=True)
    return Verdict(True, "yes")


def sign_effect_band(pub: Published, res: PointResult, d: Declaration) -> Verdict:
    sim, m = res.ratio, d.min_effect
    want = expected_sign(pub)
    if want == 0:
        ok = 1 - m < sim.lo and sim.hi < 1 + m
        return Verdict(ok, f"yes: no change beyond {m:.0%}, as published" if ok else
                       f"no: published no change, simulated {_pct(sim.mean)} ({_pct(sim.lo)} to {_pct(sim.hi)})")
    if sim.sign == 0:
        return Verdict(False, "no: the simulated change is within the spread of the repetitions")
    if sim.sign != want:
        return Verdict(False, "no: opposite sign")
    if abs(sim.mean - 1) < m:
        return Verdict(False, f"no: the simulated change is under the minimum effect ({m:.0%})")
    if d.magnitude == "none":
        return Verdict(True, "yes in sign; no magnitude declared")
    if d.magnitude == "direct":
        b = band(sim.lo, sim.hi, 1.0, m, "the simulated operation is the published one")
    else:
        per_op = res.base_seconds_per_op
        found = share_for(pub, SHARES.get(pub.source.seed if pub.source else "", ()), per_op)
        if found is None:
            return Verdict(True, "yes in sign; magnitude not testable (the seed publishes no profile for it)")
        b = band(sim.lo, sim.hi, found[0], m, found[1])
    if b.holds(pub.ratio):
        return Verdict(True, f"yes: published {_pct(pub.ratio)} is in the predicted {b.text()}", b.text())
    return Verdict(False, f"sign only: published {_pct(pub.ratio)} is outside the predicted {b.text()}", b.text())


def sign_effect_band_null_under_effect(pub: Published, res: PointResult, d: Declaration) -> Verdict:
    if not pub.null and abs(pub.ratio - 1) < d.min_effect:   # the seed's change is no result at this resolution
        sim, m = res.ratio, d.min_effect
        ok = 1 - m < sim.lo and sim.hi < 1 + m
        return Verdict(ok, f"yes: no change beyond {m:.0%}, as published ({_pct(pub.ratio)}, under it)" if ok else
                       f"no: published {_pct(pub.ratio)}, under the minimum effect ({m:.0%}): no change; simulated "
                       f"{_pct(sim.mean)} ({_pct(sim.lo)} to {_pct(sim.hi)})")
    return sign_effect_band(pub, res, d)


POINT_RULES = {"sign-2x": sign_2x, "sign-effect-band": sign_effect_band,
               "sign-effect-band-null-under-effect": sign_effect_band_null_under_effect}


def _gains_from_4(points: list[PointResult], d: Declaration) -> tuple[dict, str, Verdict | None]:
    """The shape rules' common checks: every socket count kept, no change on one socket, a gain beyond the spread
    and the minimum effect at 4 and 8. (ratios by sockets, their text, the failing verdict or None)."""
    by = {p.point.base.sockets: p for p in points}
    if not {1, 4, 8} <= set(by) or not all(p.complete for p in points):
        return {}, "", Verdict(False, "no: runs missing")
    m, r = d.min_effect, {n: p.ratio for n, p in by.items()}
    said = "; ".join(f"{n}: {_pct(r[n].mean)} ({_pct(r[n].lo)} to {_pct(r[n].hi)})" for n in sorted(r))
    if not (1 - m < r[1].lo and r[1].hi < 1 + m):
        return r, said, Verdict(False, f"no: one socket changes beyond {m:.0%}; sockets {said}")
    weak = [n for n in (4, 8) if r[n].sign != 1 or r[n].mean - 1 < m]
    if weak:
        return r, said, Verdict(False, f"no: no gain beyond the spread and {m:.0%} at {weak[0]} sockets; sockets {said}")
    return r, said, None


def level_from_4(points: list[PointResult], d: Declaration) -> Verdict:
    r, said, failed = _gains_from_4(points, d)
    if failed:
        return failed
    level = r[8].mean / r[4].mean
    if not 1 / LEVEL <= level <= LEVEL:
        return Verdict(False, f"no: not level from 4 to 8 sockets (8's speed-up {level:.2f}x 4's); sockets {said}")
    return Verdict(True, f"yes: no change on one socket, level from 4 to 8 (8's speed-up {level:.2f}x 4's); "
                         f"sockets {said}")


def level_from_4_in_logs(points: list[PointResult], d: Declaration) -> Verdict:
    r, said, failed = _gains_from_4(points, d)
    if failed:
        return failed
    # speed-ups compose by multiplication: +12% then +38% is a gain nearly tripled, not "within 1.25x"
    level = math.log(r[8].mean) / math.log(r[4].mean)
    if not 1 / LEVEL <= level <= LEVEL:
        return Verdict(False, f"no: not level from 4 to 8 sockets (8's log speed-up {level:.2f}x 4's); sockets {said}")
    return Verdict(True, f"yes in shape (the magnitude is not judged): no change on one socket, level from 4 to 8 "
                         f"(8's log speed-up {level:.2f}x 4's); sockets {said}")


SHAPE_RULES = {"level-from-4": level_from_4, "level-from-4-in-logs": level_from_4_in_logs}


def collapse_locked_level(res: SeriesResult, collapsing: str = "retry100", locked: str = "locked") -> Verdict:
    if not res.complete:
        return Verdict(False, "no: runs missing")
    fall, late, floor = res.falls(collapsing), res.late(collapsing), res.late(locked)
    waiting = {p: res.falls(p) for p in res.runs if p not in (collapsing, locked)}
    if fall is None or late is None or floor is None or any(v is None for v in waiting.values()):
        return Verdict(False, "no: the runs have no intervals")
    to_floor = late.mean / floor.mean
    stuck = [p for p, v in waiting.items() if v.lo < RECOVERED]
    keeps = ", ".join(f"{p} keeps {v.mean:.2f}" for p, v in waiting.items())
    if fall.hi >= 1:
        return Verdict(False, f"no: {collapsing} does not fall beyond its spread (last quarter {fall.text()} of its "
                              f"level); {keeps}")
    if to_floor > COLLAPSED:
        return Verdict(False, f"no: {collapsing}'s last quarter is {fall.mean:.2f} of its level, {to_floor:.2f}x the "
                              f"locked-only level; {keeps}")
    if stuck:
        return Verdict(False, f"no: {', '.join(stuck)} do not recover to {RECOVERED:.0%}; {keeps}")
    return Verdict(True, f"yes: {collapsing}'s last quarter is {fall.mean:.2f} of its level, {to_floor:.2f}x the "
                         f"locked-only level; {keeps}")


def collapse_trough(res: SeriesResult, collapsing: str = "retry100", reference: str = "locked") -> Verdict:
    if not res.complete:
        return Verdict(False, "no: runs missing")
    low, late = res.trough(collapsing), res.falls(collapsing)
    waiting = {p: res.trough(p) for p in res.runs if p not in (collapsing, reference)}
    if low is None or late is None or any(v is None for v in waiting.values()):
        return Verdict(False, "no: the runs have no intervals")
    keeps = ", ".join(f"{p}'s lowest interval {v.mean:.2f}" for p, v in waiting.items())
    lasting = (f"and stays there (last quarter {late.mean:.2f})" if late.hi < RECOVERED else
               f"then recovers (last quarter {late.mean:.2f}; the published collapse lasted)")
    if low.hi >= COLLAPSED_TO:
        return Verdict(False, f"no: {collapsing}'s lowest interval is {low.mean:.2f} of its level; {keeps}")
    stuck = [p for p, v in waiting.items() if v.lo < COLLAPSED_TO]
    if stuck:
        return Verdict(False, f"no: {', '.join(stuck)} fall too; {collapsing} falls to {low.mean:.2f}; {keeps}")
    return Verdict(True, f"yes: {collapsing} falls to {low.mean:.2f} of its level {lasting}; {keeps}")


def collapse_half_lasting(res: SeriesResult, collapsing: str, waiting: str) -> Verdict:
    if not res.complete:
        return Verdict(False, "no: runs missing")
    control = res.series.control(collapsing)
    falls = {label: res.falls(label) for label in (collapsing, waiting, control)}
    if any(v is None for v in falls.values()):
        return Verdict(False, "no: the runs have no intervals")
    # the levels before the first listing too: a kernel already collapsed there has no level to fall from
    said = "; ".join(f"{label}: last quarter {v.text()} of its level ({res.before(label).text()} ops per interval "
                     "before)" for label, v in falls.items())
    if falls[collapsing].hi >= COLLAPSED_TO:
        return Verdict(False, f"no: {collapsing} does not stay under {COLLAPSED_TO:.0%} of its level in every "
                              f"repetition; {said}")
    if falls[control].lo < COLLAPSED_TO:
        return Verdict(False, f"no: {collapsing} falls without the intruder too, so the listing is not the cause; "
                              f"{said}")
    if falls[waiting].lo < COLLAPSED_TO:
        return Verdict(False, f"no: {waiting} collapses too; {said}")
    return Verdict(True, f"yes: {collapsing} collapses after the listings and stays collapsed, {waiting} does not; "
                         f"{said}")


def _declared_listings(res: SeriesResult, collapsing: str, waiting: str) -> dict[str, int]:
    """The listings each arm is declared to make: the series' count, none for the controls."""
    controls = [res.series.control(label) for label in (collapsing, waiting)]
    return {collapsing: res.series.event_count, waiting: res.series.event_count, **{c: 0 for c in controls}}


def _listings_not_as_declared(res: SeriesResult, expected: dict[str, int], counted, what: str,
                              seen: str) -> Verdict | None:
    """A 'no' naming the arms whose repetitions' `counted(label)` listings differ from the declared, else None."""
    wrong = {label: counted(label) for label, n in expected.items() if any(c != n for c in counted(label))}
    if not wrong:
        return None
    return Verdict(False, f"no: {what} were not as declared (" + "; ".join(
        f"{label}: {made} {seen}, {expected[label]} declared" for label, made in wrong.items()) + ")")


def _stays_collapsed(res: SeriesResult, collapsing: str, waiting: str, expected: dict[str, int]) -> Verdict:
    """The collapse itself: `collapsing` had a level, fell under COLLAPSED_TO of it in every interval of every
    repetition's last quarter, its control did not fall, and `waiting` did not collapse."""
    control = res.series.control(collapsing)
    falls = {label: res.falls(label) for label in expected}
    before = {label: res.before(label) for label in expected}
    if any(v is None for v in (*falls.values(), *before.values(), res.late_peak(collapsing))):
        return Verdict(False, "no: the runs have no intervals")
    said = "; ".join(f"{label}: last quarter {v.text()} of its level ({before[label].text()} ops per interval "
                     "before)" for label, v in falls.items())
    # a kernel that runs lock-only from the start has no level to fall from, which is not "no collapse"
    if before[collapsing].mean < COLLAPSED_TO * before[waiting].mean:
        return Verdict(False, f"no: not testable: {collapsing} runs under {COLLAPSED_TO:.0%} of {waiting}'s level "
                              f"before the first listing (collapsed before it); {said}")
    if res.late_peak(collapsing).hi >= COLLAPSED_TO:
        return Verdict(False, f"no: {collapsing} does not stay under {COLLAPSED_TO:.0%} of its level in every interval "
                              f"of the last quarter of every repetition (highest {res.late_peak(collapsing).text()}); "
                              f"{said}")
    if falls[control].lo < COLLAPSED_TO:
        return Verdict(False, f"no: {collapsing} falls without the listings too, so they are not the cause; {said}")
    if falls[waiting].lo < COLLAPSED_TO:
        return Verdict(False, f"no: {waiting} collapses too; {said}")
    return Verdict(True, f"yes: {collapsing} collapses after the listings and stays collapsed, {waiting} does not; "
                         f"{said}")


def _collapse_after_listings(res: SeriesResult, collapsing: str, waiting: str,
                             counts: list[tuple[str, str, str]]) -> Verdict:
    """The listings as declared in each count named (a SeriesResult attribute, what it is called, where it was
    counted), in turn, then the collapse."""
    if not res.complete:
        return Verdict(False, "no: runs missing")
    expected = _declared_listings(res, collapsing, waiting)
    for attribute, what, where in counts:
        if v := _listings_not_as_declared(res, expected, getattr(res, attribute), what, where):
            return v
    return _stays_collapsed(res, collapsing, waiting, expected)


def collapse_stays_under_half(res: SeriesResult, collapsing: str, waiting: str) -> Verdict:
    """The listings the workload made as declared, then the collapse."""
    return _collapse_after_listings(res, collapsing, waiting, [("disturbances", "the listings", "made")])


def collapse_stays_under_half_in_window(res: SeriesResult, collapsing: str, waiting: str) -> Verdict:
    """The listings the trace shows in the window as declared, then the collapse."""
    return _collapse_after_listings(res, collapsing, waiting,
                                    [("listings_seen", "the listings in the window", "in the window")])


def collapse_stays_under_half_counted_twice(res: SeriesResult, collapsing: str, waiting: str) -> Verdict:
    """The listings as declared both as the workload made them and in the trace's window, then the collapse."""
    return _collapse_after_listings(res, collapsing, waiting,
                                    [("disturbances", "the listings the workload made", "made"),
                                     ("listings_seen", "the listings in the window", "in the window")])


SERIES_RULES = {"collapse-locked-level": collapse_locked_level, "collapse-trough": collapse_trough,
                "collapse-half-lasting": collapse_half_lasting, "collapse-stays-under-half": collapse_stays_under_half,
                "collapse-stays-under-half-in-window": collapse_stays_under_half_in_window,
                "collapse-stays-under-half-counted-twice": collapse_stays_under_half_counted_twice}


def point_verdict(pub: Published, res: PointResult, d: Declaration) -> Verdict:
    """`pub` judged against a point's runs by the rule `d` declares (a shape rule judges its curve instead)."""
    if d.rule in SHAPE_RULES:
        return Verdict(False, f"judged with its curve ({d.rule})")
    return POINT_RULES[d.rule](pub, res, d)


def curve_verdicts(points: list[PointResult], d: Declaration) -> dict[str, Verdict]:
    """Under a shape rule, each curve's verdict (its points over the socket counts); otherwise none."""
    if d.rule not in SHAPE_RULES:
        return {}
    curves: dict[str, list[PointResult]] = {}
    for p in points:
        curves.setdefault(p.point.curve, []).append(p)
    return {name: SHAPE_RULES[d.rule](ps, d) for name, ps in curves.items()}


def series_verdict(res: SeriesResult, d: Declaration) -> Verdict:
    """A series judged by the rule `d` declares: a full-system one's collapsing and waiting runs are its kernels,
    an SE one's are the policies."""
    rule = SERIES_RULES[d.collapse_rule]
    return rule(res, *d.kernels) if d.kernels else rule(res)

