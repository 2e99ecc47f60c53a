"""Reports and comparisons on hand-built runs: the tables say what the construction implies, and bad
inputs get clear errors with no partial report left behind."""

import json
import shutil
from dataclasses import replace as replaced
from types import SimpleNamespace as NS

import pytest

from cohtb.analysis import compare

from cohtb.analysis import pipeline

from cohtb.report import atomicity, html as report
from cohtb.errors import CohtbError
from cohtb.run.runs import load
from run_fixtures import make_run

ROUNDS, OPS = 50, 100


@pytest.fixture
def runs(tmp_path):
    shared = make_run(tmp_path / "runs", "shared", OPS, 2e-6, ROUNDS)
    split = make_run(tmp_path / "runs", "split", OPS, 1e-6, ROUNDS)
    return tmp_path, shared, split


def test_report_tables_follow_the_construction(runs):
    root, shared, split = runs
    ms = pipeline.metrics_for([load(shared), load(split)], root / "analysis", check_model=True)
    html = report.write(ms, root / "report")
    doc = json.loads((root / "report" / "report.json").read_text())
    by_layout = {r["spec"]["layout"]: r for r in doc["runs"]}
    # 2 transfers per round on the count line except the very first write; all cross-socket.
    transfers = (2 * ROUNDS - 1) / OPS
    for layout in ("shared", "split"):
        r = by_layout[layout]
        assert r["per_op"]["transfers"] == pytest.approx(transfers)
        assert r["per_op"]["crossSocketTransfers"] == pytest.approx(transfers)
        assert r["check"]["model_check"] == "identical"
        assert r["fields"]["dentry.d_lockref"]["transfers"] == pytest.approx(transfers)
    # shared: every lookup read by B finds A's write: one remote dirty read per round; split: none.
    assert by_layout["shared"]["per_op"]["dirtyReads"] == pytest.approx(ROUNDS / OPS)
    assert by_layout["split"]["per_op"]["dirtyReads"] == 0
    assert by_layout["shared"]["fields"]["dentry.d_name"]["dirtyReads"] == pytest.approx(ROUNDS / OPS)
    assert by_layout["shared"]["throughput_ops_per_sim_s"] == pytest.approx(OPS / 2e-6)
    md = (root / "report" / "report.md").read_text()
    assert (f"| locked/shared 2x2 | 4 | {OPS / 2e-6 / 1e6:.3f} | 10-40 | 0.25 | {transfers:.3f} | {transfers:.3f} | "
            f"{ROUNDS / OPS:.3f} |") in md
    # per thread of each socket: socket 0 (40 + 30) / 2 = 35, socket 1 (20 + 10) / 2 = 15
    assert by_layout["shared"]["fairness"] == {"thread_min": 10, "thread_max": 40, "socket_min": 15, "socket_max": 35,
                                               "ratio": 0.25, "socket_ratio": pytest.approx(15 / 35)}
    page = html.read_text()
    assert page.count("data:image/png;base64,") >= 5 and "Hottest lines" in page


def test_compare_percent_change_and_attribution(runs):
    root, shared, split = runs
    base, new = pipeline.metrics_for([load(shared), load(split)], root / "analysis")
    table = compare.pair_table(base, new)
    rows = {r[0]: r for r in table.rows}
    thr_change = (OPS / 1e-6 - OPS / 2e-6) / (OPS / 2e-6) * 100
    assert rows["throughput (ops/sim µs)"][3] == f"{thr_change:+.1f}%"
    assert rows["dirty reads (HITM)/op"][1:] == [f"{ROUNDS / OPS:.3f}", "0.000", "-100.0%"]
    att, text = compare.attribution(base, new)
    # The line that held both fields loses all its traffic; the count word's own line takes the transfers.
    changes = {r[0]: float(r[3]) for r in att.rows}
    remote_rt = 2 * (300 + 20) / 3.0   # ns per cross-socket transfer or dirty read
    assert changes["line of d_name, d_lockref"] == pytest.approx(-((2 * ROUNDS - 1) + ROUNDS) * remote_rt / OPS, abs=0.1)
    assert changes["line of d_lockref"] == pytest.approx((2 * ROUNDS - 1) * remote_rt / OPS, abs=0.1)
    assert "throughput +100.0%" in text and "line of d_name, d_lockref" in text


