"""Paths in a manifest written relative to the places they live in, so that a run recorded on one machine names
no other machine's directories: `{repo}/gem5-configs/cohtb_se.py`, `{gem5}/gem5.opt`,
`{kernel_cache}/pre611-.../vmlinux`, `{run}/gem5` (the run's own directory, wherever it is moved).

Nothing in cohtb opens a path from a manifest (they are provenance: what gem5 was run with); a manifest recorded
before this rule, with absolute paths, reads the same way."""

from __future__ import annotations

from pathlib import Path

from cohtb.places import ROOT, kernel_cache


def roots(run_dir: Path, gem5_binary: Path | None) -> dict[str, Path]:
    """The places a run's manifest paths are written relative to, on this machine: the repository, the kernel
    cache, the directory of the gem5 that ran it and the run's own (temporary) directory."""
    places = {"{repo}": ROOT, "{kernel_cache}": kernel_cache(), "{run}": run_dir}
    if gem5_binary is not None:
        places["{gem5}"] = gem5_binary.parent
    return places


def portable(doc, places: dict[str, Path]):
    """doc (a manifest's JSON) with every occurrence of a place's path, absolute or as given, replaced by its name;
    the most specific place first (a run directory inside the repository is `{run}`)."""
    given = {(str(p), name) for name, p in places.items()} | {(str(Path(p).resolve()), name) for name, p in places.items()}
    names = sorted(given, key=lambda x: -len(x[0]))

    def rewrite(o):
        if isinstance(o, dict):
            return {k: rewrite(v) for k, v in o.items()}
        if isinstance(o, list):
            return [rewrite(v) for v in o]
        if isinstance(o, str):
            for path, name in names:
                o = _replace_path(o, path, name)
        return o

    return rewrite(doc)


def _replace_path(text: str, path: str, name: str) -> str:
    """Each occurrence of `path` that is a whole path or a leading part of one (followed by '/' or the end)."""
    out, i = [], 0
    while (j := text.find(path, i)) >= 0:
        end = j + len(path)
        whole = end == len(text) or text[end] == "/"
        starts = j == 0 or not (text[j - 1].isalnum() or text[j - 1] in "._-/")
        out.append(text[i:j] + (name if whole and starts else path))
        i = end
    return "".join(out) + text[i:]
