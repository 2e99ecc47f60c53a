"""Writing results so that nothing half-written is ever taken for complete."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def ordinary_mode(path: Path | str, directory: bool = False) -> None:
    """The mode a file or directory would have had from open()/mkdir() (mkstemp and mkdtemp make them private)."""
    os.chmod(path, (0o777 if directory else 0o666) & ~umask())


@contextmanager
def atomic_dir(final: Path) -> Iterator[Path]:
    """Yields a temporary directory beside `final`, renamed to `final` when the block succeeds
    (replacing an older one) and removed when it fails."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    ordinary_mode(tmp, directory=True)
    try:
        yield tmp
        if final.exists():
            shutil.rmtree(final)
        os.rename(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def write_json_atomic(path: Path, doc) -> None:
    write_text_atomic(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
