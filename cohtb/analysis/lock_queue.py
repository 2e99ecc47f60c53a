"""Queued spinlock acquisitions, read from the guest kernel's own cache traffic, without touching the guest.

Linux's qspinlock gives each CPU one cache line of MCS nodes (the per-CPU `qnodes`, kernel/locking/qspinlock.c).
A CPU that finds a spinlock contended past its pending bit queues on its node: its predecessor in the queue
writes the node's `locked` to hand the lock over, its successor writes the node's `next`, and when the CPU
leaves the slow path, lock taken, it releases its node (`__this_cpu_dec(qnodes[0].mcs.count)`), a write to its
own line that misses because those neighbours wrote the line since. So one WRITE event of CPU k on `qnodes (CPU
k)` marks one queued acquisition that had a neighbour in the queue, at the moment the CPU took the lock (the
node's set-up at the next queueing then hits). The count is close, not exact: a CPU that queued with no
neighbour keeps its line (no event), and a nested slow path (an interrupt's spinlock while the node is in use)
or an evicted line adds one. An uncontended acquisition (the lock word's cmpxchg) and one through the pending
bit never touch a node. The count covers every spinlock; which lock it was is not in the node, so a workload
with one contended lock (the benchmark file's `d_lock`) is needed to read it as that lock's. The trace's core k
must be the guest's CPU k (cohtb/fs/runner.py checks it from the checkpoint)."""

from __future__ import annotations

import re

import numpy as np

from cohtb.contract import Kind

NODE = re.compile(r"qnodes \(CPU (\d+)\)")   # how cohtb/fs/symbols.py names each CPU's copy of a per-CPU variable


def node_lines(kernel_symbols) -> dict[int, int]:
    """line -> CPU for each CPU's qnodes line, from a full-system run's named kernel lines (LineSymbols): only the
    lines its trace touched, so none when no CPU queued."""
    out = {}
    for k in kernel_symbols:
        cpus = {int(m.group(1)) for s in k.symbols if (m := NODE.fullmatch(s))}
        if len(cpus) == 1:   # two CPUs' nodes on one line cannot be told apart: such a line is left out
            out[k.line] = cpus.pop()
    return out


def queued(recs: np.ndarray, nodes: dict[int, int]) -> np.ndarray:
    """The events that each mark one queued acquisition: a CPU's write to its own qnodes line (its node's
    release, lock taken)."""
    if not nodes or not len(recs):
        return recs[:0]
    lines = np.fromiter(nodes, dtype=np.uint64)
    cpus = np.fromiter(nodes.values(), dtype=np.int64)
    writes = recs[(recs["kind"] == Kind.WRITE) & np.isin(recs["line"], lines)]
    order = np.argsort(lines)
    owner = cpus[order][np.searchsorted(lines[order], writes["line"])]
    return writes[writes["core"].astype(np.int64) == owner]


def per_interval(recs: np.ndarray, nodes: dict[int, int], origin_tick: int, interval_ticks: int, n: int) -> list[int]:
    """Queued acquisitions in each of `n` intervals of `interval_ticks` from `origin_tick` (the monitor's grid:
    cohtb/monitor/live.py); events past the last interval count in it, as the monitor's last snapshot does."""
    q = queued(recs, nodes)
    k = np.minimum((q["tick"].astype(np.int64) - origin_tick) // interval_ticks, n - 1)
    return np.bincount(k[k >= 0], minlength=n).tolist()


def counted(runs: list) -> bool:
    """Whether every one of these runs' analyses has its queued acquisitions: a kernel's runs with their MCS-node
    lines named (an SE run has none; its workload counts its locked updates itself)."""
    return bool(runs) and all(m.analysis.lock_queue is not None for m in runs)
