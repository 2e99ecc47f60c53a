"""Hand-built run directories whose counts are known by construction (for report and compare tests)."""

import json
from pathlib import Path

from cohtb.experiments.seeds import EXPERIMENTS
from cohtb.places import REFERENCE_RUNS, RUNS
from cohtb.run.machines import hierarchy_of
from cohtb.run.runs import kept
from cohtb.trace import events as ev
from cohtb.run.spec import RunSpec

LOOKUP_LINE, COUNT_LINE = 0x1000, 0x1002


def make_run(root: Path, layout: str, ops: int, roi_seconds: float, rounds: int, policy: str = "locked") -> Path:
    """Two cores in different sockets alternate: core A writes the count word, core B reads the lookup
    fields then writes the count word, `rounds` times. With `shared` both fields sit on one line.

    Per round on the count line: 2 cross-socket transfers (A<-B, B<-A) after the first write.
    With `shared`, B's read of the lookup fields is a remote dirty read of A's line; with `split`
    the lookup line is never written, so no dirty reads."""
    spec = RunSpec("lockref", policy, layout, 2, 2, ops)
    count_line = LOOKUP_LINE if layout == "shared" else COUNT_LINE
    a, b = (0, 0), (2, 1)   # (core, socket)
    rows, tick = [], 0
    for _ in range(rounds):
        for core, sock, kind, line in ((*a, 1, count_line), (*b, 0, LOOKUP_LINE), (*b, 1, count_line)):
            tick += 10
            rows.append((tick, line, core, sock, kind))
    run = root / spec.id
    run.mkdir(parents=True)
    with ev.EventWriter(run / "events.cohtb", ev.Header(64, 4, [0, 0, 1, 1], {"run": spec.id})) as w:
        w.write(ev.make_records(rows))
    fields = [("d_name", LOOKUP_LINE * 64 + 32, 16), ("d_lockref", count_line * 64 + (48 if layout == "shared" else 0), 8)]
    manifest = {
        "cohtb_run": 1, "id": spec.id, "spec": spec.to_json(),
        "gem5": {"binary": "fixture", "version": "fixture", "command": [], "host_seconds": 0.0},
        "ingest": {"events": len(rows)}, "system": {"sockets": 2, "cores_per_socket": 2, "cores": 4, "cpu": "timing",
                                                  "clock": "3GHz", "params": {"local_latency": 20, "socket_latency": 300}},
        "controllers": {"l1": [{"core": c, "socket": s} for c, s in enumerate([0, 0, 1, 1])]}, "roi": {"begin_tick": 0, "end_tick": int(roi_seconds * 1e12), "seconds": roi_seconds},
        # threads 0-3 did 40%, 30%, 20%, 10% of the ops (fairness 0.25; sockets 70% / 30%)
        "workload": {"ops": ops, "threads": 4, "locked_ops": 2 * ops,
                     "per_thread_ops": [ops * 4 // 10, ops * 3 // 10, ops * 2 // 10, ops - ops * 9 // 10]},
        "files": {"events": "events.cohtb"},
        "layout": [{"object": "dentry", "name": n, "vaddr": a, "size": s, "paddr": a, "how": "identity", "line_size": 64}
                   for n, a, s in fields],
    }
    (run / "manifest.json").write_text(json.dumps(manifest))
    return run


def seed_with_runs_to_record(hierarchy: str) -> str | None:
    """A seed whose current declaration still has runs to record, on a machine of this hierarchy (None: every one
    has all its runs kept): what a test of `cohtb seeds --launch`'s refusals needs, since a launch with nothing to
    record writes nothing and so refuses nothing."""
    return next((seed for seed, e in EXPERIMENTS.items() if hierarchy_of(e.specs()[0].machine) == hierarchy
                 and kept(e.specs(), [RUNS, REFERENCE_RUNS])[1]), None)
