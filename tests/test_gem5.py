"""gem5 integration: a short 2x2 lockref run through cohtb launch. Skipped, with the reason, when gem5
is absent (set GEM5 or put gem5.opt on PATH); must pass when it is present."""

import pytest

from cohtb.trace import events as ev
from cohtb.sim import gem5
from cohtb.sim.launch import launch
from cohtb.sim.plans import RunSpec
from cohtb.monitor.models import IdealModel
from cohtb.sim.runs import load

pytestmark = pytest.mark.skipif(gem5.find() is None, reason=gem5.why_missing())


def test_lockref_2x2_cmpxchg(tmp_path):
    spec = RunSpec("lockref", "cmpxchg", "shared", 2, 2, ops=40)
    [outcome] = launch([spec], tmp_path, jobs=1, timeout=1200)
    assert outcome.status == "done", outcome.error
    run = load(tmp_path / spec.id)
    m = run.manifest
    assert m["gem5"]["version"].startswith("24.0")
    assert m["system"]["sockets"] == 2 and m["system"]["cores"] == 4
    assert [c["socket"] for c in m["controllers"]["l1"]] == [0, 0, 1, 1]
    assert m["workload"]["threads"] == 4 and m["workload"]["final_count"] == 1
    assert m["workload"]["ops"] == 4 * 40
    assert 0 < m["roi"]["seconds"] < 0.1 and m["roi"]["begin_tick"] < m["roi"]["end_tick"]
    header, recs = ev.read_all(run.path / "events.cohtb")
    assert len(recs) > 0
    # the trace holds the region of interest only
    assert recs["tick"].min() >= m["roi"]["begin_tick"] and recs["tick"].max() <= m["roi"]["end_tick"]
    # the count word was placed through the TLB mappings and gem5 saw transfers on its line
    lref = next(f for f in m["layout"] if f["name"] == "d_lockref")
    assert lref["how"] in ("tlb", "object-offset") and lref["lines"]
    ideal = IdealModel(2)
    ideal.apply_array(recs)
    st = dict(zip(__import__("cohtb.model", fromlist=["LINE_STATS"]).LINE_STATS, ideal.stats[lref["lines"][0]]))
    assert st["transfers"] > 0 and st["gem5Transfers"] > 0
