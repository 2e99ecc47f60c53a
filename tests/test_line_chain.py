"""The hottest line's turns: gaps between one core obtaining the line and the next, put under where it went, on
streams built so that every gap's kind and length is known."""

from types import SimpleNamespace as NS

import pytest

from cohtb.analysis import compare, line_chain, pipeline
from cohtb.report.turns_summary import turns_summary
from cohtb.analysis.metrics import compute
from cohtb.contract import Kind
from cohtb.report.html import Details, fold_pairs
from cohtb.run.manifest import Measure
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
            (1500, COLD, 4, 1, R),    # another line
            (1650, HOT, 0, 0, R),     # +200 back to socket 0
            (1700, HOT, 0, 0, W)]     # +50 the same core again
    order = [5, 0, 8, 2, 1, 7, 3, 6, 4]   # the chain is taken in tick order, whatever the stream's order
    chain = line_chain.chain(make_records([rows[i] for i in order]), HOT)
    assert chain.line == HOT and chain.span_ticks == 700
    assert chain.other_socket == line_chain.Gaps(count=2, ticks=500)
    assert chain.same_socket == line_chain.Gaps(count=1, ticks=100)
    assert chain.same_core == line_chain.Gaps(count=2, ticks=100)


def test_no_chain_without_two_owners_events_on_the_line():
    assert line_chain.chain(make_records([(10, HOT, 0, 0, W), (20, HOT, 1, 0, E)]), HOT) is None
    assert line_chain.chain(make_records([(10, HOT, 0, 0, W), (20, COLD, 1, 0, W)]), HOT) is None
    assert line_chain.chain(make_records([]), HOT) is None


def metrics(tmp_path, ops=(100, 40)):
    """make_run's pair (fixed work: the trace's region is the measured time): per round, core A (socket 0) writes,
    core B (socket 1) reads then writes, 10 ticks apart; with `shared` all on one line, with `split` B's read goes
    to another line."""
    shared = make_run(tmp_path / "runs", "shared", ops[0], 2e-6, 50)
    split = make_run(tmp_path / "runs", "split", ops[1], 1e-6, 50)
    return pipeline.metrics_for([load(shared), load(split)], tmp_path / "analysis")


def test_the_analysis_keeps_the_hottest_lines_chain(tmp_path):
    base, new = metrics(tmp_path)
    # shared: A -> B (other socket), B -> B (same core), B -> A (other socket), 50 rounds
    assert base.analysis.chain.line == base.analysis.ideal.hottest[0]
    assert base.analysis.chain.other_socket == line_chain.Gaps(count=99, ticks=990)
    assert base.analysis.chain.same_core == line_chain.Gaps(count=50, ticks=500)
    # split: A and B write the count word's line in turn, B 20 ticks after A, A 10 after B
    assert new.analysis.chain.other_socket == line_chain.Gaps(count=99, ticks=50 * 20 + 49 * 10)


def test_compare_splits_the_time_per_operation_by_turn(tmp_path):
    """base: 100 ops in 2,000 ns (20 ns/op); new: 40 ops in 1,000 ns (25 ns/op); the chains are set by hand."""
    base, new = metrics(tmp_path, ops=(100, 40))
    base.analysis.chain = line_chain.LineChain(
        line=base.analysis.chain.line, span_ticks=1_500_000,   # ticks are ps
        other_socket=line_chain.Gaps(count=30, ticks=900_000),
        same_socket=line_chain.Gaps(count=100, ticks=500_000),
        same_core=line_chain.Gaps(count=0, ticks=0))
    new.analysis.chain = line_chain.LineChain(
        line=new.analysis.chain.line, span_ticks=800_000,
        other_socket=line_chain.Gaps(count=4, ticks=200_000),
        same_socket=line_chain.Gaps(count=0, ticks=0),
        same_core=line_chain.Gaps(count=20, ticks=600_000))
    rows = {r[0]: r[1:] for r in compare.chain_table(base, new).rows}
    #                                           per op  mean ns  ns/op | per op  mean ns  ns/op | change
    assert rows["a core of another socket"] == ["0.300", "30", "9", "0.100", "50", "5", "-4"]
    assert rows["another core of the same socket"] == ["1.000", "5", "5", "0.000", "-", "0", "-5"]
    assert rows["the same core again"] == ["0.000", "-", "0", "0.500", "30", "15", "+15"]
    assert rows["all turns (the line's first to last event)"] == ["", "", "15", "", "", "20", "+5"]
    assert rows["simulated time per operation (1 / throughput)"] == ["", "", "20", "", "", "25", "+5"]


def test_a_timed_runs_turns_are_per_operation_of_its_region(tmp_path):
    """The trace is the region of interest; a timed run's operations are the window's: 40 ops in a 1 µs window
    whose region was 0.5 µs are 20 ops of the region."""
    base, new = metrics(tmp_path)
    new.run.manifest.workload.measure = Measure(mode="window", warmup_ns=0, window_ns=1000, interval_ns=1000, intervals=1)
    new.run.manifest.roi.seconds = 0.5e-6
    new.analysis.chain = line_chain.LineChain(line=new.analysis.chain.line, span_ticks=400_000,
                                              other_socket=line_chain.Gaps(count=40, ticks=400_000),
                                              same_socket=line_chain.Gaps(count=0, ticks=0),
                                              same_core=line_chain.Gaps(count=0, ticks=0))
    rows = {r[0]: r[1:] for r in compare.chain_table(base, new).rows}
    assert rows["a core of another socket"][3:6] == ["2.000", "10", "20"]
    assert rows["simulated time per operation (1 / throughput)"][5] == "25"


