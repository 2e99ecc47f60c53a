"""cohtb ingest of a CHI ProtocolTrace (the socket machine): a core's L1D transactions, from the request that opens
one to its `Final`, become the same completion-time events as MESI_Two_Level's (docs/gem5.md, "CHI"); snoops are
evidence at the old holder; the other controllers are counted, not read; bad input is one line naming the line."""

import gzip
import json
import re
from pathlib import Path

import pytest

from cohtb.analysis.analyse import analyse_event_file
from cohtb.cli import main
from cohtb.contract import L1_STATES, Kind
from cohtb.errors import CohtbError
from cohtb.trace import events as ev
from cohtb.trace import ingest

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
# gem5's sequencer line when it answers a core: version = the core's sequencer (its L1D's and L1I's alike)
SEQ_DONE = re.compile(r"^\s*(\d+)\s+(\d+)\s+Seq\s+Done\s+>\s+\[0x[0-9a-f]+, line (0x[0-9a-f]+)\]\s*(\d+) cycles")


# Two sockets of two cores, numbered as socket_chi.py numbers them: homes 0-1, socket caches 2-3, then each core's
# L1D and L1I (placement.chi_l1d_version).
L1D = [4, 6, 8, 10]
SOCKETS = [0, 0, 1, 1]


def chi(tick: int, version: int, event: str, frm: str, to: str, line: int = 0x40) -> str:
    """A line as gem5 writes it: the event right-aligned in 20 columns, so a longer one runs into `Cache`."""
    return f"{tick:15d} {version:3d} {'Cache':>10s}{event:>20s} {frm:>6s}>{to:<6s} [{line:#x}, line {line:#x}] \n"


def data(tick: int, version: int, event: str) -> str:
    """A line's data: two 32-byte messages (the CHI nodes' data channel), the second a cycle later; gem5 answers the
    core at the second."""
    return chi(tick, version, event, "BUSY_INTR", "BUSY_BLKD") + chi(tick + 1, version, event, "BUSY_BLKD", "BUSY_BLKD")


def events_of(tmp_path, text: str, **kw):
    trace = tmp_path / "t.txt"
    trace.write_text(text)
    counts = ingest.ingest(trace, tmp_path / "t.events", SOCKETS, l1d_versions=L1D, **kw)
    _, recs = ev.read_all(tmp_path / "t.events")
    rows = [(int(r["tick"]), int(r["core"]), Kind(int(r["kind"])).name, L1_STATES[int(r["l1_state"])]) for r in recs]
    return rows, counts


def test_a_miss_is_an_event_when_gem5_answers_the_core_and_a_hit_is_none(tmp_path):
    rows, counts = events_of(tmp_path, "".join([
        chi(10, 4, "Load", "I", "BUSY_BLKD"), chi(11, 4, "SendReadShared", "BUSY_BLKD", "BUSY_INTR"),
        data(30, 4, "CompData_SC"),
        chi(31, 4, "CheckCacheFill", "BUSY_BLKD", "BUSY_INTR"), chi(32, 4, "Final", "BUSY_INTR", "SC"),
        chi(40, 4, "Load", "SC", "BUSY_BLKD"), chi(41, 4, "LoadHit", "BUSY_BLKD", "BUSY_BLKD"),
        chi(41, 4, "Final", "BUSY_BLKD", "SC"),
        chi(50, 6, "Store", "I", "BUSY_BLKD"), data(70, 6, "CompData_UD_PD"),
        chi(72, 6, "Final", "BUSY_INTR", "UD"),
        chi(80, 6, "Store", "UD", "BUSY_BLKD"), chi(81, 6, "Final", "BUSY_INTR", "UD"),
    ]))
    assert rows == [(31, 0, "READ", "IS"), (71, 1, "WRITE", "IM")]
    assert counts["chi_requests"] == 2 and counts["chi_hits"] == 2 and counts["chi_open_at_end"] == 0


