"""Content digests: what a run was made from (a workload binary) and what a cached build is keyed by."""

from __future__ import annotations

import hashlib
from pathlib import Path


def files_sha256(paths: list[Path], prefix: bytes = b"") -> str:
    """One digest of `prefix` and the files' bytes, one after another, read in blocks (a gem5 binary is large)."""
    h = hashlib.sha256(prefix)
    for path in paths:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def file_sha256(path: Path) -> str:
    return files_sha256([path])


def tree_digest(files: list[Path], root: Path, prefix: bytes = b"") -> str:
    """One digest of `prefix` and source files, each by its path under `root` and its bytes: a renamed, moved or
    edited file changes it."""
    h = hashlib.sha256(prefix)
    for f in files:
        h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def inputs_digest(parts: list[tuple[str, bytes]]) -> str:
    """One digest of named inputs: a change to any name or content changes it."""
    h = hashlib.sha256()
    for name, data in sorted(parts):
        h.update(f"{name}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()
