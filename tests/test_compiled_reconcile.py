"""The compiled reconciliation against its specification, the Python Reconciler over IdealModel: every line's counts
in the same order, the matrix, the kind counts and the totals, on random streams with every evidence state the
pairing classes (CHI's dirty handing-up on and off) and on bundled runs of both protocols (never against the
RTL)."""

import numpy as np
import pytest

from cohtb.analysis import compiled_reconcile, reconcile
from cohtb.contract import Kind, L1State
from cohtb.errors import CohtbError
from cohtb.places import REFERENCE_RUNS
from cohtb.run.runs import discover
from cohtb.trace.events import RECORD
from cohtb.verify.random_events import random_stream


def assert_same(spec: reconcile.Reconciler, compiled: reconcile.Reconciler) -> None:
    assert list(compiled.ideal.stats.items()) == list(spec.ideal.stats.items())   # first-event order: ranks tie so
    assert compiled.ideal.matrix == spec.ideal.matrix and compiled.ideal.kinds == spec.ideal.kinds
    assert list(compiled.lines.items()) == list(spec.lines.items()) and compiled.totals() == spec.totals()
    assert list(compiled.ideal.lines.items()) == list(spec.ideal.lines.items())   # the final states, in order


def with_every_evidence_state(recs: np.ndarray, seed: int) -> np.ndarray:
    """The stream with a share of its forwards from a writeback buffer (M_I) and of its reads' lines in M at the
    forward: every class of _settle is reached."""
    rng = np.random.default_rng(seed)
    recs = recs.copy()
    fwd_gets = np.flatnonzero(recs["kind"] == Kind.FWD_GETS)
    recs["l1_state"][fwd_gets[rng.random(len(fwd_gets)) < 0.3]] = L1State.M_I
    return recs


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("dirty_up", [False, True])
def test_random_streams_give_the_python_counts(seed, dirty_up):
    header, recs = random_stream(20_000, cores=16, sockets=4, hot_lines=6, cold_lines=300, seed=seed)
    recs = with_every_evidence_state(recs, seed)
    spec = reconcile.reconcile(recs, header.num_sockets, dirty_up)
    assert_same(spec, compiled_reconcile.reconcile(recs, header.num_sockets, dirty_up))
    totals = spec.totals()
    assert totals.transfersMatched and totals.writebackForwards and totals.cleanForwards   # the classes were reached
    assert not dirty_up or totals.dirtyHandedUp


def test_every_core_the_contract_allows_is_followed():
    header, recs = random_stream(5_000, cores=64, sockets=8, seed=4)
    assert_same(reconcile.reconcile(recs, 8), compiled_reconcile.reconcile(recs, 8))


def test_bundled_runs_of_both_protocols_give_the_python_counts():
    """The smallest bundled runs of each protocol (the main job holds all of them: benchmarks/main_job.py)."""
    runs = sorted(discover([REFERENCE_RUNS]), key=lambda r: r.events_file().stat().st_size)
    for protocol in ("MESI_Two_Level", "CHI"):
        for run in [r for r in runs if r.manifest.gem5.protocol == protocol][:3]:
            header, recs = run.events()
            dirty_up = protocol == "CHI"
            assert_same(reconcile.reconcile(recs, header.num_sockets, dirty_up),
                        compiled_reconcile.reconcile(recs, header.num_sockets, dirty_up))


def test_a_line_evicted_first_enters_the_checks_in_the_python_s_order():
    """Reconciler.lines takes a line at its first read or write, IdealModel.lines at each time its state becomes
    tracked again: neither is the order of the lines' first events."""
    recs = np.zeros(5, dtype=RECORD)
    for i, (line, core, kind) in enumerate([(1, 0, Kind.EVICT), (2, 1, Kind.READ), (1, 1, Kind.READ),
                                            (2, 1, Kind.EVICT), (2, 0, Kind.WRITE)]):
        recs[i]["line"], recs[i]["core"], recs[i]["kind"] = line, core, kind
    spec, compiled = reconcile.reconcile(recs, 1), compiled_reconcile.reconcile(recs, 1)
    assert list(spec.lines) == [2, 1] and list(spec.ideal.lines) == [1, 2]
    assert_same(spec, compiled)


def test_an_event_the_python_would_refuse_stops_it_in_one_line():
    header, recs = random_stream(100, cores=4, sockets=2, seed=5)
    recs["kind"][50] = 9
    with pytest.raises(CohtbError, match="unknown kind"):
        compiled_reconcile.reconcile(recs, header.num_sockets)
