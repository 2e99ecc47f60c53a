"""How the configs' JSON files (machines/, topologies/) are read: a file that cannot be read, is not JSON or is not
an object is refused in one line naming it, and a field is taken only with its type. Standard library only, as the
modules that use it: gem5's configs and cohtb read the files by the same rules."""

import json
from pathlib import Path
from typing import Callable


def read_object(path: Path, error: type, known: Callable[[], str]) -> tuple[bytes, dict]:
    """The file's bytes and its JSON object; `error` raised with one line otherwise (`known()`: the names there,
    said when the file cannot be read)."""
    try:
        data = path.read_bytes()
    except OSError as e:
        raise error(f"{path}: cannot read ({e.strerror}); {known()}") from None
    try:
        doc = json.loads(data)
    except ValueError as e:
        raise error(f"{path}: not JSON ({e})") from None
    if not isinstance(doc, dict):
        raise error(f"{path}: not a JSON object")
    return data, doc


def field(path: Path, doc: dict, key: str, kind: type, error: type):
    """doc[key], which must be a `kind` (a bool is no number)."""
    value = doc.get(key)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise error(f"{path}: field '{key}': missing or not {kind.__name__}")
    return value
