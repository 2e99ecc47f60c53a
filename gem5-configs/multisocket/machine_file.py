"""Machine files (machines/<name>.json): a named machine whose parameters are fixed, each with its source. A
machine is a cache hierarchy (`flat`, `socket` or `mesh`, machine.py) and the values of its parameters: the bare
hierarchy names take machine.py's defaults; a file names its hierarchy and sets the parameters it gives (the
rest keep the defaults). A calibrated machine is a file, never edited once seeds have run on it: a new
calibration is a new file (docs/machine.md). This module needs only the standard library, so cohtb and its
tests read the files with the same rules as the gem5 configs.

A file: {"name": str, "hierarchy": "flat"|"socket"|"mesh", "description": str,
         "params": {param: value, ...}, "sources": {param: where its value comes from, ...},
         "gem5_patches": [the project's patches its gem5 build must have, ...], "gem5_patches_why": str,
         "declared_as": {name: {"about": str, "topologies": {"<sockets>": topology file, ...}}, ...}}
The first five are what gem5 simulates, and the digest a run's manifest keeps is of them alone; the others say how
cohtb builds gem5 for the machine (gem5-configs/build/build-gem5.sh) and the names a seed's declaration gives it,
each with its wiring per socket count (absent: complete-<N>s). A hierarchy's own file (flat.json, socket.json)
holds these for the bare hierarchy, whose parameters are machine.py's defaults."""

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from .json_file import field as json_field, read_object

DIRECTORY = Path(__file__).resolve().parent / "machines"
# Each cache hierarchy and the Ruby protocol its gem5 must be built with.
PROTOCOL_OF = {"flat": "MESI_Two_Level", "socket": "CHI", "mesh": "CHI"}
HIERARCHIES = tuple(PROTOCOL_OF)
# The parameters a file may set (machine.py's options, as their dest names) and their kinds.
PARAMS = {"clock": str, "l1d_size": str, "l1d_assoc": int, "l1i_size": str, "l2_size": str, "local_latency": int,
          "local_bandwidth": int, "socket_latency": int, "socket_bandwidth": int, "router_latency": int,
          "l1_latency": int, "l1i_latency": int, "l1_snoop_latency": int, "l1_dirty_shared": bool, "llc_latency": int,
          "home_latency": int, "memory_latency": int, "core": str, "o3_width": int, "o3_rob_entries": int,
          "o3_iq_entries": int, "o3_lq_entries": int, "o3_sq_entries": int, "l2_private_size": str,
          "l2_private_latency": int, "llc_slices": int, "mesh_columns": int, "mesh_link_latency": int}
# The parameters' values where neither the machine's file nor the command line gives one (None: gem5's own): the bare
# hierarchies' machines (machine.py's options default to them).
DEFAULTS = {"clock": "3GHz", "l1d_size": "32KiB", "l1d_assoc": 8, "l1i_size": "32KiB", "l2_size": "1MiB", "local_latency": 20,
            "local_bandwidth": 32, "socket_latency": 300, "socket_bandwidth": 8, "router_latency": None,
            "l1_latency": None, "l1i_latency": None, "l1_snoop_latency": None, "l1_dirty_shared": True, "llc_latency": None,
            "home_latency": None, "memory_latency": None, "core": "timing", "o3_width": None, "o3_rob_entries": None,
            "o3_iq_entries": None, "o3_lq_entries": None, "o3_sq_entries": None, "l2_private_size": "256KiB",
            "l2_private_latency": None, "llc_slices": 16, "mesh_columns": 4, "mesh_link_latency": 1}
assert set(DEFAULTS) == set(PARAMS)
LINE_BYTES = 64   # the machines' cache line (gem5's default, which the boards keep)
L1I_WAYS = 8      # the L1I's ways (machine.py), not a parameter
CORES = ("timing", "o3")   # gem5's TimingSimpleCPU (one instruction at a time) or its out-of-order X86O3CPU
O3_PARAMS = ("o3_width", "o3_rob_entries", "o3_iq_entries", "o3_lq_entries", "o3_sq_entries")


SIMULATED = ("name", "hierarchy", "description", "params", "sources")   # what gem5 simulates: the digest's part
BUILD_AND_NAMES = ("gem5_patches", "gem5_patches_why", "declared_as")


class MachineFileError(ValueError):
    """A machine file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class MachineFile:
    name: str
    hierarchy: str
    description: str
    params: dict
    sources: dict
    digest: str   # of what gem5 simulates (SIMULATED, as the file writes it): the manifest says which machine a run had
    gem5_patches: tuple = ()
    gem5_patches_why: str = ""
    declared_as: dict = None   # declared name -> {"about": str, "topologies": {sockets: topology name}}

    def record(self) -> dict:
        return {"name": self.name, "digest": self.digest, "hierarchy": self.hierarchy}


def names() -> list[str]:
    """The machine files' names, a hierarchy's own file among them."""
    return sorted(p.stem for p in DIRECTORY.glob("*.json"))


def simulated_part(doc: dict) -> bytes:
    """What gem5 simulates of a machine file, as the files are written (one-space indent, a final newline): the
    bytes its digest is of, the whole file's bytes for a file that holds nothing else."""
    return (json.dumps({k: v for k, v in doc.items() if k in SIMULATED}, indent=1) + "\n").encode()


