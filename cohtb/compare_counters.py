"""Field-by-field comparison of two counter structures (RTL vs model)."""

from __future__ import annotations


def diff_counters(want, got, path: str = "") -> list[str]:
    """Every leaf where two counter structures differ, as 'path: want=.. got=..'."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{path}: want {want} got {got}"]
        keys = sorted(set(want) | set(got), key=str)
        return [d for k in keys for d in diff_counters(want.get(k), got.get(k), f"{path}.{k}" if path else str(k))]
    if isinstance(want, list):
        if not isinstance(got, list) or len(want) != len(got):
            return [f"{path}: want {want} got {got}"]
        return [d for i, (a, b) in enumerate(zip(want, got)) for d in diff_counters(a, b, f"{path}[{i}]")]
    if want is None or got is None:
        return [f"{path}: want={want} got={got}"]
    return [] if int(want) == int(got) else [f"{path}: want={int(want)} got={int(got)}"]
