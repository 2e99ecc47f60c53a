"""cohtb ingest: the native tool against a plain Python reading of the same trace lines, and every
kind of bad input: a clear error naming the line, a non-zero exit, no event file left behind."""

import gzip
import re
import subprocess
from pathlib import Path

import pytest

from cohtb.trace import events as ev
from cohtb.contract import L1_STATES, Kind, contiguous_socket_map
from cohtb.trace import ingest
from cohtb.verify import synthetic_trace
from cohtb.errors import CohtbError

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
L1 = re.compile(r"^\s*(\d+)\s+(\d+)\s+L1Cache\s+(\S+)\s+(\S*)>(\S*)\s+\[0x[0-9a-f]+, line (0x[0-9a-f]+)\]\s*(.*)$")


def python_reading(lines, socket_of_core: list[int]) -> list[tuple]:
    """docs/gem5.md's table of the transitions that are events, applied line by line in Python (the
    reference for the native tool)."""
    R, W, E = Kind.READ, Kind.WRITE, Kind.EVICT
    out, ifetches = [], set()
    for text in lines:
        m = L1.match(text)
        if not m or "Stall" in m.group(7):
            continue
        tick, core, event, frm, to, line = (int(m.group(1)), int(m.group(2)), m.group(3), m.group(4), m.group(5),
                                            int(m.group(6), 16) >> 6)
        kinds = []
        if event == "Ifetch" and frm in ("NP", "I"):
            ifetches.add((core, line))
        elif event in ("Data_all_Acks", "DataS_fromL1", "Data_Exclusive") and frm in ("IS", "IS_I"):
            if (core, line) in ifetches:
                ifetches.discard((core, line))
            else:
                kinds = [R, E] if to == "I" else [R]
        elif (event, frm) in (("Data_all_Acks", "IM"), ("Ack_all", "SM"), ("Store", "E")):
            kinds = [W]
        elif (event, frm) in (("L1_Replacement", "S"), ("WB_Ack", "M_I"), ("WB_Ack", "SINK_WB_ACK"), ("Inv", "E"), ("Inv", "M")):
            kinds = [E]
        elif event == "Inv" and frm in ("S", "SM"):
            kinds = [Kind.INV]
        elif event in ("Fwd_GETS", "Fwd_GETX"):
            kinds = [Kind[event.upper()]]
        state = L1_STATES.index(frm) if frm in L1_STATES else 0
        out += [(tick, line, core, socket_of_core[core], int(k), state) for k in kinds]
    return out


def as_tuples(recs) -> list[tuple]:
    return [tuple(int(r[k]) for k in ("tick", "line", "core", "socket", "kind", "l1_state")) for r in recs]


def test_matches_a_python_reading_of_the_same_lines(tmp_path):
    lines = list(synthetic_trace.lines(20000, cores=32, seed=4))
    lines.insert(100, f"{5:15d} {3:3d} {'L1Cache':>10s}{'Store':>20s} {'I':>6s}>{'IM':<6s} [0x100, line 0x100] Resource Stall\n")
    trace = tmp_path / "t.gz"
    with gzip.open(trace, "wt") as f:
        f.writelines(lines)
    counts = ingest.ingest(trace, tmp_path / "t.events", contiguous_socket_map(32, 8))
    _, recs = ev.read_all(tmp_path / "t.events")
    assert as_tuples(recs) == python_reading(lines, contiguous_socket_map(32, 8))
    assert counts["lines"] == len(lines) and counts["stalls"] == 1 and counts["events"] == len(recs)


