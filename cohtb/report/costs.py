"""What a machine costs in host time (docs/machine.md): a full-system boot and a measured window of each full-system
run, per machine, read from the runs' manifests (the boot's from the checkpoint record a run keeps)."""

from __future__ import annotations

from cohtb.tables import Table


def costs_table(runs: list) -> Table:
    """One row per full-system run: its machine, kernel, gem5 build, the host seconds of its boot (the checkpoint it
    started from) and of the run itself (restore, warm-up and window), each as wall time and as gem5's CPU time,
    and the simulated window."""
    rows = []
    for r in sorted(runs, key=lambda r: (r.manifest.system.machine or "flat", r.spec.kernel, r.id)):
        m = r.manifest
        boot = m.checkpoint
        window = m.workload.measure.window_ns / 1e6 if m.workload.measure else None
        rows.append([m.system.machine or "flat", f"{r.spec.sockets}x{r.spec.cores_per_socket}", r.spec.kernel,
                     m.gem5.build or "", _seconds(boot.host_seconds if boot else None),
                     _seconds(boot.cpu_seconds if boot else None), _seconds(m.gem5.host_seconds),
                     _seconds(m.gem5.cpu_seconds),
                     f"{r.spec.warmup_us / 1000:g} + {window:g}" if window is not None else "-",
                     f"{m.ingest.get('lines', 0):,}"])
    return Table("Host time of full-system runs, per machine",
                 ["machine", "sockets x cores", "kernel", "gem5 build", "boot to /init, wall s", "boot, gem5 CPU s",
                  "run, wall s", "run, gem5 CPU s", "simulated warm-up + window, ms", "trace lines"], rows,
                 "Seconds on this project's 2-core machine. Wall time counts whatever else shared the cores (other "
                 "simulations often did); gem5's CPU time (user + system, recorded since it was kept: '-' before) "
                 "does not, and is the cost to compare. The boot is the one the run's checkpoint was saved from (its "
                 "manifest keeps the record); the run restores it, sets up on atomic CPUs, then runs the warm-up and "
                 "the window traced; its wall time includes the ingest, its CPU time is gem5's alone.")


def _seconds(value: float | None) -> str:
    return f"{value:,.0f}" if value is not None else "-"
