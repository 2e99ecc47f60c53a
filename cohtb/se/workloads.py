"""The workload binaries (workloads/*.c): what each accepts and how to run one natively."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from collections.abc import Mapping
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.toolchain import ROOT

BIN_DIR = ROOT / "build" / "workloads"


# The workloads, and the seed (cohtb/experiments/seed_data/<seed>/published.json cites each) each stands for. What each accepts comes from the binary.
SEEDS = {"lockref": "000, 004", "dget_parent": "000", "list_batch": "001", "rwsem": "002", "stat_counter": "003",
         "stat_path": "004", "open_close": "000", "pause": "every spin-wait (what PAUSE costs)",
         "cclat": "the machine's calibration (docs/machine.md)",
         "chase": "the mesh machine's calibration: load latency per level (docs/workloads.md)",
         "atomicity": "the machine's locked instructions (docs/machine.md)",
         "contention": "the machine under contention (docs/machine.md)"}


@dataclass(frozen=True)
class Workload:
    name: str
    seed: str
    policies: tuple[str, ...]
    layouts: tuple[str, ...]
    default_ops: int
    defaults: dict[str, str | None]


def describe(name: str) -> Workload:
    """A workload as its binary describes itself (`--describe`): its policies, layouts and flag defaults."""
    path = binary(name)
    proc = subprocess.run([str(path), "--describe"], capture_output=True, text=True)
    try:
        flags = {f["name"]: f for f in json.loads(proc.stdout)["flags"]}
        return Workload(name, SEEDS[name], tuple(flags["policy"]["choices"]), tuple(flags["layout"]["choices"]),
                        int(flags["ops"]["default"]), {n: f["default"] for n, f in flags.items()})
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
        raise CohtbError(f"{path} --describe: not a workload description ({e}); rebuild: make setup") from None


class _Workloads(Mapping):
    """name -> Workload, each described by its binary on first use."""

    def __init__(self) -> None:
        self._cache: dict[str, Workload] = {}

    def __getitem__(self, name: str) -> Workload:
        if name not in SEEDS:
            raise KeyError(name)
        if name not in self._cache:
            self._cache[name] = describe(name)
        return self._cache[name]

    def __iter__(self):
        return iter(SEEDS)

    def __len__(self) -> int:
        return len(SEEDS)


WORKLOADS = _Workloads()


def binary(name: str) -> Path:
    if name not in SEEDS:
        raise CohtbError(f"unknown workload '{name}' (known: {', '.join(SEEDS)})")
    path = BIN_DIR / name
    if not path.exists():
        raise CohtbError(f"{path}: workload not built (run the set-up: make setup)")
    return path


def workload_args(threads: int, ops: int, policy: str, layout: str, extra: list[str] | None = None) -> list[str]:
    """ops > 0: fixed work per thread; 0: the workload's timed window (its --warmup-us/--window-us, or extra's)."""
    return ["--threads", str(threads), *(["--ops", str(ops)] if ops else []), "--policy", policy, "--layout", layout,
            *(extra or [])]


def run_native(name: str, threads: int, ops: int, policy: str, layout: str, extra: list[str] | None = None,
               timeout: float = 300) -> dict:
    """Runs one benchmark on this machine and returns its JSON; a failed run is an error naming it."""
    cmd = [str(binary(name)), *workload_args(threads, ops, policy, layout, extra)]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise CohtbError(f"{' '.join(cmd)}: no result within {timeout:.0f} s") from None
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise CohtbError(f"{' '.join(cmd)}: exit {proc.returncode}, no JSON result; stderr: {proc.stderr.strip()[:500]}") from None
    if proc.returncode != 0:
        raise CohtbError(f"{' '.join(cmd)}: exit {proc.returncode}: its own correctness check failed: {json.dumps(doc)[:500]}")
    return doc
