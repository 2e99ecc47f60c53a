"""The method changes (method_changes.toml): every change to a seed experiment's model, parameters, verdict rule
or kept runs since the seeds were first simulated, each between two versions of the experiment's declaration,
with its commit, its reason and whether results had been seen before it. The results page computes each
change's verdict before and after from the runs kept under those two declarations."""

from __future__ import annotations

from pathlib import Path

from cohtb.data_file import Record, read_toml, validated
from cohtb.errors import CohtbError

DATA = Path(__file__).with_name("method_changes.toml")


class MethodChange(Record):
    commit: str
    date: str
    experiment: str
    before: int         # declaration versions
    after: int
    what: str
    reason: str
    results_seen: str
    inputs: tuple[str, ...] = ()   # the runs' inputs it changed (INPUTS), as the digests in their manifests show


# What a run was made from, each named by a digest its manifest keeps: a change between two declarations' runs to any
# of these is a method change, and its row says so (tests/test_seeds.py checks every row against the manifests).
INPUTS = ("workload binary", "gem5 build", "kernel", "machine")


def inputs_of(manifest: dict) -> dict[str, str | None]:
    """A run's inputs (INPUTS) by their digests, from its manifest as JSON."""
    system = manifest["system"]
    return {"workload binary": (manifest.get("workload_binary") or {}).get("sha256"),
            "gem5 build": manifest["gem5"].get("build"),
            "kernel": (manifest.get("kernel") or {}).get("vmlinux_sha256"),
            "machine": (system.get("machine_file") or {}).get("digest") or system.get("machine", "flat")}


def changed_inputs(before: list[dict], after: list[dict]) -> list[str]:
    """The inputs whose digests differ between two sets of runs (the digests of every run, as sets: arms that
    differ on purpose, as a base and a new kernel do, are in both)."""
    digests = lambda runs, kind: {inputs_of(m)[kind] for m in runs}
    return [kind for kind in INPUTS if digests(before, kind) != digests(after, kind)]


class _File(Record):
    change: tuple[MethodChange, ...] = ()


def load(path: Path = DATA) -> list[MethodChange]:
    changes = validated(_File, read_toml(path), path).change
    for i, c in enumerate(changes):
        unknown = [x for x in c.inputs if x not in INPUTS]
        if unknown:
            raise CohtbError(f"{path}: field 'change.{i}.inputs': unknown input '{unknown[0]}' (known: "
                             f"{', '.join(INPUTS)})")
    return list(changes)