def test_upgrades_silent_and_not(tmp_path):
    rows, _ = events_of(tmp_path, "".join([
        chi(10, 4, "Store", "SC", "BUSY_BLKD"), chi(18, 4, "Comp_UC", "BUSY_INTR", "BUSY_BLKD"),
        chi(18, 4, "CheckUpgrade_FromStore", "BUSY_BLKD", "BUSY_BLKD"), chi(20, 4, "Final", "BUSY_INTR", "UD"),
        chi(30, 8, "Store", "UC", "BUSY_BLKD"), chi(31, 8, "Final", "BUSY_INTR", "UD"),
        # an upgrade whose copy a snoop takes on the way (a hazard) is answered when its data comes, as a miss
        chi(40, 10, "Store", "SC", "BUSY_BLKD"), chi(41, 10, "SendCleanUnique", "BUSY_BLKD", "BUSY_INTR"),
        chi(45, 10, "SnpUnique", "BUSY_INTR", "BUSY_BLKD"), chi(46, 10, "RestoreFromHazard", "BUSY_BLKD", "BUSY_INTR"),
        chi(50, 10, "Comp_UC", "BUSY_INTR", "BUSY_BLKD"), chi(50, 10, "CheckUpgrade_FromStore", "BUSY_BLKD", "BUSY_BLKD"),
        data(58, 10, "CompData_UC"), chi(60, 10, "Final", "BUSY_INTR", "UD"),
    ]))
    assert rows == [(18, 0, "WRITE", "SM"), (30, 2, "WRITE", "E"), (45, 3, "INV", "S"), (59, 3, "WRITE", "IM")]


def read_ud(tick: int, version: int = 4) -> list[str]:
    """A load miss answered unique and dirty (a socket cache handing up a written-back line)."""
    return [chi(tick, version, "Load", "I", "BUSY_BLKD"), data(tick + 10, version, "CompData_UD_PD"),
            chi(tick + 12, version, "Final", "BUSY_INTR", "UD")]


def test_the_first_store_into_a_line_a_read_brought_unique_dirty_is_a_write(tmp_path):
    """A socket cache may answer a read with a written-back line unique and dirty (UD): the reader's first store (or
    atomic) is a hit with no request, yet it is its write (a writer's snoop later takes a line this core wrote), as
    UC -> UD is. Only the first; a store held back while the load's fill is busy counts when it is taken."""
    rows, counts = events_of(tmp_path, "".join([
        *read_ud(10),
        chi(30, 4, "Load", "UD", "BUSY_BLKD"), chi(31, 4, "Final", "BUSY_BLKD", "UD"),
        chi(40, 4, "Store", "UD", "BUSY_BLKD"), chi(41, 4, "Final", "BUSY_BLKD", "UD"),
        chi(50, 4, "Store", "UD", "BUSY_BLKD"), chi(51, 4, "Final", "BUSY_BLKD", "UD"),
        *read_ud(110, version=6)[:2],
        chi(122, 6, "Store", "BUSY_BLKD", "BUSY_BLKD"),   # stalled behind the fill, retried once it ends
        chi(123, 6, "Final", "BUSY_INTR", "UD"), chi(124, 6, "Store", "UD", "BUSY_BLKD"),
        chi(125, 6, "Final", "BUSY_BLKD", "UD"),
        *read_ud(210, version=8),
        chi(230, 8, "AtomicStore", "UD", "BUSY_BLKD"), chi(231, 8, "Final", "BUSY_BLKD", "UD"),
    ]))
    assert rows == [(21, 0, "READ", "IS"), (40, 0, "WRITE", "E"), (121, 1, "READ", "IS"), (124, 1, "WRITE", "E"),
                    (221, 2, "READ", "IS"), (230, 2, "WRITE", "E")]
    assert counts["chi_stores_after_read_ud"] == 3


