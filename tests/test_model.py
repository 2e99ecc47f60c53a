"""The reference models: the counting rules by hand, bounded vs ideal, and Space-Saving's guarantees."""

import random
from collections import Counter

import pytest

from cohtb.contract import Kind

from cohtb.monitor.models import BoundedModel, IdealModel
from cohtb.monitor.config import MonitorParams
from cohtb.trace import random_events as streams

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
