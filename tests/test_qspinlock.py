"""The queued spinlock model (workloads/common/qspinlock.h, `--spinlock qspinlock`): its lock word as lockers arrive and
leave, checked by a C unit test (workloads/tests/qspinlock_test.c), and mutual exclusion in the workloads that take it.

Natively at most one thread per CPU: a FIFO lock whose next owner is off its CPU stalls every waiter behind it (the
kernel never spins preempted; user threads do), as the ticket lock's test says too."""

import os
import subprocess

import pytest

from cohtb.se.workloads import BIN_DIR, run_native
from cohtb.toolchain import ROOT

CPUS = len(os.sched_getaffinity(0))
THREADS = max(2, min(CPUS, 4))
QSPIN = ["--spinlock", "qspinlock"]


def test_lock_word_encoding_and_hand_overs():
    """Fast path 0x1; a second locker sets pending (0x101); a third queues (tail 0x00040000: its index 0, plus 1, at
    bit 18) and a fourth behind it (0x00080101); the pending waiter, then the queue in order, take the lock; lockref's
    unlocked test is true only for 0 (pending only, a tail only, halves equal all locked); tas and ticket keep theirs."""
    subprocess.run(["make", "-s", "-C", str(ROOT / "workloads"), "tests"], check=True, capture_output=True, text=True, timeout=300)
    proc = subprocess.run([str(BIN_DIR / "tests" / "qspinlock_test")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "FAIL" not in proc.stderr, proc.stderr
    assert proc.stdout.strip() == "qspinlock_test: ok"


@pytest.mark.parametrize("name", ["lockref", "dget_parent", "stat_path", "open_close"])
@pytest.mark.parametrize("policy", ["locked", "cmpxchg", "retry100", "unified"])
def test_lockref_workloads_keep_every_reference(name, policy):
    """Every update under the lock (locked), or by cmpxchg only while the whole word is 0: no reference is lost. Enough
    ops that the threads overlap for most of the run (with a lock that never waited, most runs lose references)."""
    ops = 200_000 if name in ("lockref", "dget_parent") else 50_000
    doc = run_native(name, THREADS, ops, policy, "shared", QSPIN, timeout=120)
    assert doc["flags"]["spinlock"] == "qspinlock"
    assert doc["final_count"] == doc["expected_count"] == 1
    updates = THREADS * ops * (8 if name == "open_close" else 2)
    assert doc["lockref_updates"] == updates
    if policy == "locked":
        assert doc["locked_ops"] == updates


@pytest.mark.parametrize("lock", ["qspinlock", "ticket"])
@pytest.mark.parametrize("policy", ["locked", "batched"])
@pytest.mark.parametrize("layout", ["shared", "split"])
def test_list_batch_under_each_lock(lock, policy, layout):
    """The list lock as a qspinlock (4.4's s_inode_list_lock) or a ticket lock; batched takes it by trylock
    (queued_spin_trylock; 3.10's arch_spin_trylock). Every add and delete done exactly once, the list empty and well
    linked at the end."""
    ops = 200_000
    doc = run_native("list_batch", THREADS, ops, policy, layout, ["--spinlock", lock], timeout=120)
    assert doc["flags"]["spinlock"] == lock and doc["invariants"] == "ok"
    assert doc["ops"] == doc["ops_by_owner"] + doc["ops_for_others"] == THREADS * ops
    assert doc["final_length"] == 0 and doc["max_length"] <= THREADS
    if policy == "locked":
        assert doc["ops_for_others"] == 0


def test_list_batch_lock_defaults_to_tas():
    """Runs made before list_batch had --spinlock keep their meaning: the default is the test-and-test-and-set lock."""
    doc = run_native("list_batch", 2, 100, "locked", "shared")
    assert doc["flags"]["spinlock"] == "tas"


@pytest.mark.parametrize("name", ["lockref", "list_batch"])
def test_spinlock_help_names_each_kinds_era(name):
    proc = subprocess.run([str(BIN_DIR / name), "--help"], capture_output=True, text=True)
    line = next(l for l in proc.stderr.splitlines() if l.strip().startswith("--spinlock"))
    assert "one of tas ticket qspinlock" in line
    assert "ticket (x86 2.6.25 .. 4.1)" in line and "qspinlock (x86 4.2+" in line and "uncontended shape" in line