@pytest.mark.parametrize("loses", [
    [chi(30, 4, "SnpUnique", "UD", "BUSY_BLKD"), chi(31, 4, "Final", "BUSY_BLKD", "I")],
    [chi(30, 4, "Local_Eviction", "UD", "BUSY_BLKD"), chi(31, 4, "SendWriteBackOrWriteEvict", "BUSY_BLKD", "BUSY_INTR"),
     chi(32, 4, "Final", "BUSY_INTR", "I")],
    [chi(30, 4, "SnpCleanInvalid", "UD", "BUSY_BLKD"), chi(31, 4, "Final", "BUSY_BLKD", "I")],
], ids=["taken by a writer", "evicted", "recalled"])
def test_a_read_ud_line_whose_copy_is_lost_before_a_store_is_written_by_a_request(tmp_path, loses):
    """Once the copy a read brought UD is gone, the core's store is a miss (its own WRITE), and a later store into
    the line that miss brought UD is a plain hit: the read's mark does not outlive the copy."""
    rows, counts = events_of(tmp_path, "".join([
        *read_ud(10), *loses,
        chi(40, 4, "Store", "I", "BUSY_BLKD"), data(50, 4, "CompData_UD_PD"), chi(52, 4, "Final", "BUSY_INTR", "UD"),
        chi(60, 4, "Store", "UD", "BUSY_BLKD"), chi(61, 4, "Final", "BUSY_BLKD", "UD"),
    ]))
    assert [r for r in rows if r[2] in ("READ", "WRITE")] == [(21, 0, "READ", "IS"), (51, 0, "WRITE", "IM")]
    assert counts["chi_stores_after_read_ud"] == 0


def test_a_read_ud_line_a_snoop_shares_is_written_by_an_upgrade(tmp_path):
    rows, counts = events_of(tmp_path, "".join([
        *read_ud(10),
        chi(30, 4, "SnpShared", "UD", "BUSY_BLKD"), chi(31, 4, "Final", "BUSY_BLKD", "SC"),
        chi(40, 4, "Store", "SC", "BUSY_BLKD"), chi(48, 4, "Comp_UC", "BUSY_INTR", "BUSY_BLKD"),
        chi(48, 4, "CheckUpgrade_FromStore", "BUSY_BLKD", "BUSY_BLKD"), chi(50, 4, "Final", "BUSY_INTR", "UD"),
        chi(60, 4, "Store", "UD", "BUSY_BLKD"), chi(61, 4, "Final", "BUSY_BLKD", "UD"),
    ]))
    assert rows == [(21, 0, "READ", "IS"), (30, 0, "FWD_GETS", "M"), (48, 0, "WRITE", "SM")]
    assert counts["chi_stores_after_read_ud"] == 0


def test_a_snoop_after_the_answer_meets_the_new_data(tmp_path):
    """gem5 answers the core when the data comes; the line stays busy for the fill (and a victim's eviction), and a
    snoop served meanwhile takes the new copy: the write's transfer onward, not a core without a copy."""
    rows, counts = events_of(tmp_path, "".join([
        chi(10, 4, "Store", "I", "BUSY_BLKD"), data(20, 4, "CompData_UC"),
        chi(21, 4, "CheckCacheFill", "BUSY_BLKD", "BUSY_INTR"),
        chi(25, 4, "SnpUnique", "BUSY_INTR", "BUSY_BLKD"), chi(26, 4, "RestoreFromHazard", "BUSY_BLKD", "BUSY_INTR"),
        chi(30, 4, "Final", "BUSY_INTR", "I"),
        chi(40, 6, "Load", "I", "BUSY_BLKD"), data(50, 6, "CompData_UC"),
        chi(51, 6, "CheckCacheFill", "BUSY_BLKD", "BUSY_INTR"),
        chi(55, 6, "SnpShared", "BUSY_INTR", "BUSY_BLKD"), chi(56, 6, "RestoreFromHazard", "BUSY_BLKD", "BUSY_INTR"),
        chi(60, 6, "Final", "BUSY_INTR", "SC"),
    ]))
    assert rows == [(21, 0, "WRITE", "IM"), (25, 0, "FWD_GETX", "M"), (51, 1, "READ", "IS"), (55, 1, "FWD_GETS", "E")]
    assert counts["chi_snoops_without_copy"] == 0


