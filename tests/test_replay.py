"""Replay through the Verilated monitor (native harness) against the reference model."""

import pytest

from cohtb import events as ev
from cohtb import replay, streams
from cohtb.compare_counters import diff_counters
from cohtb.errors import CohtbError
from cohtb.monitor_config import load
from cohtb.toolchain import RTL_BUILD


@pytest.mark.parametrize("variant", ["default", "small", "lru"])
def test_chisel_register_map_matches_python(variant):
    load(RTL_BUILD / variant / "monitor.json")   # raises on any difference


def test_harness_matches_model_with_regions(tmp_path):
    header, recs = streams.random_stream(150_000, seed=11)
    path = tmp_path / "r.events"
    with ev.EventWriter(path, header) as w:
        w.write(recs)
    full = (1 << 42) - 1
    regions = [replay.Region(0, "hot0", 0x40000, full), replay.Region(1, "hot block", 0x40000, full & ~7),
               replay.Region(2, "cold", 0x80000, full & ~0xFFF)]
    rtl, perf = replay.replay_rtl(path, regions)
    model = replay.replay_model(path, regions)
    assert not diff_counters(model, rtl)
    assert perf["events"] == 150_000 and perf["cycles"] <= 150_000 + 2   # one event per clock, plus the pipeline drain
    assert rtl["regions"][1]["transfers"] > rtl["regions"][0]["transfers"] > 0


def test_event_file_from_a_bigger_system_is_refused(tmp_path):
    h = ev.Header(64, 64, [c // 4 for c in range(64)])
    path = tmp_path / "big.events"
    with ev.EventWriter(path, h) as w:
        w.write(ev.make_records([(1, 1, 63, 15, 1)]))
    with pytest.raises(CohtbError, match="64 cores / 16 sockets"):
        replay.replay_rtl(path, [])


def test_corrupt_event_file_is_refused_by_the_harness_path(tmp_path):
    header, recs = streams.random_stream(100, seed=1)
    path = tmp_path / "c.events"
    with ev.EventWriter(path, header) as w:
        w.write(recs)
    path.write_bytes(path.read_bytes()[:-7])
    with pytest.raises(CohtbError, match="truncated or corrupt"):
        replay.replay_rtl(path, [])
