"""The hottest line's turns: gaps between one core obtaining the line and the next, put under where it went, on
streams built so that every gap's kind and length is known."""

import pytest

from cohtb.analysis import compare, line_chain, pipeline
from cohtb.contract import Kind
from cohtb.report.html import Details, fold_pairs
from cohtb.run.runs import load
from cohtb.trace.events import make_records
from run_fixtures import make_run

HOT, COLD = 7, 9
R, W, E, FX = Kind.READ, Kind.WRITE, Kind.EVICT, Kind.FWD_GETX


def test_each_gap_goes_under_where_the_line_went():
    # (tick, line, core, socket, kind); cores 0, 1 on socket 0, core 4 on socket 1
    rows = [(1000, HOT, 0, 0, W),
            (1100, HOT, 1, 0, R),     # +100 to another core of the socket
            (1150, HOT, 1, 0, W),     # +50 the same core (its upgrade)
            (1160, HOT, 1, 0, E),     # an eviction hands nothing on: not a turn
            (1170, HOT, 0, 0, FX),    # nor is gem5's evidence
            (1450, HOT, 4, 1, W),     # +300 to another socket
            (1500, COLD, 4, 1, R),    # another line, fewer events: not the hottest
            (1650, HOT, 0, 0, R),     # +200 back to socket 0
            (1700, HOT, 0, 0, W)]     # +50 the same core again
    order = [5, 0, 8, 2, 1, 7, 3, 6, 4]   # the chain is taken in tick order, whatever the stream's order
    chain = line_chain.hottest_chain(make_records([rows[i] for i in order]))
    assert chain.line == HOT and chain.span_ticks == 700
    assert chain.other_socket == line_chain.Gaps(count=2, ticks=500, median_ticks=250)
    assert chain.same_socket == line_chain.Gaps(count=1, ticks=100, median_ticks=100)
    assert chain.same_core == line_chain.Gaps(count=2, ticks=100, median_ticks=50)
    assert chain.other_socket.ticks + chain.same_socket.ticks + chain.same_core.ticks == chain.span_ticks


def test_no_chain_without_two_owners_events():
    assert line_chain.hottest_chain(make_records([(10, HOT, 0, 0, W), (20, HOT, 1, 0, E)])) is None
    assert line_chain.hottest_chain(make_records([])) is None


def test_compare_splits_the_time_per_operation_by_turn(tmp_path):
    """make_run: per round, core A (socket 0) writes, core B (socket 1) reads then writes, 10 ticks apart. With the
    fields on one line the line goes A -> B (other socket), B -> B (same core), B -> A (other socket)."""
    rounds, ops = 50, 100
    shared = make_run(tmp_path / "runs", "shared", ops, 2e-6, rounds)
    split = make_run(tmp_path / "runs", "split", ops, 1e-6, rounds)
    base, new = pipeline.metrics_for([load(shared), load(split)], tmp_path / "analysis")
    table = compare.chain_table(base, new)
    rows = {r[0]: r for r in table.rows}
    other, core = rows["a core of another socket"], rows["the same core again"]
    assert other[1:4] == [f"{(2 * rounds - 1) / ops:.3f}", "0", "0"]   # 10 ps a gap: 0 ns when rounded
    assert core[1] == f"{rounds / ops:.3f}" and rows["another core of the same socket"][1] == "0.000"
    # split: the count word's line alone, A and B writing it in turn (B 20 ticks after A, A 10 after B: B's read
    # in between goes to the other line)
    assert other[4] == f"{(2 * rounds - 1) / ops:.3f}" and core[4] == "0.000"
    assert new.analysis.chain.other_socket == line_chain.Gaps(count=2 * rounds - 1, ticks=rounds * 20 + (rounds - 1) * 10,
                                                              median_ticks=20)
    assert base.analysis.chain.span_ticks == 30 * rounds - 10
    assert rows["simulated time per operation (1 / throughput)"][3] == f"{2e-6 / ops * 1e9:.0f}"
    assert "The line: line of d_name, d_lockref (base), line of d_lockref (new)," in table.note
    assert table.title == f"{compare.TURNS}: {base.label} -> {new.label}"


@pytest.mark.parametrize("missing", ["base", "new"])
def test_no_table_when_a_run_has_no_chain(tmp_path, missing):
    shared = make_run(tmp_path / "runs", "shared", 100, 2e-6, 5)
    split = make_run(tmp_path / "runs", "split", 100, 1e-6, 5)
    base, new = pipeline.metrics_for([load(shared), load(split)], tmp_path / "analysis")
    (base if missing == "base" else new).analysis.chain = None
    assert compare.chain_table(base, new) is None


def test_the_report_folds_the_turns_with_their_pair(tmp_path):
    shared = make_run(tmp_path / "runs", "shared", 100, 2e-6, 5)
    split = make_run(tmp_path / "runs", "split", 100, 1e-6, 5)
    tables, _ = pipeline.standard_comparisons(pipeline.metrics_for([load(shared), load(split)], tmp_path / "analysis"))
    folded = [f for f in fold_pairs(tables) if isinstance(f, Details)]
    assert len(folded) == 1
    assert [t.title.split(":")[0] for t in folded[0].tables][1:] == ["Attribution", compare.TURNS]
