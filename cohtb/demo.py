"""A built-in demonstration: lockref-style ping-pong on one line vs the same work on separate lines,
replayed through the Verilated monitor and the reference model. Used by `cohtb run` until gem5 runs exist."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from . import events as ev
from . import replay
from .compare_counters import diff_counters
from .errors import CohtbError
from .streams import socket_map


def demo_stream(shared: bool, threads: int = 32, ops: int = 2000, seed: int = 3) -> tuple[ev.Header, np.ndarray]:
    """Each op: a read of the lookup fields, then a write of the count word. `shared`: one line holds both."""
    rng = np.random.default_rng(seed)
    cores, sockets = 32, 8
    order = rng.integers(0, threads, ops)
    lookup_line, count_line = 0x1000, (0x1000 if shared else 0x1001)
    rows = []
    for i, core in enumerate(order.tolist()):
        s = core * sockets // cores
        rows.append((2 * i, lookup_line, core, s, int(ev.Kind.READ)))
        rows.append((2 * i + 1, count_line, core, s, int(ev.Kind.WRITE)))
    return ev.Header(64, cores, socket_map(cores, sockets), {"generator": "cohtb.demo", "shared": shared}), ev.make_records(rows)


def run(out: Path) -> int:
    print("cohtb run: no gem5 runs yet; replaying the built-in demo streams through the monitor", flush=True)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for layout in ("shared", "split"):
        header, recs = demo_stream(layout == "shared")
        path = out / f"demo-{layout}.events"
        with ev.EventWriter(path, header) as w:
            w.write(recs)
        regions = [replay.Region(0, "lookup fields", 0x1000, (1 << 42) - 1), replay.Region(1, "count word", 0x1001, (1 << 42) - 1)]
        t0 = time.perf_counter()
        rtl, perf = replay.replay_rtl(path, regions)
        model = replay.replay_model(path, regions)
        diffs = diff_counters(model, rtl)
        if diffs:
            raise CohtbError(f"{path}: RTL and model disagree: {'; '.join(diffs[:5])}")
        results[layout] = {"counters": rtl, "events": perf["events"], "seconds": time.perf_counter() - t0}
    tmp = out / "demo.json.tmp"
    tmp.write_text(json.dumps(results, indent=1))
    tmp.replace(out / "demo.json")
    ops = 2000
    print(f"\n{'layout':8s} {'transfers/op':>13s} {'x-socket/op':>12s} {'dirty reads/op':>15s} {'invalidations/op':>17s}")
    for layout, r in results.items():
        g = r["counters"]["global"]
        print(f"{layout:8s} {g['transfers'] / ops:13.3f} {g['crossSocketTransfers'] / ops:12.3f} "
              f"{(g['dirtyReadsLocal'] + g['dirtyReadsRemote']) / ops:15.3f} {g['invalidations'] / ops:17.3f}")
    print(f"\nRTL == reference model on both streams. Counters: {out / 'demo.json'}")
    return 0