def test_two_hottest_lines_are_named_as_two(tmp_path):
    base, new = metrics(tmp_path)
    table = compare.chain_table(base, new)
    assert table.title == f"{compare.TURNS_TITLE}: {base.label} -> {new.label}"
    assert table.note.startswith("The line: line of d_name, d_lockref (base), line of d_lockref (new): the rows "
                                 "compare two lines")


@pytest.mark.parametrize("missing", ["base", "new"])
def test_no_table_when_a_run_has_no_chain(tmp_path, missing):
    base, new = metrics(tmp_path)
    (base if missing == "base" else new).analysis.chain = None
    assert compare.chain_table(base, new) is None


def test_the_report_folds_the_turns_with_their_pair(tmp_path):
    tables, _ = pipeline.standard_comparisons(metrics(tmp_path, ops=(100, 100)))   # a pair: alike but for layout
    folded = [f for f in fold_pairs(tables) if isinstance(f, Details)]
    assert len(folded) == 1
    assert [t.title.split(":")[0] for t in folded[0].tables][1:] == ["Attribution", compare.TURNS_TITLE]


def test_the_summary_gives_each_arm_its_turns_over_the_repetitions(tmp_path):
    """Two repetitions of one arm: 30 turns to another socket at 30 ns in one, 15 at 60 ns in the other, and turns
    within the socket in the first alone; a run without a chain leaves no table."""
    base, new = metrics(tmp_path, ops=(100, 100))
    for m, other, each_ps, same in ((base, 30, 30_000, 100), (new, 15, 60_000, 0)):
        m.analysis.chain = line_chain.LineChain(
            line=m.analysis.chain.line, span_ticks=1_500_000,
            other_socket=line_chain.Gaps(count=other, ticks=other * each_ps),
            same_socket=line_chain.Gaps(count=same, ticks=same * 5_000), same_core=line_chain.Gaps(count=0, ticks=0))
    table = turns_summary("t", [("arm", [base, new])])
    # base: 100 ops in 2,000 ns, new: 100 in 1,000 ns; the time per turn is each run's own mean, over the runs
    # with a turn of the kind; a kind with no turn in any run has none
    assert table.rows == [["arm", "0.2 (0.1-0.3), 45 (30-60) ns each", "0.5 (0.0-1.0), 5 ns each",
                           "0.0 (0.0-0.0)", "15 (10-20)", "2"]]
    new.analysis.chain = None
    assert turns_summary("t", [("arm", [base, new])]) is None


def test_every_count_per_operation_is_per_operation_of_the_region(tmp_path):
    """The monitor counts the region; a timed run's operations are the window's: 40 ops in a 1 µs window whose
    region was 0.5 µs are 20 of the region, for the ping-pong per op, the fields' and the attribution's alike."""
    _, new = metrics(tmp_path)
    costs = sum(compare.line_costs(new).values())   # fixed work: the region is the measured part, 40 ops
    new.run.manifest.workload.measure = Measure(mode="window", warmup_ns=0, window_ns=1000, interval_ns=1000, intervals=1)
    new.run.manifest.roi.seconds = 0.5e-6
    assert new.run.region_ops == pytest.approx(20)
    m = compute(new.run, new.analysis)
    assert m.per_op["transfers"] == pytest.approx(new.analysis.rtl.totals["transfers"] / 20)
    field = m.fields["dentry.d_lockref"]   # the line both cores write
    assert field["transfers"] > 0
    assert field["transfers"] * 20 == pytest.approx(sum(new.analysis.rtl.regions[r.index]["transfers"]
                                                        for r in new.analysis.regions if r.line in field["lines"]))
    assert sum(compare.line_costs(m).values()) * 20 == pytest.approx(costs * 40)


def _named_run(regions: dict[int, list[str]]):
    """A run whose analysis has these lines, each with the fields ("object.field") the monitor's regions name."""
    return NS(analysis=NS(regions=[NS(line=line, fields=fields) for line, fields in regions.items()],
                          ideal=NS(lines=dict.fromkeys(regions)), address=lambda line: line * 64),
              run=NS(manifest=NS(kernel_symbols=[])))


def test_lines_of_two_objects_with_the_same_fields_have_names_of_their_own():
    dentries = {1: ["file.d_lockref", "file.d_lru"], 2: ["tmpfs_root.d_lockref", "tmpfs_root.d_lru"],
                3: ["count.count"]}
    assert compare.line_keys(_named_run(dentries)) == {
        1: "line of file's d_lockref, d_lru", 2: "line of tmpfs_root's d_lockref, d_lru", 3: "line of count"}
    assert compare.fields_text(["file.d_iname", "file_inode.i_mode"], alone=False) == \
        "file's d_iname; file_inode's i_mode"   # fields of two objects on one line
    # one object: the field's name alone; unless the run it is compared with has several, and a line one name
    one = _named_run({5: ["file.d_lockref"]})
    assert compare.line_keys(one) == {5: "line of d_lockref"}
    both = compare.objects_alone(one, _named_run(dentries))
    assert compare.line_keys(one, alone=both) == {5: "line of file's d_lockref"}
