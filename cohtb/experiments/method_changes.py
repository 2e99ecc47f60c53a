"""The method changes (method_changes.toml): every change to a seed experiment's model, parameters, verdict rule
or kept runs since the seeds were first simulated, each between two versions of the experiment's declaration,
with its commit, its reason and whether results had been seen before it. The results page computes each
change's verdict before and after from the runs kept under those two declarations."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from cohtb.errors import CohtbError

DATA = Path(__file__).with_name("method_changes.toml")


@dataclass(frozen=True)
class MethodChange:
    commit: str
    date: str
    experiment: str
    before: int         # declaration versions
    after: int
    what: str
    reason: str
    results_seen: str


def load(path: Path = DATA) -> list[MethodChange]:
    try:
        doc = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise CohtbError(f"{path}: {e}") from None
    out = []
    for i, raw in enumerate(doc.get("change", []), 1):
        try:
            out.append(MethodChange(**raw))
        except TypeError as e:
            raise CohtbError(f"{path}: change {i}: {e}") from None
    return out
