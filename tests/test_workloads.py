"""The workloads run natively and keep their invariants; their JSON and layout maps say what they did. Thread
counts are fixed (the same test on every machine); one case oversubscribes the CPUs on purpose."""

import os
import subprocess

import pytest

from cohtb.se.workloads import WORKLOADS, binary, run_native
from cohtb.errors import CohtbError
from cohtb.trace.layout import translate

THREADS = 4
CPUS = len(os.sched_getaffinity(0))
# cclat's choices are cells of one table, every one of them in its default ("all", "all"): that case alone. chase
# times a window after a warm-up (it refuses fixed work): its own tests below.
CASES = [(w.name, p, l) for w in WORKLOADS.values() for p in w.policies for l in w.layouts
         if (w.name != "cclat" or (p, l) == ("all", "all")) and w.name != "chase"]
TIMED = [name for name, w in WORKLOADS.items() if w.default_ops == 0]   # cclat measures fixed work only


def check_schema(doc: dict, name: str, threads: int, policy: str, layout: str) -> None:
    assert doc["benchmark"] == name
    assert doc["flags"]["policy"] == policy and doc["flags"]["layout"] == layout
    assert doc["threads"] == threads and len(doc["per_thread_ops"]) == threads
    assert sum(doc["per_thread_ops"]) == doc["ops"] > 0
    assert doc["elapsed_s"] > 0 and doc["ops_per_s"] > 0
    lm = doc["layout_map"]
    assert lm["cache_line"] == 64 and lm["layout"] == layout and lm["objects"]
    for obj in lm["objects"]:
        assert {"name", "address", "size", "fields"} <= set(obj) and obj["address"] > 0
        for f in obj["fields"]:
            assert obj["address"] <= f["address"] and f["address"] + f["size"] <= obj["address"] + obj["size"], f


@pytest.mark.parametrize("name, policy, layout", CASES)
def test_runs_and_keeps_its_invariants(name, policy, layout):
    ops = {"stat_counter": 20000, "cclat": 10}.get(name, 4000)
    doc = run_native(name, THREADS, ops, policy, layout, timeout=120)   # raises if the binary's own check failed
    check_schema(doc, name, THREADS, policy, layout)
    expected_ops = THREADS * (ops & ~1 if name == "list_batch" else ops)
    assert doc["ops"] == expected_ops
    if name in ("lockref", "dget_parent", "stat_path", "open_close"):
        assert doc["final_count"] == doc["expected_count"] == 1   # no reference lost
        # lockref gets and puts per op: lockref/dget_parent/stat_path a get and a put; open_close two gets and two
        # puts on the file (the walk's reference, the open file's) and two dget_parent/dput on the directory
        updates = expected_ops * (8 if name == "open_close" else 2)
        assert doc["lockref_updates"] == updates
        if policy == "locked":
            assert doc["locked_ops"] == updates
    if name in ("stat_path", "open_close"):
        assert doc["invariants"] == "ok" and doc["walk_failures"] == 0
    if name == "list_batch":
        assert doc["invariants"] == "ok" and doc["final_length"] == 0 and doc["max_length"] <= THREADS
        assert doc["ops_by_owner"] + doc["ops_for_others"] == expected_ops
        if policy == "locked":
            assert doc["ops_for_others"] == 0
    if name == "rwsem":
        assert doc["violations"] == 0 and doc["reads"] + doc["writes"] == expected_ops
    if name == "cclat":   # every operation found the value of the state it was given
        assert doc["invariants"] == "ok" and doc["wrong_values"] == 0
        assert [(c["state"], c["operation"]) for c in doc["cells"]] == [
            (s, o) for s in "MESI" for o in ("load", "store", "cas", "fai", "tas", "swap")]
        for c in doc["cells"]:
            assert c["n"] == ops and 0 < c["min"] <= c["p10"] <= c["median"] <= c["p90"] <= c["max"]
    if name == "contention":   # every update counted once; a lock's handoffs are fewer than its acquisitions
        assert doc["invariants"] == "ok" and doc["count"] == expected_ops
        assert (doc["handoffs"] == 0) == (policy in ("xadd", "cmpxchg")) and doc["handoffs"] < expected_ops
    if name == "atomicity":   # every increment counted once
        assert doc["invariants"] == "ok" and doc["count"] == expected_ops and doc["lost_increments"] == 0
        assert doc["lost_tickets"] == 0
    if name == "stat_counter":
        assert doc["summed_value"] == doc["expected_value"] == expected_ops
        if policy == "shared":
            assert doc["shared_value"] == expected_ops and doc["folds"] == 0


