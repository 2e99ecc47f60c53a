"""cohtb ingest: the native tool against a plain Python reading of the same trace lines, and every
kind of bad input: a clear error naming the line, a non-zero exit, no event file left behind."""

import gzip
import re
import subprocess
from pathlib import Path

import pytest

from cohtb.trace import events as ev
from cohtb.contract import Kind, contiguous_socket_map
from cohtb.trace import ingest
from cohtb.trace import synthetic_trace
from cohtb.errors import CohtbError

FIXTURES = Path(__file__).parent / "fixtures" / "traces"
L1 = re.compile(r"^\s*(\d+)\s+(\d+)\s+L1Cache\s+(\S+)\s+(\S*)>(\S*)\s+\[0x[0-9a-f]+, line (0x[0-9a-f]+)\]\s*(.*)$")


def python_reading(lines, socket_of_core: list[int]) -> list[tuple]:
    """docs/event-format.md's table, applied line by line in Python (the reference for the native tool)."""
    R, W, E = Kind.READ, Kind.WRITE, Kind.EVICT
    out = []
    for text in lines:
        m = L1.match(text)
        if not m or "Stall" in m.group(7):
            continue
        tick, core, event, frm, line = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4), int(m.group(6), 16)
        kind = {("Load", "NP"): R, ("Load", "I"): R, ("Store", "NP"): W, ("Store", "I"): W, ("Store", "S"): W,
                ("L1_Replacement", "S"): E, ("L1_Replacement", "E"): E, ("L1_Replacement", "M"): E}.get((event, frm))
        kind = {"Fwd_GETS": Kind.FWD_GETS, "Fwd_GETX": Kind.FWD_GETX, "Inv": Kind.INV}.get(event, kind)
        if kind is not None:
            out.append((tick, line >> 6, core, socket_of_core[core], int(kind)))
    return out


def as_tuples(recs) -> list[tuple]:
    return [tuple(int(r[k]) for k in ("tick", "line", "core", "socket", "kind")) for r in recs]


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
                     f"{200:15d} {1:3d} {'L1Cache':>10s}{'Load':>20s} {'NP':>6s}>{'IS':<6s} [0x8c0040, line 0x8c0040] \n")
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
@pytest.mark.parametrize("trace", sorted(FIXTURES.glob("*.trace.gz")) if FIXTURES.exists() else [], ids=lambda p: p.name)
def test_recorded_gem5_traces(tmp_path, trace):
    """Traces recorded from gem5 runs of gem5-configs/cohtb_se.py (see tests/fixtures/traces/README.md)."""
    meta = __import__("json").loads(trace.with_name(trace.name.replace(".trace.gz", ".json")).read_text())
    counts = ingest.ingest(trace, tmp_path / "r.events", contiguous_socket_map(meta["cores"], meta["sockets"]), pagemap=tmp_path / "pm.txt")
    with gzip.open(trace, "rt") as f:
        want = python_reading(f, contiguous_socket_map(meta["cores"], meta["sockets"]))
    _, recs = ev.read_all(tmp_path / "r.events")
    assert as_tuples(recs) == want
    assert counts["events"] == meta["events"] and counts["write"] > 0 and counts["fwd_getx"] + counts["inv"] > 0
    assert counts["mappings"] > 0
