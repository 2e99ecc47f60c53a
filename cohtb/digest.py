"""Content digests: what a run was made from (a workload binary) and what a cached build is keyed by."""

from __future__ import annotations

import hashlib
from pathlib import Path


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def inputs_digest(parts: list[tuple[str, bytes]]) -> str:
    """One digest of named inputs: a change to any name or content changes it."""
    h = hashlib.sha256()
    for name, data in sorted(parts):
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()
