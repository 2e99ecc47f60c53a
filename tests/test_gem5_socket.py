"""The socket machine on the real gem5 built with CHI (GEM5_CHI; docs/gem5.md): x86's locked read-modify-writes stay
atomic under contention, and the calibration benchmark finds a transfer in the socket faster than one over a
socket link, and one link faster than two. Skipped, with the reason, without that build; must pass with it.
`make test-gem5` runs it with the other gem5 tests."""

import pytest

from cohtb.analysis.latency import cells
from cohtb.experiments.plans import atomicity_plan
from cohtb.launch import launch
from cohtb.run import gem5
from cohtb.run.runs import load
from cohtb.run.spec import RunSpec

MACHINE = "westmere-ex-8s-c3"   # the socket machine on the patched build (docs/gem5.md)


UNUSABLE = gem5.unusable(MACHINE)
pytestmark = [pytest.mark.gem5, pytest.mark.skipif(UNUSABLE is not None, reason=UNUSABLE or "")]


@pytest.mark.parametrize("spec", [s for s in atomicity_plan(MACHINE) if s.sockets == 2], ids=lambda s: s.policy)
def test_locked_instructions_lose_no_increment_on_the_socket_machine(tmp_path, spec):
    """The locked-instruction check's 2x4 runs (the atomicity plan): every core hammers one line with one locked
    instruction; a snoop that took the line between a locked read and its write would lose an increment."""
    [outcome] = launch([spec], tmp_path, jobs=1, timeout=3600)
    assert outcome.status == "done", outcome.error
    w = load(tmp_path / spec.id).manifest.workload.model_dump()
    assert (w["count"], w["lost_increments"], w["invariants"]) == (spec.cores * spec.ops, 0, "ok")


def test_a_transfer_costs_more_with_every_socket_link(tmp_path):
    """cclat's M-state load: the owner on core 0, the target beside it, one hop and two hops away (glueless-8s)."""
    specs = [RunSpec("cclat", "load", "M", 8, 2, 20, topology="glueless-8s", machine=MACHINE, traced=False,
                     extra=("--target", str(t), "--interleave", "8", "--home", "0")) for t in (1, 2, 8)]
    outcomes = launch(specs, tmp_path, jobs=1, timeout=3600)
    assert [o.status for o in outcomes] == ["done"] * 3, [o.error for o in outcomes]
    by_hops = {c.hops: c.median_cycles for s in specs for c in cells(load(tmp_path / s.id))}
    assert sorted(by_hops) == [0, 1, 2] and by_hops[0] < by_hops[1] < by_hops[2], by_hops


def test_the_ticket_lock_run_that_lost_a_locked_xadd_on_stock_chi_ends(tmp_path):
    """Seed 000's 1x4 ticket-lock run, repetition 3: on stock CHI two lock xadds read the same tail, a ticket was
    handed out twice and a waiter spun for ever (docs/machine.md, "Locked RMW on stock CHI"); on the patched build
    (westmere-ex-8s-c3) it ends with its window. A regression shows as this run's timeout."""
    spec = RunSpec("open_close", "locked", "shared", 1, 4, warmup_us=50, window_us=200, interval_us=10,
                   skew_ns=20000, seed=3, extra=("--spinlock", "ticket"), machine=MACHINE, traced=False)
    [outcome] = launch([spec], tmp_path, jobs=1, timeout=900)
    assert outcome.status == "done", outcome.error
