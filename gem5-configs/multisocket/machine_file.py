"""Machine files (machines/<name>.json): a named machine whose parameters are fixed, each with its source. A
machine is a cache hierarchy (`flat` or `socket`, machine.py) and the values of its parameters: the bare
hierarchy names take machine.py's defaults; a file names its hierarchy and sets the parameters it gives (the
rest keep the defaults). A calibrated machine is a file, never edited once seeds have run on it: a new
calibration is a new file (docs/machine.md). This module needs only the standard library, so cohtb and its
tests read the files with the same rules as the gem5 configs.

A file: {"name": str, "hierarchy": "flat"|"socket", "description": str,
         "params": {param: value, ...}, "sources": {param: where its value comes from, ...}}"""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

DIRECTORY = Path(__file__).resolve().parent / "machines"
# Each cache hierarchy and the Ruby protocol its gem5 must be built with.
PROTOCOL_OF = {"flat": "MESI_Two_Level", "socket": "CHI"}
HIERARCHIES = tuple(PROTOCOL_OF)
# The parameters a file may set (machine.py's options, as their dest names) and their kinds.
PARAMS = {"clock": str, "l1d_size": str, "l1i_size": str, "l2_size": str, "local_latency": int,
          "local_bandwidth": int, "socket_latency": int, "socket_bandwidth": int, "router_latency": int,
          "l1_latency": int, "l1i_latency": int, "l1_snoop_latency": int, "l1_dirty_shared": bool, "llc_latency": int,
          "home_latency": int, "memory_latency": int, "core": str, "o3_width": int, "o3_rob_entries": int,
          "o3_iq_entries": int, "o3_lq_entries": int, "o3_sq_entries": int}
CORES = ("timing", "o3")   # gem5's TimingSimpleCPU (one instruction at a time) or its out-of-order X86O3CPU
O3_PARAMS = ("o3_width", "o3_rob_entries", "o3_iq_entries", "o3_lq_entries", "o3_sq_entries")


class MachineFileError(ValueError):
    """A machine file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class MachineFile:
    name: str
    hierarchy: str
    description: str
    params: dict
    sources: dict
    digest: str   # of the file's bytes: the manifest says which machine a run had

    def record(self) -> dict:
        return {"name": self.name, "digest": self.digest, "hierarchy": self.hierarchy}


def names() -> list[str]:
    return sorted(p.stem for p in DIRECTORY.glob("*.json"))


def hierarchy_of(machine: str) -> str:
    """The cache hierarchy of a machine: a hierarchy's own name, or its file's."""
    return machine if machine in HIERARCHIES else load(machine).hierarchy


def load(name: str) -> MachineFile:
    path = DIRECTORY / f"{name}.json"
    try:
        data = path.read_bytes()
    except OSError as e:
        known = ", ".join([*HIERARCHIES, *names()])
        raise MachineFileError(f"{path}: cannot read ({e.strerror}); machines: {known}") from None
    try:
        doc = json.loads(data)
    except ValueError as e:
        raise MachineFileError(f"{path}: not JSON ({e})") from None
    if not isinstance(doc, dict):
        raise MachineFileError(f"{path}: not a JSON object")

    def field(key, kind):
        if not isinstance(doc.get(key), kind):
            raise MachineFileError(f"{path}: field '{key}': missing or not {kind.__name__}")
        return doc[key]

    name_in, hierarchy = field("name", str), field("hierarchy", str)
    description, params, sources = field("description", str), field("params", dict), field("sources", dict)
    if name_in != path.stem:
        raise MachineFileError(f"{path}: field 'name': {name_in!r} is not the file's name {path.stem!r}")
    if hierarchy not in HIERARCHIES:
        raise MachineFileError(f"{path}: field 'hierarchy': {hierarchy!r} is not one of {', '.join(HIERARCHIES)}")
    for key, value in params.items():
        kind = PARAMS.get(key)
        if kind is None:
            raise MachineFileError(f"{path}: field 'params.{key}': not a machine parameter ({', '.join(PARAMS)})")
        if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool) or (kind is int and value < 0):
            raise MachineFileError(f"{path}: field 'params.{key}': {value!r} is not a {kind.__name__}"
                                   + (" >= 0" if kind is int else ""))
        if not isinstance(sources.get(key), str) or not sources[key].strip():
            raise MachineFileError(f"{path}: field 'sources.{key}': every parameter set says where it comes from")
    if params.get("core", "timing") not in CORES:
        raise MachineFileError(f"{path}: field 'params.core': {params['core']!r} is not one of {', '.join(CORES)}")
    if params.get("core", "timing") != "o3" and any(k in params for k in O3_PARAMS):
        raise MachineFileError(f"{path}: field 'params.{next(k for k in O3_PARAMS if k in params)}': an O3 core's "
                               "parameter on a machine whose core is not o3")
    return MachineFile(name_in, hierarchy, description, params, sources, hashlib.sha256(data).hexdigest()[:16])