@pytest.mark.parametrize("layout", ["shared", "split", "padded"])
def test_lockref_layout_map_matches_the_layout(layout):
    doc = run_native("lockref", 2, 100, "retry100", layout)
    lines = field_lines(doc)
    lookup = set().union(*(lines[f"dentry.{f}"] for f in ("d_flags", "d_seq", "d_hash", "d_parent", "d_name")))
    count_line = lines["dentry.d_lockref"]
    if layout == "shared":
        assert count_line <= lookup, "shared: the count word must sit on a line the lookup fields use"
    else:
        assert not (count_line & lookup), f"{layout}: the count word must have a line of its own"
    if layout == "padded":
        obj = doc["layout_map"]["objects"][0]
        lref = next(f for f in obj["fields"] if f["name"] == "d_lockref")
        assert obj["address"] % 64 == 0 and obj["size"] % 64 == 0 and lref["address"] % 64 == 0


# struct dentry's offsets on x86-64 in each layout: 6.1-6.7 (shared), 6.8-6.10 (pre611), 6.11 on (split)
KERNEL_DENTRY = {"shared": {"d_iname": (56, 32), "d_lockref": (88, 8), "d_sb": (104, 8)},
                 "pre611": {"d_iname": (56, 40), "d_lockref": (96, 8), "d_sb": (112, 8)},
                 "split": {"d_iname": (56, 40), "d_lockref": (128, 8), "d_sb": (104, 8)}}
LOOKUP_FIELDS = {"d_flags": (0, 4), "d_seq": (4, 4), "d_hash": (8, 16), "d_parent": (24, 8), "d_name": (32, 16), "d_inode": (48, 8)}


def test_stat_path_offers_the_three_kernel_dentries():
    assert WORKLOADS["stat_path"].layouts == ("shared", "pre611", "split")


@pytest.mark.parametrize("name, object_name, layout", [("stat_path", "file", l) for l in ("shared", "pre611", "split")]
                         + [("open_close", "parent", l) for l in ("shared", "split")])
