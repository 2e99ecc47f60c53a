"""What a machine costs in host time (docs/machine.md): a full-system boot and a measured window of each full-system
run, per machine, read from the runs' manifests (the boot's from the checkpoint record a run keeps)."""

from __future__ import annotations

from cohtb.tables import Table


def costs_table(runs: list) -> Table:
    """One row per full-system run: its machine, kernel, gem5 build, the host seconds of its boot (the checkpoint it
    started from) and of the run itself (restore, warm-up and window), and the simulated window."""
    rows = []
    for r in sorted(runs, key=lambda r: (r.manifest.system.machine or "flat", r.spec.kernel, r.id)):
        m = r.manifest
        boot = m.checkpoint.host_seconds if m.checkpoint else None
        window = m.workload.measure.window_ns / 1e6 if m.workload.measure else None
        rows.append([m.system.machine or "flat", f"{r.spec.sockets}x{r.spec.cores_per_socket}", r.spec.kernel,
                     m.gem5.build or "", f"{boot:,.0f}" if boot is not None else "-", f"{m.gem5.host_seconds:,.0f}",
                     f"{r.spec.warmup_us / 1000:g} + {window:g}" if window is not None else "-",
                     f"{m.ingest.get('lines', 0):,}"])
    return Table("Host time of full-system runs, per machine",
                 ["machine", "sockets x cores", "kernel", "gem5 build", "boot to /init, host s", "run, host s",
                  "simulated warm-up + window, ms", "trace lines"], rows,
                 "Host seconds on this project's 2-core machine, as recorded (how many simulations shared its cores is "
                 "not: docs/machine.md says, for the runs here). The boot is the one the run's "
                 "checkpoint was saved from (its manifest keeps the record); the run restores it, sets up on atomic "
                 "CPUs, then runs the warm-up and the window traced, ingest included.")
