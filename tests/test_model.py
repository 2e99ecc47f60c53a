"""The reference models: the counting rules by hand, bounded vs ideal, and Space-Saving's guarantees."""

import random
from collections import Counter

import pytest

from cohtb.contract import Kind

from cohtb.monitor.models import BoundedModel, IdealModel
from cohtb.monitor.config import MonitorParams
from cohtb.verify import random_events as streams

R, W, E = Kind.READ, Kind.WRITE, Kind.EVICT
BIG = MonitorParams(cores=8, sockets=2, sets=256, ways=8, hotEntries=8, regions=2)


def test_rules_by_hand():
    m = BoundedModel(BIG)
    for line, core, kind in [(1, 0, W), (1, 5, W), (1, 0, R), (1, 1, R), (1, 0, W), (1, 0, E), (1, 5, W)]:
        m.apply(line, core, core * 2 // 8, kind)
    g = m.snapshot().totals
    # W0: first writer. W5: transfer from 0 (x-socket), invalidates {0}. R0: dirty read of 5's line (remote).
    # R1: clean read. W0: transfer from 5 (x-socket), invalidates {5, 1}. E0: the owner leaves.
    # W5: nobody owns the line any more, so no transfer, nothing to invalidate.
    assert g["transfers"] == 2 and g["crossSocketTransfers"] == 2
    assert g["dirtyReadsRemote"] == 1 and g["dirtyReadsLocal"] == 0
    assert g["invalidations"] == 1 + 2
    assert g["eventsWrite"] == 4 and g["eventsRead"] == 2 and g["eventsEvict"] == 1

def test_bounded_equals_ideal_when_nothing_is_evicted():
    header, recs = streams.random_stream(20000, cores=8, sockets=2, hot_lines=4, cold_lines=64, seed=5)
    bounded = BoundedModel(BIG)
    ideal = IdealModel(2)
    bounded.apply_array(recs)
    ideal.apply_array(recs)
    g, t = bounded.snapshot().totals, ideal.totals()
    assert g["stateEvictions"] == 0
    for name in ("transfers", "crossSocketTransfers", "invalidations", "dirtyReadsLocal", "dirtyReadsRemote"):
        assert g[name] == getattr(t, name), name
    assert bounded.snapshot().matrix == ideal.matrix


def test_bounded_misses_what_it_cannot_hold():
    header, recs = streams.random_stream(20000, cores=8, sockets=2, hot_lines=4, cold_lines=4096, seed=5)
    tiny = MonitorParams(cores=8, sockets=2, sets=4, ways=2, hotEntries=4, regions=1)
    bounded, ideal = BoundedModel(tiny), IdealModel(2)
    bounded.apply_array(recs)
    ideal.apply_array(recs)
    assert bounded.snapshot().totals["stateEvictions"] > 0
    assert bounded.snapshot().totals["transfers"] < ideal.totals().transfers


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_space_saving_bounds(seed):
    rng = random.Random(seed)
    p = MonitorParams(cores=4, sockets=2, sets=64, ways=4, hotEntries=6, regions=1)
    m = BoundedModel(p)
    truth: Counter = Counter()
    n = 0
    for _ in range(20000):
        line = int(rng.paretovariate(1.2)) % 50   # skewed: a few lines take most items
        m._hot_item(line)
        truth[line] += 1
        n += 1
    for h in m.snapshot().hot:
        assert h.count - h.error <= truth[h.line] <= h.count
    held = {h.line for h in m.snapshot().hot}
    assert all(line in held for line, c in truth.items() if c > n / p.hotEntries)


def test_counters_saturate():
    p = MonitorParams(cores=4, sockets=2, sets=4, ways=2, hotEntries=2, regions=1, counterWidth=4)
    m = BoundedModel(p)
    for i in range(40):
        m.apply(3, i % 2, 0, W)
    s = m.snapshot()
    assert s.totals["transfers"] == 15 and s.saturated


# ---------------------------------------------------------------- replacement and saturation, derived by hand

def _params(**kw) -> MonitorParams:
    base = dict(cores=4, sockets=2, lineAddrBits=16, sets=4, ways=2, hotEntries=2, regions=1, counterWidth=8)
    return MonitorParams(**{**base, **kw})


def _same_set(p: MonitorParams, n: int, of: int = 0) -> list[int]:
    return [line for line in range(1 << 12) if p.set_index(line) == p.set_index(of)][:n]


def test_round_robin_victims():
    """A full set gives up the way its pointer names, and the pointer moves on: s0, then s1."""
    p = _params(ways=2)
    s0, s1, s2 = _same_set(p, 3)
    m = BoundedModel(p)
    for line in (s0, s1, s2):          # s2 replaces way 0 (s0); the pointer moves to way 1
        m.apply(line, 0, 0, W)
    assert m.tracked(s0) is None and m.tracked(s1) and m.tracked(s2)
    m.apply(s0, 0, 0, W)               # s0 replaces way 1 (s1)
    assert m.tracked(s1) is None and m.tracked(s0) and m.tracked(s2)
    assert m.snapshot().totals["stateEvictions"] == 2


def test_lru_victim_and_evict_does_not_touch_ages():
    """s1 is held by two cores, s2 written after it; an EVICT of s1 by one of them (the line stays) must not make s1
    young: the next line replaces s1. Were EVICT to touch the ages, s2 would go."""
    p = _params(ways=2, replacement="lru")
    s1, s2, s3 = _same_set(p, 3)
    m = BoundedModel(p)
    m.apply(s1, 0, 0, W)
    m.apply(s1, 2, 1, R)               # holders {0, 2}
    m.apply(s2, 0, 0, W)               # s2 youngest, s1 oldest
    m.apply(s1, 2, 1, E)               # a hit that keeps the line
    assert m.tracked(s1) is not None
    m.apply(s3, 0, 0, W)
    assert m.tracked(s1) is None and m.tracked(s2) and m.tracked(s3)


def test_lru_read_makes_a_way_young():
    p = _params(ways=2, replacement="lru")
    s0, s1, s2 = _same_set(p, 3)
    m = BoundedModel(p)
    m.apply(s0, 0, 0, W)
    m.apply(s1, 0, 0, W)
    m.apply(s0, 1, 0, R)               # s0 youngest again
    m.apply(s2, 0, 0, W)
    assert m.tracked(s1) is None and m.tracked(s0) and m.tracked(s2)


def test_xorfold_index_by_hand():
    p = _params(sets=16, indexing="xorfold")
    assert [p.set_index(x) for x in (0x1234, 0xFFFF, 0x00F0, 0x0001, 0x0010, 0x0023, 0x0032, 0x0045)] == \
        [0x4 ^ 0x3 ^ 0x2 ^ 0x1, 0, 0xF, 1, 1, 1, 1, 1]
    # five lines of one folded set: one more than four ways, so one state eviction (modulo: five sets, none)
    for indexing, want in (("xorfold", 1), ("modulo", 0)):
        m = BoundedModel(_params(sets=16, ways=4, indexing=indexing))
        for line in (0x01, 0x10, 0x23, 0x32, 0x45):
            m.apply(line, 0, 0, W)
        assert m.snapshot().totals["stateEvictions"] == want, indexing


def test_counter_lands_exactly_on_all_ones_then_saturates():
    """Saturation is an overflow, not reaching the maximum: 255 events leave the flag clear, the 256th sets it."""
    p = _params(counterWidth=8)
    m = BoundedModel(p)
    for _ in range(255):
        m.apply(5, 0, 0, R)
    s = m.snapshot()
    assert s.totals["accepted"] == 255 and s.totals["eventsRead"] == 255 and not s.saturated
    m.apply(5, 0, 0, R)
    s = m.snapshot()
    assert s.totals["accepted"] == 255 and s.saturated