def test_reads_a_pipe(tmp_path):
    lines = "".join(synthetic_trace.lines(3000, cores=4, seed=2))
    exe = ingest.tool_path()
    proc = subprocess.run([str(exe), "-", str(tmp_path / "p.events"), "--socket-map", "0,0,1,1"], input=lines,
                          text=True, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    _, recs = ev.read_all(tmp_path / "p.events")
    assert as_tuples(recs) == python_reading(lines.splitlines(True), [0, 0, 1, 1])


def test_takes_any_core_to_socket_map(tmp_path):
    """Sockets come from the map given (the run's manifest), not from a rule: here cores alternate sockets."""
    lines = list(synthetic_trace.lines(3000, cores=6, seed=3))
    trace = tmp_path / "t.txt"
    trace.write_text("".join(lines))
    smap = [0, 1, 2, 0, 1, 2]
    ingest.ingest(trace, tmp_path / "t.events", smap)
    header, recs = ev.read_all(tmp_path / "t.events")
    assert header.socket_of_core == smap
    assert as_tuples(recs) == python_reading(lines, smap)


def test_collects_tlb_mappings_and_skips_other_debug_lines(tmp_path):
    trace = tmp_path / "t.txt"
    trace.write_text("   100: board.processor.cores0.core.mmu.dtb: Mapping 0x4c0000 to 0x8c0000\n"
                     "   101: board.processor.cores0.core.mmu.dtb: Translating vaddr 0x4c0040.\n"
                     f"{200:15d} {1:3d} {'L1Cache':>10s}{'Load':>20s} {'NP':>6s}>{'IS':<6s} [0x8c0040, line 0x8c0040] \n"
                     f"{300:15d} {1:3d} {'L1Cache':>10s}{'Data_all_Acks':>20s} {'IS':>6s}>{'S':<6s} [0x8c0040, line 0x8c0040] \n")
    counts = ingest.ingest(trace, tmp_path / "t.events", contiguous_socket_map(4, 2), pagemap=tmp_path / "pm.txt")
    assert counts["mappings"] == 1 and counts["debug_lines"] == 1 and counts["events"] == 1
    assert (tmp_path / "pm.txt").read_text() == "0x4c0000 0x8c0000\n"


@pytest.mark.parametrize("content, where", [
    (b"this is not a trace\n", ":1: not a ProtocolTrace line"),
    (f"{10:15d} {0:3d} {'L1Cache':>10s}{'Load':>20s} {'NP':>6s}>{'IS':<6s} [0x40, line 0x40] \n"
     f"{20:15d} {9:3d} {'L1Cache':>10s}{'Load':>20s} {'NP':>6s}>{'IS':<6s} [0x40, line 0x40] \n".encode(),
     ":2: L1Cache 9 but the socket map has 4 cores"),
    (f"{10:15d} {0:3d} {'L1Cache':>10s}{'Load':>20s} NP-IS [0x40, line 0x40]\n".encode(), ":1: malformed"),
])
def test_bad_input_names_the_line(tmp_path, content, where):
    trace = tmp_path / "bad.txt"
    trace.write_bytes(content)
    with pytest.raises(CohtbError, match=re.escape(where)):
        ingest.ingest(trace, tmp_path / "bad.events", contiguous_socket_map(4, 2))
    assert not list(tmp_path.glob("bad.events*"))


def test_truncated_gzip_is_an_error(tmp_path):
    trace = tmp_path / "t.gz"
    with gzip.open(trace, "wt") as f:
        f.writelines(synthetic_trace.lines(50000, cores=4))
    trace.write_bytes(trace.read_bytes()[: trace.stat().st_size // 2])
    with pytest.raises(CohtbError, match="truncated or corrupt"):
        ingest.ingest(trace, tmp_path / "t.events", contiguous_socket_map(4, 2))
    assert not list(tmp_path.glob("t.events*"))


@pytest.mark.skipif(not FIXTURES.exists() or not list(FIXTURES.glob("*.gz")), reason="no recorded gem5 traces in tests/fixtures/traces")
@pytest.mark.parametrize("trace", [p for p in sorted(FIXTURES.glob("*.trace.gz")) if not p.name.startswith("chi-")],
                         ids=lambda p: p.name)   # chi-*: tests/test_ingest_chi.py
def test_recorded_gem5_traces(tmp_path, trace):
    """Traces recorded from gem5 runs of gem5-configs/cohtb_se.py (see tests/fixtures/traces/README.md)."""
    meta = __import__("json").loads(trace.with_name(trace.name.replace(".trace.gz", ".json")).read_text())
    smap = (ingest.read_socket_map(str(trace.with_name(meta["socket_map"]))) if "socket_map" in meta
            else contiguous_socket_map(meta["cores"], meta["sockets"]))
    counts = ingest.ingest(trace, tmp_path / "r.events", smap, pagemap=tmp_path / "pm.txt")
    with gzip.open(trace, "rt") as f:
        want = python_reading(f, smap)
    header, recs = ev.read_all(tmp_path / "r.events")
    assert as_tuples(recs) == want and (header.num_cores, header.num_sockets) == (meta["cores"], meta["sockets"])
    assert counts["events"] == meta["events"] and counts["write"] > 0 and counts["fwd_getx"] + counts["inv"] > 0


def _l1(tick: int, core: int, event: str, frm: str, to: str, line: int = 0x40) -> str:
    return f"{tick:15d} {core:3d} {'L1Cache':>10s}{event:>20s} {frm:>6s}>{to:<6s} [{line:#x}, line {line:#x}] \n"


def test_cores_per_socket_takes_the_cores_from_the_trace(tmp_path):
    """33 controllers (se.py's 32 threads + main) at 4 per socket: 9 sockets, the last one holding core 32 alone."""
    trace = tmp_path / "t.txt"
    trace.write_text(_l1(10, 5, "Store", "E", "M") + _l1(20, 32, "Store", "E", "M"))
    counts = ingest.ingest(trace, tmp_path / "t.events", cores_per_socket=4)
    header, recs = ev.read_all(tmp_path / "t.events")
    assert (counts["cores"], counts["sockets"]) == (33, 9) and header.socket_of_core == [c // 4 for c in range(33)]
    assert recs["socket"].tolist() == [1, 8]


def test_idle_controllers_are_allowed(tmp_path):
    """A map may name cores the trace never shows (an idle CPU, the main thread)."""
    trace = tmp_path / "t.txt"
    trace.write_text(_l1(10, 1, "Store", "E", "M"))
    ingest.ingest(trace, tmp_path / "t.events", [0, 1, 1, 0, 2, 2])
    header, recs = ev.read_all(tmp_path / "t.events")
    assert header.num_cores == 6 and header.num_sockets == 3 and recs["socket"].tolist() == [1]


def test_socket_map_file(tmp_path):
    f = tmp_path / "map.txt"
    f.write_text("# core socket\n0 0\n2 1\n1 0   # main thread\n")
    assert ingest.read_socket_map(str(f)) == [0, 0, 1]
    assert ingest.read_socket_map("0,1,1") == [0, 1, 1]
    f.write_text("0 0\n2 1\n")
    with pytest.raises(CohtbError, match=r"map.txt: the map must list cores 0..N-1; missing \[1\]"):
        ingest.read_socket_map(str(f))
    f.write_text("0 0\n0 zero\n")
    with pytest.raises(CohtbError, match=r"map.txt:2: expected '<core> <socket>'"):
        ingest.read_socket_map(str(f))


def test_completion_time_events(tmp_path):
    """An issued miss is no event; its completion is, after the evidence at the old holder (docs/gem5.md)."""
    trace = tmp_path / "t.txt"
    trace.write_text(_l1(10, 1, "Store", "I", "IM") + _l1(20, 0, "Fwd_GETX", "M", "I") + _l1(30, 1, "Data_all_Acks", "IM", "M")
                     + _l1(40, 2, "Ifetch", "NP", "IS", 0x80) + _l1(50, 2, "Data_all_Acks", "IS", "S", 0x80)
                     + _l1(60, 3, "Load", "NP", "IS") + _l1(70, 3, "Inv", "IS", "IS_I") + _l1(80, 3, "DataS_fromL1", "IS_I", "I")
                     + _l1(90, 0, "Inv", "M", "I", 0xc0))
    counts = ingest.ingest(trace, tmp_path / "t.events", cores_per_socket=2)
    _, recs = ev.read_all(tmp_path / "t.events")
    K = Kind
    assert [(int(r["tick"]), int(r["core"]), K(int(r["kind"])).name, L1_STATES[int(r["l1_state"])]) for r in recs] == [
        (20, 0, "FWD_GETX", "M"), (30, 1, "WRITE", "IM"), (80, 3, "READ", "IS_I"), (80, 3, "EVICT", "IS_I"),
        (90, 0, "EVICT", "M")]
    assert counts["requests"] == 3 and counts["inv_without_copy"] == 1 and counts["recalls"] == 1


def test_cli_takes_a_socket_map_file_or_cores_per_socket(tmp_path, capsys):
    from cohtb.cli import main

    trace = tmp_path / "t.txt"
    trace.write_text(_l1(10, 2, "Store", "E", "M") + _l1(20, 0, "Store", "E", "M"))
    (tmp_path / "map.txt").write_text("0 1\n1 1\n2 0\n")
    assert main(["ingest", str(trace), str(tmp_path / "a.cohtb"), "--socket-map", str(tmp_path / "map.txt")]) == 0
    assert "events of 3 cores in 2 sockets" in capsys.readouterr().out
    assert ev.read_all(tmp_path / "a.cohtb")[1]["socket"].tolist() == [0, 1]
    assert main(["ingest", str(trace), str(tmp_path / "b.cohtb"), "--cores-per-socket", "2"]) == 0
    assert ev.read_all(tmp_path / "b.cohtb")[0].socket_of_core == [0, 0, 1]
    assert main(["ingest", str(trace), str(tmp_path / "c.cohtb")]) == 2
    assert "--socket-map FILE|LIST, --cores-per-socket K or --controllers FILE" in capsys.readouterr().err
