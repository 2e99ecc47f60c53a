#!/usr/bin/env python3
"""Trace lines per second of `cohtb ingest` (the native cohtb-ingest tool), plain and gzip input.

    .venv/bin/python benchmarks/ingest_throughput.py [--lines N]
"""

from __future__ import annotations

import argparse
import gzip
import json
import subprocess
import tempfile
import time
from pathlib import Path

from cohtb.contract import contiguous_socket_map
from cohtb.trace import ingest

from cohtb.verify import synthetic_trace


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=3_000_000)
    args = ap.parse_args()
    exe = ingest.tool_path()
    with tempfile.TemporaryDirectory() as tmp:
        plain, packed = Path(tmp) / "trace.txt", Path(tmp) / "trace.txt.gz"
        with open(plain, "w") as f:
            f.writelines(synthetic_trace.lines(args.lines))
        with open(plain, "rb") as src, gzip.open(packed, "wb", compresslevel=1) as dst:
            dst.write(src.read())
        mb = plain.stat().st_size / 1e6
        for path in (plain, packed):
            t0 = time.perf_counter()
            proc = subprocess.run([str(exe), str(path), str(Path(tmp) / "out.events"), "--socket-map", ",".join(map(str, contiguous_socket_map(32, 8)))],
                                  capture_output=True, text=True, check=True)
            secs = time.perf_counter() - t0
            stats = json.loads(proc.stdout)
            print(f"{path.name:14s} {stats['lines']:>11,d} lines ({mb:.0f} MB as text) in {secs:6.2f} s = "
                  f"{stats['lines'] / secs:>12,.0f} lines/s, {stats['events']:,d} events kept")


if __name__ == "__main__":
    main()