def test_kernel_dentry_layouts(name, object_name, layout):
    """The dentries at the kernel's offsets: d_lockref at 88 in 6.1-6.7 (shared), at 96 in 6.8-6.10 (pre611, just
    before the 6.11 reorder), at 128 after it (split); d_iname at 56; 192 bytes, starting a line. stat_path's file
    name (will-it-scale's willitscale.XXXXXX, 18 bytes) runs into line 1: before the reorder the name compare of every
    lookup reads the count word's line; after it, no lookup field shares that line."""
    doc = run_native(name, 2, 100, "retry100", layout)
    obj = next(o for o in doc["layout_map"]["objects"] if o["name"] == object_name)
    fields = {f["name"]: (f["address"] - obj["address"], f["size"]) for f in obj["fields"]}
    assert obj["address"] % 64 == 0 and obj["size"] == 192
    assert fields == {**LOOKUP_FIELDS, **KERNEL_DENTRY[layout]}
    if name == "stat_path":
        for o in doc["layout_map"]["objects"]:
            if o["name"] in ("file", "tmpfs_root", "tmp", "root"):   # every dentry starts a line, as in the kernel's slab
                assert o["address"] % 64 == 0 and o["size"] == 192, o["name"]
        lines = field_lines(doc)
        name_lines = set(range((obj["address"] + 56) // 64, (obj["address"] + 56 + 18 - 1) // 64 + 1))
        count_line = lines[f"{object_name}.d_lockref"]
        lookup = set().union(*(lines[f"{object_name}.{f}"] for f in LOOKUP_FIELDS))
        assert (count_line <= name_lines) == (layout != "split")
        assert not (count_line & lookup)


@pytest.mark.parametrize("name", TIMED)
def test_timed_window_counts_ops_per_interval(name):
    """will-it-scale's measurement: a warm-up, then a window of 3 intervals; every op of the window is in one
    interval of one thread, and the per-interval min/max/total are those of the per-thread rows. Only what the
    harness guarantees is asserted: on a loaded host a thread may be off its CPU for the whole window (or start
    after it), so how many ops a thread did in wall time is not."""
    doc = run_native(name, 2, 0, WORKLOADS[name].policies[0], WORKLOADS[name].layouts[0],
                     ["--warmup-us", "20000", "--window-us", "60000", "--interval-us", "20000"])
    m = doc["measure"]
    assert m["mode"] == "window" and m["window_ns"] == 60_000_000 and m["intervals"] == 3 and m["warmup_ns"] == 20_000_000
    rows = doc["per_thread_interval_ops"]
    assert len(rows) == 2 and all(len(r) == 3 for r in rows)
    assert [sum(r) for r in rows] == doc["per_thread_ops"]
    iv = doc["intervals"]
    assert iv["total"] == [sum(c) for c in zip(*rows)] and sum(iv["total"]) == doc["ops"]
    assert iv["min"] == [min(c) for c in zip(*rows)] and iv["max"] == [max(c) for c in zip(*rows)]
    assert doc["all_ops"] >= doc["ops"]   # the warm-up's ops (and the one in progress at the end) are done, not counted
    assert abs(doc["elapsed_s"] - 0.06) < 1e-9


def test_seeded_start_skew_is_reproducible():
    def skew(seed):
        doc = run_native("stat_counter", 4, 0, "shared", "padded",
                         ["--warmup-us", "2000", "--window-us", "2000", "--interval-us", "1000", "--seed", str(seed), "--skew-ns", "900"])
        return doc["start_skew_ns"]
    a, b, c = skew(1), skew(1), skew(2)
    assert a == b and a != c and all(0 <= x <= 900 for x in a + c)
    assert skew(0) == [0, 0, 0, 0]


@pytest.mark.parametrize("args, why", [(["--window-us", "1000", "--interval-us", "300"], "whole number"),
                                       (["--window-us", "0"], "must be positive"),
                                       (["--seed", "1", "--skew-ns", "5000", "--warmup-us", "1"], "shorter than the warm-up"),
                                       (["--window-us", "1000", "--interval-us", "1"], "at most 512 intervals")])
def test_bad_measurement_flags_are_usage_errors(args, why):
    proc = subprocess.run([str(binary("lockref")), *args], capture_output=True, text=True)
    assert proc.returncode == 2 and why in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("args, why", [(["--ops", "0", "--window-us", "1000", "--interval-us", "1000"], "fixed work"),
                                       (["--threads", "2", "--layout", "S"], "needs --sharer"),
                                       (["--threads", "3", "--target", "0"], "--target"),
                                       (["--threads", "3", "--owner", "2", "--target", "2"], "other than the owner"),
                                       (["--threads", "3", "--owner", "3"], "--owner"),
                                       (["--threads", "3", "--owner", "2", "--target", "1", "--layout", "S"],
                                        "needs --sharer"),
                                       (["--threads", "3", "--interleave", "3"], "--interleave must divide 64"),
                                       (["--threads", "3", "--interleave", "8", "--home", "8"], "--home")])
def test_cclat_refuses_what_it_cannot_measure(args, why):
    proc = subprocess.run([str(binary("cclat")), *args], capture_output=True, text=True)
    assert proc.returncode == 2 and why in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("home", [0, 3])
def test_cclat_uses_fresh_lines_of_one_home(home):
    """gem5 puts line L's home in socket L mod S: every line cclat uses is of the home asked for, none is the
    first line of its page (touched to map the page), and no two repetitions share one."""
    doc = run_native("cclat", 2, 70, "load", "M", ["--interleave", "8", "--home", str(home)])
    lines = [f["address"] for f in doc["layout_map"]["objects"][0]["fields"]]
    assert len(lines) == len(set(lines)) == 64
    assert all(a % 64 == 0 and (a // 64) % 8 == home and a % 4096 != 0 for a in lines)
    assert doc["cells"][0]["n"] == 70 and doc["invariants"] == "ok"


def test_cclat_lets_any_thread_own_the_line():
    """The owner is a flag (a mesh's core-to-core spread needs every pair, not only core 0's): thread 2 owns, thread 0
    times, thread 1 shares, and every operation still finds the state it was given."""
    doc = run_native("cclat", 3, 10, "all", "all", ["--owner", "2", "--target", "0", "--sharer", "1"])
    assert (doc["owner"], doc["target"], doc["sharer"]) == (2, 0, 1) and doc["invariants"] == "ok"


@pytest.mark.parametrize("args, why", [(["--kib", "0"], "--kib"), (["--loads", "0"], "--loads"),
                                       (["--ops", "100"], "a warm-up that walks each cycle")])
def test_chase_refuses_what_it_cannot_time(args, why):
    proc = subprocess.run([str(binary("chase")), *args], capture_output=True, text=True)
    assert proc.returncode == 2 and why in proc.stderr and proc.stdout == ""


def chase(threads: int, warmup_us: int) -> dict:
    return run_native("chase", threads, 0, "random", "line", ["--kib", "64", "--loads", "100", "--warmup-us",
                                                              str(warmup_us), "--window-us", "5000", "--interval-us",
                                                              "5000"])


def test_chase_times_each_threads_loads_through_a_cycle_of_every_line():
    doc = chase(1, 20000)   # one thread: natively it has a CPU through the warm-up whatever else runs
    assert doc["lines"] == 1024 and doc["invariants"] == "ok"
    assert len(doc["ticks_per_load"]) == 1 and doc["ticks_per_load"][0] > 0


def test_chase_refuses_a_window_its_warm_up_did_not_walk_the_cycle_before():
    with pytest.raises(CohtbError, match="its own correctness check failed"):
        chase(1, 0)   # no warm-up: the window would time the first walk, from memory


def test_stat_counter_packed_layout_shares_lines():
    packed = field_lines(run_native("stat_counter", 4, 100, "percpu", "packed"))
    padded = field_lines(run_native("stat_counter", 4, 100, "percpu", "padded"))
    locals_packed = [packed[f"local_counters.local[{i}]"] for i in range(4)]
    locals_padded = [padded[f"local_counters.local[{i}]"] for i in range(4)]
    assert locals_packed[0] == locals_packed[1]
    assert all(not (a & b) for i, a in enumerate(locals_padded) for b in locals_padded[i + 1:])


def test_oversubscribed_threads_keep_the_invariants():
    """Three threads per CPU: workers are preempted inside critical sections (a lock holder off its CPU), and still
    no reference is lost."""
    threads = 3 * CPUS
    doc = run_native("lockref", threads, 2000, "retry100", "shared", timeout=300)
    assert doc["threads"] == threads and doc["final_count"] == doc["expected_count"] == 1


@pytest.mark.parametrize("name", ["lockref", "stat_path", "open_close"])
@pytest.mark.parametrize("policy", ["locked", "cmpxchg", "retry100"])
def test_ticket_spinlock_keeps_the_invariants(name, policy):
    """--spinlock ticket: lockref's cmpxchg tests head == tail, the locked path queues by ticket. One thread per
    CPU at most: a FIFO lock whose next owner is off its CPU stalls every waiter (a ticket lock's known weakness)."""
    threads = min(CPUS, 2)
    doc = run_native(name, threads, 3000, policy, "shared", ["--spinlock", "ticket"], timeout=120)
    assert doc["flags"]["spinlock"] == "ticket"
    assert doc["final_count"] == doc["expected_count"] == 1
    if policy == "locked":
        assert doc["locked_ops"] == doc["lockref_updates"] > 0


@pytest.mark.skipif(CPUS < 2, reason="the intruder and a worker must run at the same time: needs 2 CPUs")
def test_intruder_takes_the_lock_and_no_reference_is_lost():
    """The intruder's lock sends retry100 to the lock. Whether a worker sees the lock held depends on the
    two threads overlapping, which a loaded host may deny for a short run: so every run must be correct,
    and within a few runs (longer each time) one must show the fallback."""
    fell_back = []
    for attempt in range(5):
        doc = run_native("lockref", 1, 500_000 * 2 ** attempt, "retry100", "split",
                         ["--intruder-period-us", "20", "--intruder-hold-ns", "5000"])
        assert doc["final_count"] == 1
        fell_back.append((doc["intruder_holds"], doc["locked_ops"]))
        if doc["intruder_holds"] > 0 and doc["locked_ops"] > 0:
            return
    raise AssertionError(f"the intruder never made retry100 take the lock: (holds, locked ops) per run: {fell_back}")


@pytest.mark.parametrize("name", list(WORKLOADS))
@pytest.mark.parametrize("args, why", [(["--bogus"], "unknown flag"), (["--policy", "nope"], "not a choice"),
                                       (["--ops", "ten"], "not a non-negative whole number"), (["--threads", "0"], "--threads")])
def test_bad_flags_are_usage_errors(name, args, why):
    proc = subprocess.run([str(binary(name)), *args], capture_output=True, text=True)
    assert proc.returncode == 2 and why in proc.stderr and "usage:" in proc.stderr and proc.stdout == ""


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_binaries_are_static(name):
    out = subprocess.run(["readelf", "-l", str(binary(name))], capture_output=True, text=True, check=True).stdout
    assert "INTERP" not in out and "DYNAMIC" not in out


def field_lines(doc: dict) -> dict[str, set[int]]:
    """Cache lines each field of the layout map touches (native run: addresses as they are)."""
    return {f.label: set(f.lines) for f in translate(doc["layout_map"], None)}


def test_rwsem_layout_map_names_its_check_counters_on_lines_of_their_own():
    """The invariant check's counters are updated inside every critical section, so the layout map names them:
    the attribution can then say how much of the traffic is the check's, not the lock's."""
    doc = run_native("rwsem", 2, 100, "sleep", "shared")
    lines = field_lines(doc)
    lock = set().union(*(lines[f"rwsem.{f}"] for f in ("count", "owner", "wait_seq")))
    readers, writers = lines["inside_readers.inside_readers"], lines["inside_writers.inside_writers"]
    assert len(readers) == len(writers) == 1 and not readers & writers and not (readers | writers) & lock