def hierarchy_of(machine: str) -> str:
    """The cache hierarchy of a machine: a hierarchy's own name, or its file's."""
    return machine if machine in HIERARCHIES else load(machine).hierarchy


def load(name: str) -> MachineFile:
    path = DIRECTORY / f"{name}.json"
    known = lambda: "machines: " + ", ".join(dict.fromkeys([*HIERARCHIES, *names()]))   # a hierarchy's own file is it
    _, doc = read_object(path, MachineFileError, known)
    field = lambda key, kind: json_field(path, doc, key, kind, MachineFileError)

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
    unknown = [k for k in doc if k not in SIMULATED + BUILD_AND_NAMES]
    if unknown:
        raise MachineFileError(f"{path}: field '{unknown[0]}': not a field of a machine file "
                               f"({', '.join(SIMULATED + BUILD_AND_NAMES)})")
    patches = doc.get("gem5_patches", [])
    if not isinstance(patches, list) or not all(isinstance(x, str) for x in patches):
        raise MachineFileError(f"{path}: field 'gem5_patches': not a list of patch names")
    if patches and not (isinstance(doc.get("gem5_patches_why"), str) and doc["gem5_patches_why"].strip()):
        raise MachineFileError(f"{path}: field 'gem5_patches_why': a machine built with patches says why")
    declared = doc.get("declared_as", {})
    if not isinstance(declared, dict):
        raise MachineFileError(f"{path}: field 'declared_as': not an object")
    for alias, entry in declared.items():
        where = f"{path}: field 'declared_as.{alias}"
        if not isinstance(entry, dict) or not isinstance(entry.get("about"), str) or not entry["about"].strip():
            raise MachineFileError(f"{where}.about': missing or not str")
        extra = sorted(set(entry) - {"about", "topologies"})
        if extra:
            raise MachineFileError(f"{where}.{extra[0]}': unknown (about, topologies)")
        wiring = entry.get("topologies", {})
        if not isinstance(wiring, dict) or not all(k.isdigit() and isinstance(v, str) for k, v in wiring.items()):
            raise MachineFileError(f"{where}.topologies': keys are socket counts, values topology names")
    return MachineFile(name_in, hierarchy, description, params, sources,
                       hashlib.sha256(simulated_part(doc)).hexdigest()[:16], tuple(patches),
                       doc.get("gem5_patches_why", ""),
                       {alias: {"about": e["about"], "topologies": {int(k): v for k, v in e.get("topologies", {}).items()}}
                        for alias, e in declared.items()})


def param(machine: MachineFile | None, name: str):
    """A parameter's value on a machine: its file's, else the default (a bare hierarchy: None)."""
    return (machine.params if machine else {}).get(name, DEFAULTS[name])


def shape_problem(hierarchy: str, sockets: int, params: dict) -> str:
    """Why a machine of this hierarchy cannot be built with these sockets and parameters (`params`: every parameter's
    value), or "": L1s whose sets are a power of two (gem5 indexes a cache's sets by address bits: a size of
    another count silently uses fewer); the mesh machine one socket, its slices a power of two (lines are
    interleaved over them by address bits) that split its last level evenly, its rows at least one tile wide."""
    for cache, ways, what in (("l1d_size", params["l1d_assoc"], "--l1d-assoc"), ("l1i_size", L1I_WAYS, "ways")):
        size = kib(params[cache])
        if size is None:
            return f"--{cache.replace('_', '-')} {params[cache]}: a size in KiB, MiB or GiB"
        sets = size * 1024 // (ways * LINE_BYTES) if ways > 0 else 0
        if ways < 1 or size * 1024 % (ways * LINE_BYTES) or sets < 1 or sets & (sets - 1):
            return (f"--{cache.replace('_', '-')} {params[cache]} {what} {ways}: an L1's sets (size / ways / "
                    f"{LINE_BYTES}-byte lines) must be a power of two")
    if hierarchy != "mesh":
        return ""
    slices = params["llc_slices"]
    if sockets != 1:
        return f"--sockets {sockets}: the mesh machine is one socket"
    if slices < 1 or slices & (slices - 1):
        return f"--llc-slices {slices}: lines are interleaved over the slices by address bits, so a power of two"
    if params["mesh_columns"] < 1:
        return f"--mesh-columns {params['mesh_columns']}: a mesh row has at least one tile"
    if kib(params["l2_size"]) is None or kib(params["l2_size"]) % slices:
        return f"--l2-size {params['l2_size']}: the mesh machine's last level must split into {slices} equal slices (KiB, MiB or GiB)"
    return ""


def kib(size: str) -> int | None:
    """A cache size ("32MiB") in KiB; None if it is not written in KiB, MiB or GiB."""
    units = {"KiB": 1, "MiB": 1024, "GiB": 1024 * 1024}
    number, unit = size[:-3], size[-3:]
    return int(number) * units[unit] if unit in units and number.isdigit() else None