def test_snoops_are_evidence_at_the_old_holder(tmp_path):
    rows, counts = events_of(tmp_path, "".join([
        chi(10, 4, "SnpShared", "UD", "BUSY_BLKD"), chi(12, 4, "Final", "BUSY_BLKD", "SC"),
        chi(20, 6, "SnpUnique", "UC", "BUSY_BLKD"), chi(22, 6, "Final", "BUSY_BLKD", "I"),
        chi(30, 8, "SnpCleanInvalid", "SC", "BUSY_BLKD"), chi(32, 8, "Final", "BUSY_BLKD", "I"),
        chi(40, 10, "SnpCleanInvalid", "UD", "BUSY_BLKD"), chi(42, 10, "Final", "BUSY_BLKD", "I"),
        chi(50, 4, "SnpShared", "SD", "BUSY_BLKD"), chi(52, 4, "Final", "BUSY_BLKD", "SD"),
    ]))
    assert rows == [(10, 0, "FWD_GETS", "M"), (20, 1, "FWD_GETX", "E"), (30, 2, "INV", "S"), (40, 3, "EVICT", "M")]
    assert counts["chi_recalls"] == 1 and counts["chi_shared_snoops"] == 1


def test_evictions_and_snoops_on_a_writeback(tmp_path):
    rows, _ = events_of(tmp_path, "".join([
        chi(10, 4, "Local_Eviction", "SC", "BUSY_BLKD"), chi(12, 4, "Final", "BUSY_BLKD", "I"),
        chi(20, 6, "Local_Eviction", "UD", "BUSY_BLKD"), chi(21, 6, "SendWriteBackOrWriteEvict", "BUSY_BLKD", "BUSY_INTR"),
        chi(25, 6, "SnpShared", "BUSY_INTR", "BUSY_BLKD"), chi(26, 6, "RestoreFromHazard", "BUSY_BLKD", "BUSY_INTR"),
        chi(30, 6, "Final", "BUSY_INTR", "I"),
        # a writer takes the line from the writeback buffer: its Fwd_GETX, then the copy gone, as MESI's WB_Ack
        chi(40, 8, "Local_Eviction", "UD", "BUSY_BLKD"), chi(41, 8, "SendWriteBackOrWriteEvict", "BUSY_BLKD", "BUSY_INTR"),
        chi(43, 8, "SnpUnique", "BUSY_INTR", "BUSY_BLKD"), chi(44, 8, "RestoreFromHazard", "BUSY_BLKD", "BUSY_INTR"),
        chi(45, 8, "Final", "BUSY_INTR", "I"),
    ]))
    assert rows == [(12, 0, "EVICT", "S"), (25, 1, "FWD_GETS", "M_I"), (30, 1, "EVICT", "M_I"),
                    (43, 2, "FWD_GETX", "M_I"), (45, 2, "EVICT", "M_I")]


def test_stalls_other_controllers_and_long_event_names_are_not_events(tmp_path):
    rows, counts = events_of(tmp_path, "".join([
        chi(10, 4, "Load", "I", "BUSY_BLKD"),
        chi(11, 4, "SnpShared", "BUSY_BLKD", "BUSY_BLKD"),     # a snoop held back until the load's Final
        chi(12, 4, "Store", "BUSY_BLKD", "BUSY_BLKD"),         # a second request held back
        chi(13, 4, "DataArrayWriteOnFill", "BUSY_INTR", "BUSY_INTR"),
        chi(14, 2, "ReadShared", "UD_RU", "BUSY_BLKD"),        # the socket cache: counted only
        chi(15, 5, "Load", "I", "BUSY_BLKD"),                  # core 0's L1I
        data(20, 4, "CompData_SC"), chi(21, 4, "Final", "BUSY_INTR", "SC"),
        # an eviction that must wait for a replacement buffer: logged with its next state, then retried
        chi(30, 6, "Local_Eviction", "UD", "BUSY_BLKD").replace("] \n", "] Resource Stall\n"),
        chi(35, 6, "Local_Eviction", "UD", "BUSY_BLKD"), chi(38, 6, "Final", "BUSY_INTR", "I"),
    ]))
    assert rows == [(21, 0, "READ", "IS"), (38, 1, "EVICT", "M_I")]
    assert counts["chi_stalls"] == 3 and counts["chi_other_caches"] == 2


