"""The workload binaries (workloads/*.c): what each accepts and how to run one natively."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.toolchain import ROOT

BIN_DIR = ROOT / "build" / "workloads"


@dataclass(frozen=True)
class Workload:
    name: str
    seed: str
    policies: tuple[str, ...]
    layouts: tuple[str, ...]
    default_ops: int


WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    Workload("lockref", "000, 004", ("locked", "cmpxchg", "retry100", "trywait", "unified"), ("shared", "split", "padded"), 100_000),
    Workload("dget_parent", "000", ("locked", "cmpxchg", "retry100", "trywait", "unified"), ("shared", "split", "padded"), 100_000),
    Workload("list_batch", "001", ("locked", "batched"), ("shared", "split"), 100_000),
    Workload("rwsem", "002", ("sleep", "spin"), ("shared", "split"), 50_000),
    Workload("stat_counter", "003", ("shared", "percpu"), ("padded", "packed"), 1_000_000),
)}


def binary(name: str) -> Path:
    if name not in WORKLOADS:
        raise CohtbError(f"unknown workload '{name}' (known: {', '.join(WORKLOADS)})")
    path = BIN_DIR / name
    if not path.exists():
        raise CohtbError(f"{path}: workload not built (run the set-up: make setup)")
    return path


def workload_args(threads: int, ops: int, policy: str, layout: str, extra: list[str] | None = None) -> list[str]:
    return ["--threads", str(threads), "--ops", str(ops), "--policy", policy, "--layout", layout, *(extra or [])]


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


def field_lines(doc: dict) -> dict[str, set[int]]:
    """Cache lines each field of the layout map touches, as 'object.field' -> {line addresses}."""
    size = doc["layout_map"]["cache_line"]
    out: dict[str, set[int]] = {}
    for obj in doc["layout_map"]["objects"]:
        for f in obj["fields"]:
            out[f"{obj['name']}.{f['name']}"] = set(range(f["address"] // size, (f["address"] + f["size"] - 1) // size + 1))
    return out
