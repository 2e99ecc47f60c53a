"""The locked-instruction check (workloads/atomicity.c) of each socket machine, as docs/machine.md shows it: every
increment counted, or how many a broken locked read-modify-write lost."""

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
