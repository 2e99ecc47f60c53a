"""Each machine's locked instructions, as docs/machine.md shows them: the check (workloads/atomicity.c: every
increment counted, or how many a broken locked read-modify-write lost), the same runs traced (line moves per
increment), and one line under contention (workloads/contention.c: throughput and moves per update by size)."""

from __future__ import annotations

from cohtb.tables import Table


def atomicity_table(runs: list) -> Table:
    """The locked-RMW check (workloads/atomicity.c) on each machine: every increment counted, or how many were lost."""
    rows = []
    for r in sorted(runs, key=lambda r: (r.manifest.system.machine, r.spec.cores, r.spec.policy)):
        w = r.manifest.workload.model_dump()
        rows.append([r.manifest.system.machine, f"{r.spec.sockets}x{r.spec.cores_per_socket}", r.spec.policy,
                     f"{w['ops']:,}", f"{w['lost_increments']:,}", f"{w.get('lost_tickets', 0):,}", w["invariants"],
                     r.manifest.gem5.build or ""])
    return Table("Locked instructions: increments lost under contention (workloads/atomicity.c)",
                 ["machine", "sockets x cores", "instruction", "increments", "lost", "tickets handed out twice",
                  "invariants", "gem5 build"], rows,
                 "Every core increments one count on one line with the instruction named (xadd: lock xadd; cmpxchg: "
                 "a lock cmpxchg loop; xchg: an xchg lock around a plain increment; ticket: a ticket lock around "
                 "it); a lost increment, or a ticket two cores drew, is a locked read-modify-write whose line was "
                 "taken between its read and its write; invariants: the count adds up and the lock is free at the "
                 "end.")


def handoff_table(ms: list) -> Table:
    """The locked-instruction runs traced (the handoff-<machine> plans): how often the count's line moved per
    increment, and the simulated time per move, so a machine's slower run splits into more moves or dearer ones."""
    rows = []
    for m in sorted(ms, key=lambda m: (m.spec.policy, m.run.manifest.system.machine)):
        per_increment = m.per_op   # fixed work: the run's operations are its increments
        transfers = per_increment["transfers"] * m.run.region_ops
        rows.append([m.spec.policy, m.run.manifest.system.machine, f"{m.spec.sockets}x{m.spec.cores_per_socket}",
                     f"{m.run.roi_seconds * 1e3:.3f}", f"{per_increment['transfers']:.2f}",
                     f"{per_increment['crossSocketTransfers']:.2f}", f"{per_increment['dirtyReads']:.2f}",
                     f"{per_increment['invalidations']:.2f}", f"{m.run.roi_seconds / transfers * 1e9:.0f}"])
    return Table("Locked instructions traced: line moves per increment",
                 ["instruction", "machine", "sockets x cores", "simulated ms", "transfers per increment",
                  "of them cross-socket", "dirty reads per increment", "invalidations per increment",
                  "ns per transfer"], rows,
                 "The 2x4 runs of the locked-instruction check again, traced (`cohtb launch --matrix handoff-<machine>`); "
                 "the monitor's counts over every line per increment counted (the count's line carries all but a "
                 "handful of them).")


def contention_table(ms: list) -> Table:
    """The contention benchmark (workloads/contention.c) on each machine: per policy and size, updates per simulated
    µs, the line's moves per update and their time, and for the locks how often an acquisition came from another
    thread and the time per such handoff."""
    rows = []
    order = {"xadd": 0, "cmpxchg": 1, "ticket": 2, "qspinlock": 3}
    for m in sorted(ms, key=lambda m: (m.run.manifest.system.machine, order.get(m.spec.policy, 9), m.spec.sockets,
                                       m.spec.cores)):
        w = m.run.manifest.workload.model_dump()
        per = m.per_op
        window_ns = m.run.measured_seconds * 1e9
        moves = per["transfers"] * m.run.ops
        handoff_share = w["handoffs"] / w["count"] if m.spec.policy in ("ticket", "qspinlock") and w["count"] else None
        rows.append([m.run.manifest.system.machine, m.spec.policy, f"{m.spec.sockets}x{m.spec.cores_per_socket}",
                     f"{m.throughput * 1e-6:.2f}", f"{per['transfers']:.2f}", f"{per['crossSocketTransfers']:.2f}",
                     f"{window_ns / moves:.0f}" if moves else "-",
                     f"{handoff_share:.2f}" if handoff_share is not None else "-",
                     f"{window_ns / (m.run.ops * handoff_share):.0f}" if handoff_share else "-",
                     w["invariants"]])
    return Table("One line under contention: updates per µs and line moves per update (workloads/contention.c)",
                 ["machine", "update", "sockets x cores", "updates per µs", "moves per update",
                  "of them cross-socket", "ns per move", "handoffs per update", "ns per handoff", "invariants"], rows,
                 "Every thread updates one shared line for the window: xadd, lock xadd; cmpxchg, a load and a lock "
                 "cmpxchg retry loop (lockref's shape); ticket and qspinlock, a plain increment under 3.10's ticket "
                 "lock or 6.12's queued spinlock. Updates per µs: the window's updates over its simulated time; "
                 "moves: the monitor's transfers per update, of every line the threads share (the updated line's, "
                 "and a queued lock's nodes and the harness's own), ns per move the window over them; a handoff is an acquisition after another thread's (the lock's "
                 "last holder on the line), its share of all updates over the whole run, ns per handoff the window "
                 "over the window's updates at that share. The runs: `cohtb launch --matrix contention-<machine>`, "
                 "kept in calibration-runs/.")