def test_a_load_whose_copy_is_taken_before_its_data(tmp_path):
    rows, _ = events_of(tmp_path, "".join([
        chi(10, 4, "Load", "I", "BUSY_BLKD"), chi(11, 4, "SendReadShared", "BUSY_BLKD", "BUSY_INTR"),
        chi(15, 4, "SnpCleanInvalid", "BUSY_INTR", "BUSY_BLKD"), chi(16, 4, "RestoreFromHazard", "BUSY_BLKD", "BUSY_INTR"),
        data(20, 4, "CompData_SC"), chi(22, 4, "Final", "BUSY_INTR", "I"),
    ]))
    assert rows == [(21, 0, "READ", "IS_I"), (21, 0, "EVICT", "IS_I")]


@pytest.mark.parametrize("text, where", [
    (chi(10, 4, "Load", "I", "BUSY_BLKD") + chi(11, 4, "Store", "SC", "BUSY_BLKD"),
     ":2: core 0 opens a second transaction on line 0x1 before the first's Final"),
    (chi(10, 4, "Load", "I", "BUSY_BLKD").replace("I>BUSY_BLKD", "I-BUSY_BLKD"), ":1: malformed state change"),
    (chi(10, 4, "Load", "I", "BUSY_BLKD").replace(", line 0x40]", "]"), ":1: malformed Cache transition"),
    (chi(10, 4, "Load", "UD_RU", "BUSY_BLKD"), ":1: L1D state 'UD_RU' is not one an L1 takes"),
    (chi(10, 4, "Load", "I", "BUSY_BLKD") + chi(20, 4, "Final", "BUSY_INTR", "SC"),
     ":2: core 0's miss on line 0x1 closed without gem5 answering the core"),
    (chi(10, 4, "Local_Eviction", "UD", "BUSY_BLKD") + chi(20, 4, "Final", "BUSY_INTR", "UD"),
     ":2: core 0's eviction of line 0x1 closed in UD, not I"),
])
def test_bad_input_names_the_line(tmp_path, text, where):
    trace = tmp_path / "bad.txt"
    trace.write_text(text)
    with pytest.raises(CohtbError, match=re.escape(where)):
        ingest.ingest(trace, tmp_path / "bad.events", SOCKETS, l1d_versions=L1D)
    assert not list(tmp_path.glob("bad.events*"))


def test_a_chi_trace_needs_the_controller_map(tmp_path):
    trace = tmp_path / "t.txt"
    trace.write_text(chi(10, 4, "Load", "I", "BUSY_BLKD"))
    with pytest.raises(CohtbError, match=r":1: a CHI trace \(machine 'Cache'\) needs each core's L1D controller version"):
        ingest.ingest(trace, tmp_path / "t.events", SOCKETS)
    with pytest.raises(CohtbError, match="one core per L1D version"):
        ingest.ingest(trace, tmp_path / "t.events", SOCKETS, l1d_versions=L1D[:3])


def test_versions_come_from_the_controller_map():
    controllers = {"l1": [{"core": 1, "version": 6, "socket": 0}, {"core": 0, "version": 4, "socket": 0}]}
    assert ingest.l1d_versions_of("CHI", controllers) == [4, 6]
    assert ingest.l1d_versions_of("MESI_Two_Level", controllers) is None


