"""A report's figures drawn once for the same inputs: drawing hundreds of runs' figures takes most of a warm main job,
and the same runs through the same code give the same pictures. The key is every run's analysis key (its manifest,
its events and the code that counts them: cohtb/analysis/cache.py), the code that draws (cohtb/report/) and
matplotlib's version; the figures are kept under the analysis cache and copied into each report that asks for
them. A cache entry is written whole or not at all (a temporary directory renamed)."""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import matplotlib

from cohtb.digest import tree_digest
from cohtb.analysis.cache import run_key
from cohtb.analysis.metrics import RunMetrics
from cohtb.atomic import atomic_dir
from cohtb.places import ROOT, analysis_cache

INDEX = "figures.json"   # figure name -> its file in the entry, or null: the figure had nothing to draw


@functools.cache
def _drawing_code() -> str:
    report = ROOT / "cohtb" / "report"
    return tree_digest(sorted(report.glob("*.py")), report, matplotlib.__version__.encode())


def key(ms: list[RunMetrics]) -> str:
    h = hashlib.sha256(_drawing_code().encode())
    for m in ms:
        h.update(run_key(m.run).encode())
    return h.hexdigest()[:24]


def drawn(ms: list[RunMetrics], into: Path, draw: Callable[[list[RunMetrics], Path], dict[str, Path | None]]
          ) -> tuple[dict[str, Path | None], bool]:
    """The figures `draw` makes of ms in `into` (name -> path, or None where a figure had nothing to draw), drawn
    or copied from the cache; and whether they came from the cache."""
    entry = analysis_cache() / "figures" / key(ms)
    if (entry / INDEX).exists():
        index = json.loads((entry / INDEX).read_text())
        for file in filter(None, index.values()):
            shutil.copyfile(entry / file, into / file)
        return {name: into / file if file else None for name, file in index.items()}, True
    figures = draw(ms, into)
    entry.parent.mkdir(parents=True, exist_ok=True)
    with atomic_dir(entry) as tmp:
        for path in filter(None, figures.values()):
            shutil.copyfile(path, tmp / path.name)
        (tmp / INDEX).write_text(json.dumps({name: p.name if p else None for name, p in figures.items()}))
    return figures, False
