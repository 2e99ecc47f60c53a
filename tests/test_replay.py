"""Replay through the Verilated monitor (in-process library) against the reference model."""

import pytest

from cohtb.contract import contiguous_socket_map
from cohtb.errors import CohtbError
from cohtb.monitor import config, replay
from cohtb.monitor.counters import diff_counters
from cohtb.trace import events as ev
from cohtb.trace import random_events as streams


@pytest.mark.parametrize("variant", ["default", "small", "lru"])
def test_emitted_register_map_loads(variant):
    cfg = config.variant(variant)
    p = cfg.params
    assert len(cfg.regmap.counters) == 15 + 8 * p.regions + p.sockets ** 2 + 4 * p.hotEntries
    assert len({s.addr for s in cfg.regmap.counters}) == len(cfg.regmap.counters)   # no two slots share an address


def test_verilated_monitor_matches_model_with_regions():
    header, recs = streams.random_stream(150_000, seed=11)
    full = (1 << 42) - 1
    regions = [replay.Region(0x40000, full), replay.Region(0x40000, full & ~7), replay.Region(0x80000, full & ~0xFFF)]
    rtl, perf = replay.replay_rtl(recs, regions)
    model = replay.replay_model(recs, regions, config.variant())
    assert not diff_counters(model, rtl)
    assert perf["events"] == 150_000 and perf["cycles"] <= 150_000 + 2   # one event per clock, plus the pipeline drain
    assert rtl.regions[1]["transfers"] > rtl.regions[0]["transfers"] > 0


def test_event_file_from_a_bigger_system_is_refused():
    h = ev.Header(64, 64, contiguous_socket_map(64, 16))
    with pytest.raises(CohtbError, match="64 cores / 16 sockets"):
        replay.check_fits(h, config.variant(), "big.events")


def test_truncated_event_file_is_refused(tmp_path):
    header, recs = streams.random_stream(100, seed=1)
    path = tmp_path / "c.events"
    with ev.EventWriter(path, header) as w:
        w.write(recs)
    path.write_bytes(path.read_bytes()[:-7])
    with pytest.raises(CohtbError, match="truncated or corrupt"):
        ev.read_all(path)
