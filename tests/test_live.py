"""The monitor live beside gem5 (cohtb/monitor/live.py, cohtb launch --live): snapshots over simulated time that
do not depend on how the records arrive, live counters identical to an offline replay of the same run, and a
crash of either side a failed run, never a half-written one. gem5 is stood in for by tests/fake_gem5.py."""

import json
from pathlib import Path

import pytest

from cohtb.atomic import MARKER
from cohtb.monitor import live, rtl
from cohtb.monitor.config import variant as load_variant
from cohtb.monitor.counters import diff_counters
from cohtb import launch
from cohtb.run.recorder import Live
from cohtb.run.spec import RunSpec
from cohtb.trace import events as ev
from cohtb.verify.random_events import random_stream

FAKE = Path(__file__).with_name("fake_gem5.py")


def test_snapshots_are_cut_at_the_same_ticks_whatever_the_chunks():
    _, recs = random_stream(20_000, cores=32, sockets=8, seed=7)   # ticks 0, 500, ...: 10 M ticks in all
    mask = load_variant("default").params.line_mask
    regions = [(0x40000, mask), (0x40001, mask)]
    whole = live.series(recs, "default", regions, interval_ticks=1_000_000, chunk=len(recs))
    bits = live.series(recs, "default", regions, interval_ticks=1_000_000, chunk=777)
    assert json.dumps(whole.to_json(), sort_keys=True) == json.dumps(bits.to_json(), sort_keys=True)
    assert len(whole.ends) == 10 and whole.events == len(recs)
    # the intervals add up to the final counters, which are the offline replay's
    final, _ = rtl.replay(recs, regions, "default")
    assert not diff_counters(final, whole.snapshots[-1])
    rows = whole.per_interval()
    assert sum(r["transfers"] for r in rows) == final.totals["transfers"] > 0
    assert sum(r["regions"][0]["transfers"] for r in rows) == final.regions[0]["transfers"]
    # every interval has its own share of a uniform stream, none empty
    assert all(r["transfers"] > 0 for r in rows)


@pytest.fixture
def fake_gem5(monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE))


def spec(policy="locked"):
    return RunSpec("lockref", policy, "split", 2, 2, window_us=10, interval_us=5, warmup_us=5)


def test_a_live_run_counts_what_an_offline_replay_counts(fake_gem5, tmp_path):
    s = spec()
    [o] = launch.launch([s], tmp_path, jobs=1, live=Live())
    assert o.status == "done", o.error
    run = tmp_path / s.id
    m = json.loads((run / "manifest.json").read_text())
    assert m["files"]["live"] == "live.json" and "trace" not in m["files"] and not (run / "trace.gz").exists()
    assert not list((run / "gem5").glob("trace*")), "the pipe is gone with the run's temporary name"
    assert {p.name for p in run.iterdir()} == {"manifest.json", "events.cohtb", "pagemap.txt", "live.json", "gem5",
                                               "workload.stdout", "roi.json", "profile.json",
                                               MARKER}   # MARKER: what cohtb wrote
    doc = json.loads((run / "live.json").read_text())
    _, recs = ev.read_all(run / "events.cohtb")
    assert len(recs) == m["ingest"]["events"] == doc["events"] > 0
    offline = live.series(recs, doc["variant"], [], doc["interval_ticks"])
    assert doc == {"variant": doc["variant"], "regions": [], **offline.to_json()}
    final, _ = rtl.replay(recs, [], doc["variant"])   # and the final counters are a plain replay's
    assert doc["final"] == final.to_json()


def test_a_live_run_can_keep_its_trace(fake_gem5, tmp_path):
    s = spec()
    [o] = launch.launch([s], tmp_path, jobs=1, live=Live(keep_trace=True))
    assert o.status == "done", o.error
    m = json.loads((tmp_path / s.id / "manifest.json").read_text())
    assert m["files"]["trace"] == "trace.gz" and (tmp_path / s.id / "trace.gz").stat().st_size > 0


