"""The pairing of the monitor's transfers and dirty reads with gem5's evidence (cohtb.analysis.reconcile,
docs/gem5.md "Reconciling"): streams whose pairing is known by construction, the interleavings of
contended runs among them, and the recorded gem5 traces."""

import json
from pathlib import Path

import numpy as np
import pytest

from cohtb.analysis.reconcile import LineCheck, reconcile
from cohtb.contract import L1State, Kind, contiguous_socket_map
from cohtb.trace import events as ev
from cohtb.trace import ingest

R, W, E, FGS, FGX, INV = Kind.READ, Kind.WRITE, Kind.EVICT, Kind.FWD_GETS, Kind.FWD_GETX, Kind.INV
S = L1State
FIXTURES = Path(__file__).parent / "fixtures" / "traces"


def stream(*events: tuple) -> np.ndarray:
    """(core, kind, l1_state) on line 1, or (line, core, kind, l1_state); core c is in socket c // 2."""
    recs = np.zeros(len(events), dtype=ev.RECORD)
    for i, e in enumerate(events):
        line, core, kind, state = e if len(e) == 4 else (1, *e)
        recs[i] = (10 * i, line, core, core // 2, int(kind), int(state), 0)
    return recs


def check(*events: tuple, dirty_up: bool = False) -> LineCheck:
    return reconcile(stream(*events), sockets=4, dirty_up=dirty_up).totals()


def test_transfer_confirmed_by_fwd_getx_at_the_old_owner():
    c = check((0, W, S.IM), (0, FGX, S.M), (1, W, S.IM))
    assert (c.transfersMatched, c.unexplained, c.explained) == (1, 0, 0)


def test_transfer_after_a_dirty_read_is_confirmed_by_inv_at_the_old_owner():
    """0 writes; 1 reads it dirty (Fwd_GETS at 0, both S); 2 writes: Inv at 0 and at 1, only 0's confirms."""
    c = check((0, W, S.IM), (0, FGS, S.M), (1, R, S.IS), (0, INV, S.S), (1, INV, S.S), (2, W, S.IM))
    assert (c.dirtyReadsMatched, c.transfersMatched, c.unexplained) == (1, 1, 0)


def test_two_upgrades_racing():
    """0 wrote, 1 read it dirty; both upgrade. The L2 takes 1's first: Inv at 0 (in SM), 1 gets M; then 0's,
    forwarded to 1. Two transfers, each confirmed at its own previous owner, in L2 order."""
    c = check((0, W, S.IM), (0, FGS, S.M), (1, R, S.IS), (0, INV, S.SM), (1, W, S.SM), (1, FGX, S.M), (0, W, S.IM))
    assert (c.transfersMatched, c.dirtyReadsMatched, c.unexplained) == (2, 1, 0)


def test_a_reader_completing_between_the_invalidation_and_the_write():
    """IS_I: a reader's data lands (READ + EVICT) after 2's Inv reached the old owner 0 and before 2's WRITE
    completes; 0's evidence still waits for the transfer from 0."""
    c = check((0, W, S.IM), (0, FGS, S.M), (1, R, S.IS), (0, INV, S.S), (3, R, S.IS_I), (3, E, S.IS_I), (2, W, S.IM))
    assert (c.transfersMatched, c.dirtyReadsMatched, c.unexplained) == (1, 1, 0)


def test_several_owners_waiting_on_one_line():
    """Evidence of two transfers in flight at once (32 threads released together): one slot per line would lose one."""
    c = check((0, W, S.IM), (0, FGX, S.M), (1, W, S.IM), (1, FGX, S.M), (2, W, S.IM), (2, FGX, S.M), (3, W, S.IM))
    assert (c.transfersMatched, c.unexplained) == (3, 0)


def test_monitor_only_and_gem5_only_are_unexplained():
    c = check((0, W, S.IM), (1, W, S.IM))               # no evidence at 0
    assert (c.transfersMonitorOnly, c.unexplained) == (1, 1)
    c = check((0, W, S.IM), (0, FGX, S.M), (0, R, S.IS))  # 0 forwarded, then got it back with no transfer in between
    assert (c.transfersGem5Only, c.unexplained) == (1, 1)
    c = check((0, W, S.IM), (0, FGS, S.M), (0, R, S.IS))
    assert (c.dirtyReadsGem5Only, c.unexplained) == (1, 1)


def test_named_remainders():
    c = check((3, FGS, S.M), (1, R, S.IS))                # 3 wrote it before the trace began
    assert (c.ownerBeforeTrace, c.unexplained, c.dirtyReadsMatched) == (1, 0, 0)
    c = check((0, W, S.IM), (0, FGX, S.M))                # the requester completed after the trace ended
    assert (c.requesterAfterTrace, c.unexplained) == (1, 0)
    c = check((0, R, S.IS), (0, FGX, S.E), (1, W, S.IM))  # 0 held it exclusive and clean: no transfer by rule W
    assert (c.cleanForwards, c.transfersMatched, c.unexplained) == (1, 0, 0)


def test_invalidations_of_sharers_are_not_evidence():
    c = check((0, R, S.IS), (1, R, S.IS), (0, INV, S.S), (1, INV, S.S), (2, W, S.IM), (2, FGS, S.M), (0, R, S.IS))
    assert (c.dirtyReadsMatched, c.unexplained, c.explained, c.transfersMatched) == (1, 0, 0, 0)


def test_lines_are_paired_separately():
    c = check((1, 0, W, S.IM), (2, 0, FGX, S.M), (1, 1, W, S.IM))
    # line 1's transfer finds no evidence on line 1; line 2's Fwd_GETX is at a core that never wrote line 2
    assert (c.transfersMonitorOnly, c.transfersMatched, c.ownerBeforeTrace, c.transfersGem5Only) == (1, 0, 1, 0)


@pytest.mark.skipif(not list(FIXTURES.glob("*.trace.gz")), reason="no recorded gem5 traces in tests/fixtures/traces")
@pytest.mark.parametrize("trace", sorted(FIXTURES.glob("*.trace.gz")), ids=lambda p: p.name)
def test_recorded_gem5_traces_reconcile(tmp_path, trace):
    """Every transfer and dirty read of a recorded gem5 run is matched; what gem5 shows beyond them is named."""
    meta = json.loads(trace.with_name(trace.name.replace(".trace.gz", ".json")).read_text())
    smap = (ingest.read_socket_map(str(trace.with_name(meta["socket_map"]))) if "socket_map" in meta
            else meta.get("sockets_of_cores") or contiguous_socket_map(meta["cores"], meta["sockets"]))
    ingest.ingest(trace, tmp_path / "r.events", smap, l1d_versions=meta.get("l1d_versions"))   # CHI: its L1Ds
    header, recs = ev.read_all(tmp_path / "r.events")
    c = reconcile(recs, header.num_sockets).totals()
    assert c.transfersMatched > 0 and c.unexplained == 0, c


def test_a_writeback_forward_overtaken_by_its_evict_is_named():
    """0 wrote, starts a writeback (M_I), serves a reader from the buffer (Fwd_GETS in M_I); its WB_Ack (EVICT)
    completes before the reader's data, so the monitor sees no dirty owner: gem5's dirty read is explained."""
    c = check((0, W, S.IM), (0, FGS, S.M_I), (0, E, S.SINK_WB_ACK), (1, R, S.IS))
    assert (c.writebackForwards, c.dirtyReadsGem5Only, c.unexplained) == (1, 0, 0)


def test_dirty_data_handed_up_with_a_read_is_named():
    """A CHI socket cache holding a written-back line dirty may answer a read with it unique and dirty: the reader
    (the core that wrote it back, or another) then serves a later reader in M without a store of its own. For the
    counting rules only a writer is a dirty owner, so the monitor counts no dirty read: explained, named. Once
    the core writes again, a dirty read from it is the monitor's."""
    handed_up = ((0, W, S.IM), (0, E, S.M_I), (0, R, S.IS), (0, FGS, S.M), (1, R, S.IS), (0, W, S.SM))
    c = check(*handed_up, dirty_up=True)
    assert (c.dirtyHandedUp, c.dirtyReadsGem5Only, c.unexplained) == (1, 0, 0)
    # MESI_Two_Level's L1 reaches M only by a WRITE event: there the same stream is an event lost, unexplained
    c = check(*handed_up)
    assert (c.dirtyHandedUp, c.dirtyReadsGem5Only, c.unexplained) == (0, 1, 1)
    # as a 002-kernel-fs run had it: 0 wrote, 1 read it dirty and wrote, 1 wrote it back, 0 read it (UD), 3 read
    c = check((0, W, S.IM), (0, FGS, S.M), (1, R, S.IS), (0, INV, S.S), (1, W, S.SM), (1, E, S.M_I),
              (0, R, S.IS), (0, FGS, S.M), (3, R, S.IS), (0, INV, S.S), (3, W, S.SM), (3, FGS, S.M), (0, R, S.IS),
              dirty_up=True)
    assert (c.dirtyHandedUp, c.dirtyReadsGem5Only, c.unexplained) == (1, 0, 0)
    c = check((0, W, S.IM), (0, E, S.M_I), (0, W, S.IM), (0, FGS, S.M), (1, R, S.IS), (0, W, S.SM), dirty_up=True)
    assert c.dirtyHandedUp == 0   # written again since: an ordinary dirty read, which the monitor counts
    assert c.dirtyReadsMatched == 1 and c.unexplained == 0
    # a writer's Fwd_GETX at such a reader stays unexplained: in the two 002-kernel-fs runs that had it (CPU 3's
    # runqueues line) the reader had stored into the line it held UD, a hit that makes no event, so the
    # forward is a transfer the stream lacks its WRITE for (docs/gem5.md)
    c = check((3, W, S.IM), (3, E, S.M_I), (3, R, S.IS), (3, FGX, S.M), (7, W, S.IM), (7, FGX, S.M), (3, W, S.IM),
              dirty_up=True)
    assert (c.dirtyHandedUp, c.transfersGem5Only, c.unexplained) == (0, 1, 1)


def test_socket_maps_number_sockets_without_gaps(tmp_path):
    from cohtb.errors import CohtbError

    with pytest.raises(CohtbError, match=r"none in \[1\]"):
        ingest.read_socket_map("0,2")
    f = tmp_path / "map.txt"
    f.write_text("0 0\n1 2\n")
    with pytest.raises(CohtbError, match=r"map.txt: sockets must be numbered 0..2 with a core in each; none in \[1\]"):
        ingest.read_socket_map(str(f))
    with pytest.raises(CohtbError, match="cannot read the socket map"):
        ingest.read_socket_map(str(tmp_path))
    trace = tmp_path / "t.txt"
    trace.write_text(f"{10:15d} {0:3d} {'L1Cache':>10s}{'Store':>20s} {'E':>6s}>{'M':<6s} [0x40, line 0x40] \n")
    with pytest.raises(CohtbError, match=r"socket map: sockets must be numbered 0..2 with a core in each; none in \[1\]"):
        ingest.ingest(trace, tmp_path / "t.events", [0, 2])
    assert not list(tmp_path.glob("t.events*"))


def test_a_run_that_shared_nothing_agrees_with_nothing_to_pair():
    """Per-CPU counters that never leave their core: no transfer, no dirty read, no gem5 evidence. That agrees;
    transfers without any evidence (a stream not from gem5) are not checked."""
    from cohtb.analysis.analyse import GemCheck
    from cohtb.analysis.reconcile import LineCheck

    quiet = GemCheck(event_format=2, evidence=0, totals=LineCheck(), lines={}, tolerance=0.01, contended=[], outside=[])
    assert quiet.verdict.startswith("agrees: nothing to pair")
    loud = GemCheck(event_format=2, evidence=0, totals=LineCheck(transfersMonitorOnly=3), lines={}, tolerance=0.01,
                    contended=[], outside=[])
    assert loud.verdict.startswith("not checked")