@pytest.mark.parametrize("trace", sorted(FIXTURES.glob("chi-*.trace.gz")), ids=lambda p: p.name)
def test_recorded_gem5_traces(tmp_path, trace):
    """A trace recorded on the socket machine (tests/fixtures/traces/README.md), held against another part of gem5:
    every READ and WRITE (but the silent upgrade, which sends nothing) falls at the tick where the core's sequencer
    logs the answer to a request on that line that missed (`Seq Done`, more cycles than a hit), and every
    transaction the reader opens closes."""
    meta = json.loads(trace.with_name(trace.name.replace(".trace.gz", ".json")).read_text())
    counts = ingest.ingest(trace, tmp_path / "r.events", meta["sockets_of_cores"], l1d_versions=meta["l1d_versions"])
    answered = {}
    with gzip.open(trace, "rt") as f:
        for text in f:
            m = SEQ_DONE.match(text)
            if m:
                answered[(int(m.group(2)), int(m.group(3), 16) >> 6, int(m.group(1)))] = int(m.group(4))
    _, recs = ev.read_all(tmp_path / "r.events")
    misses = [(int(r["core"]), int(r["line"]), int(r["tick"])) for r in recs
              if Kind(int(r["kind"])) in (Kind.READ, Kind.WRITE) and L1_STATES[int(r["l1_state"])] != "E"]
    hit_cycles = min(answered.values())
    assert misses and all(answered.get(m, 0) > hit_cycles for m in misses)
    assert counts["events"] == meta["events"] and counts["write"] > 0 and counts["fwd_getx"] > 0 and counts["fwd_gets"] > 0
    assert counts["chi_open_at_end"] == counts["chi_snoops_without_copy"] == 0


def test_cli_reads_the_controller_map_of_a_run(tmp_path, capsys):
    trace = tmp_path / "t.txt"
    trace.write_text(chi(10, 8, "Store", "I", "BUSY_BLKD") + data(20, 8, "CompData_UD_PD")
                     + chi(21, 8, "Final", "BUSY_INTR", "UD"))
    l1 = [{"core": c, "socket": s, "version": v, "icache_version": v + 1} for c, (s, v) in enumerate(zip(SOCKETS, L1D))]
    (tmp_path / "roi.json").write_text(json.dumps({"protocol": "CHI", "controllers": {"l1": l1}}))
    (tmp_path / "manifest.json").write_text(json.dumps({"gem5": {"protocol": "CHI"}, "controllers": {"l1": l1[::-1]}}))
    for name in ("roi.json", "manifest.json"):
        assert main(["ingest", str(trace), str(tmp_path / f"{name}.cohtb"), "--controllers", str(tmp_path / name)]) == 0
        assert ev.read_all(tmp_path / f"{name}.cohtb")[1]["core"].tolist() == [2]
    (tmp_path / "bad.json").write_text(json.dumps({"protocol": "CHI", "controllers": {"l1": [{"core": 0}]}}))
    assert main(["ingest", str(trace), str(tmp_path / "x.cohtb"), "--controllers", str(tmp_path / "bad.json")]) == 2
    assert "bad.json: field 'controllers.l1'" in capsys.readouterr().err
    assert main(["ingest", str(trace), str(tmp_path / "x.cohtb"), "--cores-per-socket", "2"]) == 2
    assert "--controllers RUN/manifest.json" in capsys.readouterr().err


def test_a_bare_chi_event_file_is_reconciled_as_chis(tmp_path, capsys):
    """cohtb replay of an event file alone (an ingest tried on a kept trace) reconciles it as the protocol its
    header's source names: a line written, written back, read back unique and dirty, then read by another core, is
    'dirty handed up' (CHI), not a dirty read gem5 alone saw."""
    events_of(tmp_path, "".join([
        chi(1, 6, "Store", "I", "BUSY_BLKD"), data(2, 6, "CompData_UD_PD"), chi(4, 6, "Final", "BUSY_INTR", "UD"),
        chi(5, 6, "Local_Eviction", "UD", "BUSY_BLKD"), chi(6, 6, "Final", "BUSY_BLKD", "I"),
        *read_ud(10, version=6),
        chi(30, 8, "Load", "I", "BUSY_BLKD"), chi(31, 6, "SnpShared", "UD", "BUSY_BLKD"),
        chi(32, 6, "Final", "BUSY_BLKD", "SC"), data(40, 8, "CompData_SC"), chi(42, 8, "Final", "BUSY_INTR", "SC"),
    ]))
    assert ev.read_all(tmp_path / "t.events")[0].source["protocol"] == "CHI"
    assert analyse_event_file(tmp_path / "t.events", None).gem5.totals.dirtyHandedUp == 1
    assert main(["replay", str(tmp_path / "t.events"), "--lines", "0"]) == 0
    out = capsys.readouterr().out
    assert "against gem5: agrees: unexplained 0 of" in out and "dirty handed up 1;" in out
