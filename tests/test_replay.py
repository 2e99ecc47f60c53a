"""Replay through the Verilated monitor (in-process library) against the reference model."""

import pytest

from cohtb.contract import Kind, contiguous_socket_map
from cohtb.errors import CohtbError
from cohtb.monitor import config, replay
from cohtb.monitor.counters import diff_counters
from cohtb.trace import events as ev
from cohtb.verify import random_events as streams


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
    drain = config.variant().pipeline.last_stage
    assert perf["events"] == 150_000 and perf["cycles"] <= 150_000 + drain   # one event per clock, plus the pipeline drain
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


def _write(path, header, recs):
    with ev.EventWriter(path, header) as w:
        w.write(recs)
    return path


def test_bare_event_file_replays_from_the_cli_and_is_left_untouched(tmp_path, capsys):
    from cohtb.cli import main

    no_evidence = (Kind.READ, Kind.WRITE, Kind.EVICT)
    events = _write(tmp_path / "in" / "t.cohtb", *streams.random_stream(5000, cores=8, sockets=2, seed=4, kinds=no_evidence))
    before = sorted(p.name for p in events.parent.iterdir()), events.read_bytes()
    assert main(["replay", str(events), "--check", "--lines", "3"]) == 0
    out = capsys.readouterr().out
    assert "t.cohtb: 5,000 events through the Verilated monitor (default" in out and "RTL vs model: identical" in out
    assert "not checked: the stream holds none of gem5's evidence" in out and "Lines with the most transfers" in out
    assert (sorted(p.name for p in events.parent.iterdir()), events.read_bytes()) == before


def test_a_trace_bigger_than_the_default_monitor_gets_its_own_variant(tmp_path, capsys):
    """33 cores in 9 sockets (se.py's 32 threads + main at 4 per socket): a monitor built for it, once, then cached."""
    from cohtb.cli import main
    from cohtb.monitor import ondemand

    events = _write(tmp_path / "t33.cohtb", *streams.random_stream(20000, cores=33, sockets=9, seed=3))
    assert main(["replay", str(events), "--check", "--out", str(tmp_path / "out")]) == 0
    assert "(default-c33s9," in capsys.readouterr().out
    assert config.variant("default-c33s9").params.cores == 33 and (tmp_path / "out" / "t33.cohtb" / "counters.json").exists()
    assert ondemand.variant_for(33, 9) == "default-c33s9" and ondemand.variant_for(32, 8) == "default"
    with pytest.raises(CohtbError, match="at most 64 cores and 16 sockets"):
        ondemand.variant_for(65, 17)


def test_soak_finds_no_mismatch_and_would_see_one(monkeypatch):
    from cohtb.verify import soak as soak_mod

    result = soak_mod.soak(30_000, seed=2, variant="small", chunk=10_000, progress=False)
    assert (result.events, result.chunks, result.mismatched_chunks, result.compiled_mismatched_chunks) == (30_000, 3, 0, 0)
    # a model that miscounts one rule is caught after the first chunk
    real = soak_mod.BoundedModel._count_effects

    def miscount(self, line, kind, fx, socket):
        fx.cross_socket = False
        return real(self, line, kind, fx, socket)

    monkeypatch.setattr(soak_mod.BoundedModel, "_count_effects", miscount)
    result = soak_mod.soak(20_000, seed=2, variant="small", chunk=10_000, progress=False)
    assert result.mismatched_chunks == 2 and "crossSocketTransfers" in result.first_mismatch[0]
    # the specification is the compiled model's oracle too: its miscount shows as the compiled model's mismatch
    assert result.compiled_mismatched_chunks == 2 and "crossSocketTransfers" in result.compiled_first_mismatch[0]
    assert result.failed
