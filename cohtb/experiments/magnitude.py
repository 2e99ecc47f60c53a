"""How large the published change should be, predicted from the simulation and from what the seed itself
publishes, never from a fit.

A patch speeds up one path of the operation the seed measured. If that path took a share p of the time before
the patch (the seed's own profile or system time), and the simulation measures that path's speed-up r, the
whole operation's speed-up is Amdahl's

    predicted = 1 / ((1 - p) + p / r)

The simulated runs are the contended path and little else, so r is the simulated new/base throughput. Over the
repetitions r spans [r_lo, r_hi] (every pair of repetitions), so the prediction spans [predicted(r_lo),
predicted(r_hi)], widened by the declared minimum effect m on each side ([lo / (1 + m), hi * (1 + m)]): a
difference smaller than m is no result either way.

When the seed publishes a time per operation instead of a share (003: bandwidth per thread), p is the simulated
base time per operation over the published one (taken from the runs it judges: such a band has no power before
them, cohtb/experiments/power.py). A full-system run simulates the published operation itself, so its own ratio
is the prediction (p = 1, "direct"); a declaration may also hold an SE run to the published figure directly where
it says why (000v6: the seed's own figures show that its profile share does not bound its gain)."""

from __future__ import annotations

from dataclasses import dataclass

from cohtb.experiments.published import Published, Share


def predicted(r: float, p: float) -> float:
    """The whole operation's speed-up when a share p of its time speeds up r-fold."""
    return 1 / ((1 - p) + p / r)


@dataclass(frozen=True)
class Band:
    lo: float
    hi: float
    how: str   # one line: where p came from

    def holds(self, ratio: float) -> bool:
        return self.lo <= ratio <= self.hi

    def text(self) -> str:
        return f"{(self.lo - 1) * 100:+.0f}% to {(self.hi - 1) * 100:+.0f}%"


def share_for(pub: Published, shares: tuple[Share, ...], base_seconds_per_op: float | None) -> tuple[float, str] | None:
    """p for one published figure and where it comes from, or None when the seed publishes nothing for it."""
    for s in shares:
        if pub.configuration not in s.applies_to:
            continue
        if s.kind == "share":
            return s.share, f"p = {s.share:.4f}: {s.what}"
        if s.kind == "time-per-op" and base_seconds_per_op is not None:
            t_pub = s.time_per_op(pub)
            return (min(1.0, base_seconds_per_op / t_pub),
                    f"p = simulated {base_seconds_per_op * 1e9:.0f} ns per op / published {t_pub * 1e9:.0f} ns per "
                    f"op ({s.what})")
    return None


def band(r_lo: float, r_hi: float, p: float, min_effect: float, how: str) -> Band:
    return Band(predicted(r_lo, p) / (1 + min_effect), predicted(r_hi, p) * (1 + min_effect), how)
