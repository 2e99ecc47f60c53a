"""The kernel's side of a lock, read from the trace: queued spinlock acquisitions from the MCS-node lines
(cohtb/analysis/lock_queue.py) and a transient holder's visits (cohtb/analysis/holder.py)."""

from types import SimpleNamespace

from cohtb.analysis import holder, lock_queue
from cohtb.contract import Kind
from cohtb.run.manifest import LineSymbols
from cohtb.trace.events import make_records

NODES = [LineSymbols(line=100, symbols=["qnodes (CPU 0)"]), LineSymbols(line=101, symbols=["qnodes (CPU 1)"]),
         LineSymbols(line=102, symbols=["qnodes (CPU 2)", "qnodes (CPU 3)"]),    # two CPUs: ambiguous
         LineSymbols(line=103, symbols=["runqueues (CPU 1)"]), LineSymbols(line=7, symbols=["jiffies"])]


def test_node_lines_names_each_cpus_own_line_and_leaves_shared_or_other_lines_out():
    assert lock_queue.node_lines(NODES) == {100: 0, 101: 1}


def test_a_cpus_write_to_its_own_node_is_one_queued_acquisition():
    recs = make_records([
        (10, 100, 0, 0, Kind.WRITE),    # CPU 0 joins a queue: counted
        (20, 100, 1, 0, Kind.WRITE),    # CPU 1 hands the lock to CPU 0: another CPU's write, not counted
        (30, 100, 0, 0, Kind.READ),     # CPU 0 sees the hand-over: a read, not counted
        (40, 101, 1, 0, Kind.WRITE),    # CPU 1 joins: counted
        (50, 101, 0, 0, Kind.FWD_GETX),  # gem5's evidence at the old holder: not counted
        (60, 7, 0, 0, Kind.WRITE),      # not a node line
        (70, 100, 0, 0, Kind.WRITE),    # CPU 0 again
    ])
    q = lock_queue.queued(recs, lock_queue.node_lines(NODES))
    assert q["tick"].tolist() == [10, 40, 70]


def test_per_interval_uses_the_monitors_grid_and_counts_the_tail_in_the_last_interval():
    recs = make_records([(t, 100, 0, 0, Kind.WRITE) for t in (5, 105, 110, 150, 260, 999)])
    nodes = {100: 0}
    assert lock_queue.per_interval(recs, nodes, origin_tick=5, interval_ticks=100, n=3) == [1, 3, 2]
    assert lock_queue.per_interval(recs[:0], nodes, origin_tick=5, interval_ticks=100, n=2) == [0, 0]
    assert lock_queue.per_interval(recs, {}, origin_tick=5, interval_ticks=100, n=2) == [0, 0]


def test_lister_visits_split_at_silences_and_read_the_hold_up_to_its_first_read():
    us = 1_000_000
    recs = make_records([
        (100 * us, 9, 3, 0, Kind.WRITE),        # visit 1: the lock's acquisition
        (100 * us + 20_000, 9, 3, 0, Kind.FWD_GETX),   # a stat's cmpxchg takes the line away
        (100 * us + 140_000, 9, 3, 0, Kind.WRITE),     # the reference's increment: held 140 ns
        (100 * us + 900_000, 9, 3, 0, Kind.READ),      # its put reads the count
        (100 * us + 950_000, 9, 3, 0, Kind.WRITE),     # the put's cmpxchg: after the read, not the hold
        (100 * us + 500, 9, 1, 0, Kind.WRITE),         # another CPU: not the lister's
        (101 * us, 8, 3, 0, Kind.WRITE),               # another line
        (900 * us, 9, 3, 0, Kind.WRITE),               # visit 2: one write, the line never left it
        (900 * us + 50_000, 9, 3, 0, Kind.READ),
    ])
    recs = recs[recs["tick"].argsort()]
    v1, v2 = holder.visits(recs, line=9, core=3)   # gem5's evidence logged at the lister is not its access
    assert (v1.first_tick, v1.hold_ticks, v1.last_tick, v1.events) == (100 * us, 140_000, 100 * us + 950_000, 4)
    assert (v2.first_tick, v2.hold_ticks, v2.events) == (900 * us, 0, 2)
    assert holder.visits(recs, line=9, core=5) == []


def test_a_visit_reads_as_a_hold_only_with_nobody_queued_just_before_it():
    us = 1_000_000
    nodes = {100: 0}
    recs = make_records([
        (50 * us, 100, 0, 0, Kind.WRITE),     # CPU 0 queued 50 µs before the first visit: counted for it
        (120 * us, 9, 3, 0, Kind.WRITE),      # visit 1
        (900 * us, 9, 3, 0, Kind.WRITE),      # visit 2: the queue was 850 µs ago, outside the look-back
    ])
    field = SimpleNamespace(label=holder.HELD_FIELD, lines=[9])
    v1, v2 = holder.lister_visits(recs, [field], holder_cpu=3, nodes=nodes)
    assert (v1.queued_before, v2.queued_before) == (1, 0)
    assert holder.lister_visits(recs, [], holder_cpu=3, nodes=nodes) is None      # no dentry in the layout
    assert holder.lister_visits(recs, [field], holder_cpu=3, nodes={})[0].queued_before == 0   # no node line: none
    assert holder.lister_visits(recs, [field], holder_cpu=3, nodes=None)[0].queued_before is None  # not counted