def test_attribution_shows_the_costliest_line_even_when_it_changes_little(runs, monkeypatch):
    root, shared, split = runs
    base, new = pipeline.metrics_for([load(shared), load(split)], root / "analysis")
    costs = {id(base): {"A": 100.0, "B": 1000.0, "C": 10.0}, id(new): {"A": 10.0, "B": 1001.0, "C": 60.0}}
    monkeypatch.setattr(compare, "line_costs", lambda m, alone=None: costs[id(m)])
    att, _ = compare.attribution(base, new, top=2)
    assert [r[0] for r in att.rows] == ["A", "C", "B"]   # the two largest changes, then what both pay most for
    att, _ = compare.attribution(base, new, top=3)
    assert [r[0] for r in att.rows] == ["A", "C", "B"]   # already among them: not twice


def test_events_from_another_configuration_are_refused(runs):
    root, shared, split = runs
    shutil.copy(split / "events.cohtb", shared / "events.cohtb")   # same shape, but another run's events
    with pytest.raises(CohtbError, match="belongs to run"):
        pipeline.metrics_for([load(shared)], root / "analysis")


def test_missing_manifest_is_refused(runs):
    root, shared, _ = runs
    (shared / "manifest.json").unlink()
    with pytest.raises(CohtbError, match="no manifest.json"):
        load(shared)


def test_corrupt_counter_file_is_refused_and_no_report_is_left(runs):
    root, shared, split = runs
    pipeline.metrics_for([load(shared)], root / "analysis")
    (root / "analysis" / load(shared).id / "counters.json").write_text('{"format": 1, "run": "x", "rtl": ')
    with pytest.raises(CohtbError, match="corrupt counter file"):
        ms = pipeline.metrics_for([load(shared)], root / "analysis")
        report.write(ms, root / "report")
    assert not (root / "report").exists()
    assert not [p for p in root.iterdir() if p.name.startswith(".report")]


def test_report_of_bare_event_files(tmp_path):
    """A trace from any configuration, with no manifest: counters, hottest lines, sockets and the gem5 check."""
    from cohtb.cli import main
    from cohtb.contract import Kind
    from cohtb.trace import events as ev
    from cohtb.verify import random_events as streams

    path = tmp_path / "t.cohtb"
    header, recs = streams.random_stream(3000, cores=4, sockets=2, seed=9, kinds=(Kind.READ, Kind.WRITE, Kind.EVICT))
    with ev.EventWriter(path, header) as w:
        w.write(recs)
    assert main(["report", str(path), "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "| t.cohtb | default | 3,000 |" in md and "Socket x socket transfers" in md and "not checked" in md
    assert main(["report", str(path), str(tmp_path), "--out", str(tmp_path / "rep2")]) == 2


def test_a_compared_pair_whose_labels_agree_names_what_tells_them_apart(runs):
    """Two runs that differ only in their machine and core model had the same label on every compare table."""
    root, shared, _ = runs
    [m] = pipeline.metrics_for([load(shared)], root / "analysis")
    other = replaced(m, run=type("R", (), {"spec": replaced(m.spec, machine="westmere-ex-8s-c4-o3", cpu="o3")})())
    other = replaced(other, label=m.label)
    b, n = compare.tell_apart(m, other)
    assert b.label == f"{m.label}, on {m.spec.machine}, timing cores"
    assert n.label == f"{m.label}, on westmere-ex-8s-c4-o3, o3 cores"
    assert compare.tell_apart(b, n) == (b, n)   # labels that differ are left as they are


def test_the_contention_table_gives_moves_and_handoffs_per_update():
    """One row per run: updates per µs, moves per update and ns per move; for a lock, the share of acquisitions
    that came from another thread and the window's time per such handoff."""
    def run(policy, handoffs):
        workload = {"handoffs": handoffs, "count": 2000, "invariants": "ok"}
        manifest = NS(system=NS(machine="m"), workload=NS(model_dump=lambda: workload))
        return NS(spec=NS(policy=policy, sockets=2, cores_per_socket=4, cores=8), throughput=5e6,
                  per_op={"transfers": 2.0, "crossSocketTransfers": 0.5},
                  run=NS(manifest=manifest, measured_seconds=200e-6, ops=1000))
    t = atomicity.contention_table([run("ticket", 1500), run("xadd", 0)])
    assert [r[1] for r in t.rows] == ["xadd", "ticket"]
    xadd, ticket = t.rows
    assert xadd[3:9] == ["5.00", "2.00", "0.50", "100", "-", "-"]   # 200 µs over 2,000 moves
    assert ticket[7:9] == ["0.75", "267"]   # 1,500 of 2,000 acquisitions from another thread; 200 µs over 750
