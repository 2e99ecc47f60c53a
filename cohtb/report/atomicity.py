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
                     f"{w['ops']:,}", f"{w['lost_increments']:,}", r.manifest.gem5.build or ""])
    return Table("Locked instructions: increments lost under contention (workloads/atomicity.c)",
                 ["machine", "sockets x cores", "instruction", "increments", "lost", "gem5 build"], rows,
                 "Every core increments one count on one line with the instruction named (xadd: lock xadd; cmpxchg: "
                 "a lock cmpxchg loop; xchg: an xchg lock around a plain increment); a lost increment is a locked "
                 "read-modify-write whose line was taken between its read and its write.")