@pytest.mark.parametrize("how, says", [("FAKE_GEM5_CRASH_MID_TRACE", "gem5 exited 134"),
                                       ("FAKE_GEM5_FAIL_POLICY", "fatal: fake failure")])
def test_a_gem5_that_dies_fails_the_live_run_cleanly(fake_gem5, tmp_path, monkeypatch, how, says):
    """Mid-trace, or before it ever opened the pipe: the run is failed with gem5's error, nothing is left half
    written, and no ingest is left waiting on the pipe."""
    monkeypatch.setenv(how, "locked")
    s = spec()
    [o] = launch.launch([s], tmp_path, jobs=1, timeout=60, live=Live())
    assert o.status == "failed" and says in o.error
    assert not (tmp_path / s.id).exists() and (tmp_path / f"{s.id}.failed.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_an_ingest_that_refuses_the_trace_stops_gem5_and_says_why(fake_gem5, tmp_path, monkeypatch):
    """gem5 ignores SIGPIPE and would simulate on into a pipe nobody reads: the run stops it at once."""
    import time

    monkeypatch.setenv("FAKE_GEM5_BAD_LINE", "1")
    s = spec()
    t0 = time.monotonic()
    [o] = launch.launch([s], tmp_path, jobs=1, timeout=120, live=Live())
    assert o.status == "failed" and "not a ProtocolTrace line" in o.error and "gem5 stopped" in o.error
    assert time.monotonic() - t0 < 60   # the fake gem5 would go on for two minutes (a bound with room for a loaded host)
    assert not (tmp_path / s.id).exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_monitor_that_stops_reading_fails_the_run(fake_gem5, tmp_path, monkeypatch):
    def broken(self, recs):
        raise RuntimeError("the harness broke")

    monkeypatch.setattr(live.Counting, "feed", broken)
    s = spec()
    [o] = launch.launch([s], tmp_path, jobs=1, timeout=60, live=Live())
    assert o.status == "failed" and "the harness broke" in o.error
    assert not (tmp_path / s.id).exists()


def test_the_report_of_a_live_run_plots_its_snapshots(fake_gem5, tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    from cohtb.analysis.pipeline import metrics_for
    from cohtb.report import html as report
    from cohtb.report import plots
    from cohtb.run.runs import load

    monkeypatch.setenv("FAKE_GEM5_TICK_STEP", "400000")   # 40 stores over 16 µs: three whole 5 µs intervals
    s = spec("retry100")
    [streamed] = launch.launch([s], tmp_path / "live", jobs=1, live=Live())
    [recorded] = launch.launch([s], tmp_path / "file", jobs=1)
    assert streamed.status == recorded.status == "done", (streamed.error, recorded.error)
    ms = metrics_for([load(tmp_path / "live" / s.id), load(tmp_path / "file" / s.id)], tmp_path / "analysis",
                     check_model=False)
    doc = json.loads((tmp_path / "live" / s.id / "live.json").read_text())
    fig = plots.draw_monitor(ms)
    try:
        per_us = doc["interval_ticks"] / 1e6
        whole = doc["intervals"][:-1]   # the last ends with the stream, part way
        assert len(whole) >= 2 and all(iv["transfers"] > 0 for iv in whole), whole
        drawn = {ax.get_title(): [line.get_ydata().tolist() for line in ax.get_lines()] for ax in fig.axes}
        # one line per panel: the live run's; the run counted afterwards is not replayed for it
        assert drawn["transfers"] == [[iv["transfers"] / per_us for iv in whole]]
        assert drawn["dirty reads (HITM), local + remote"] == [[(iv["dirtyReadsLocal"] + iv["dirtyReadsRemote"]) / per_us
                                                         for iv in whole]]
    finally:
        plt.close(fig)
    assert plots.draw_monitor(ms[1:]) is None
    page = report.write(ms, tmp_path / "report")
    assert (page.parent / "plots" / "monitor.png").exists() and "The monitor live (runs launched" in page.read_text()
