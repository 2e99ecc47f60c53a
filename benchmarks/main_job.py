#!/usr/bin/env python3
"""The main job's own time (`cohtb run` without gem5, on the bundled runs), cold and warm: first with an empty
analysis cache (every run replayed through the RTL and the reference model), then again (the counters the first
made, checked against the model then, reused). Set-up aside: the RTL, the workloads and the native tools built.

    .venv/bin/python benchmarks/main_job.py [--jobs N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed_run(out: Path, cache: Path, jobs: int | None) -> float:
    env = {k: v for k, v in os.environ.items() if k not in ("GEM5", "GEM5_CHI")}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep)
                                  if not os.path.exists(os.path.join(p, "gem5.opt")))
    env["COHTB_CACHE"] = str(cache)
    cmd = [sys.executable, "-m", "cohtb.cli", "run", "--out", str(out), *(["--jobs", str(jobs)] if jobs else [])]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - t0
    if proc.returncode != 0:
        sys.exit(f"main_job.py: cohtb run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--jobs", type=int, default=None, help="parallel replays (default: the machine's cores)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        cold = timed_run(Path(tmp) / "cold", cache, args.jobs)
        warm = timed_run(Path(tmp) / "warm", cache, args.jobs)
    print(f"cohtb run on the bundled runs, {os.cpu_count()} cores: cold (empty analysis cache) {cold:.1f} s, "
          f"warm (the counters reused) {warm:.1f} s")


if __name__ == "__main__":
    main()
