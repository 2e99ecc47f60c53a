"""The simulated machines a run can name (RunSpec.machine): a cache hierarchy with its defaults (`flat`, `socket`,
`mesh`) or a machine file (gem5-configs/multisocket/machines/<name>.json) that names its hierarchy and fixes its
parameters. The files are read by the gem5 configs' own module (multisocket/machine_file.py, standard library
only), loaded here from its file as a module of the configs' package, so cohtb and gem5 read them by the same
rules; the CHI machines' controller numbering likewise (multisocket/placement.py)."""

from __future__ import annotations

import functools
import importlib.util
import json
import sys
from dataclasses import dataclass, field

from cohtb.errors import CohtbError
from cohtb.places import ROOT

CONFIGS = ROOT / "gem5-configs" / "multisocket"


CONFIGS_PACKAGE = "cohtb_gem5_configs"   # the name the configs' package has in cohtb's process


def config_module(name: str):
    """One of the configs' standard-library modules, loaded from its file as a module of the configs' package (its
    relative imports of its siblings work as under gem5; the package's own __init__ imports nothing)."""
    if CONFIGS_PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(CONFIGS_PACKAGE, CONFIGS / "__init__.py",
                                                      submodule_search_locations=[str(CONFIGS)])
        package = importlib.util.module_from_spec(spec)
        sys.modules[CONFIGS_PACKAGE] = package
        spec.loader.exec_module(package)
    return importlib.import_module(f"{CONFIGS_PACKAGE}.{name}")


machine_file = config_module("machine_file")
placement = config_module("placement")
topology = config_module("topology")
HIERARCHIES: tuple[str, ...] = machine_file.HIERARCHIES
PROTOCOL_OF: dict[str, str] = machine_file.PROTOCOL_OF
FILES = CONFIGS / "machines"


def known() -> list[str]:
    """Every machine a run can name: the bare hierarchies, then the machine files (a hierarchy's own file is its)."""
    return [*HIERARCHIES, *(n for n in machine_file.names() if n not in HIERARCHIES)]


def _file(machine: str):
    try:
        return machine_file.load(machine)
    except machine_file.MachineFileError as e:
        raise CohtbError(f"machine '{machine}': {e}") from None


def simulated(machine: str) -> bytes:
    """What gem5 simulates of a machine's file (machine_file.simulated_part; nothing for a bare hierarchy, which
    takes machine.py's defaults): a change to it is a change to the machine, a change to its build or names not."""
    if machine in HIERARCHIES:
        return b""
    path = machine_file.DIRECTORY / f"{machine}.json"
    _file(machine)   # a damaged file is refused naming its field
    return machine_file.simulated_part(json.loads(path.read_bytes()))


def gem5_patches(machine: str) -> tuple[str, ...]:
    """The project's patches the machine's gem5 build must have (its file's `gem5_patches`; a bare hierarchy
    without a file of its own runs on stock gem5)."""
    if machine in HIERARCHIES and machine not in machine_file.names():
        return ()
    return _file(machine).gem5_patches


@dataclass(frozen=True)
class DeclaredMachine:
    """A name a seed's declaration gives a machine (a machine file's `declared_as`): what its runs name
    (RunSpec.machine) and how its sockets are wired at each socket count (a topology file's name; absent:
    complete-<sockets>s)."""
    name: str
    about: str
    run_machine: str
    topologies: dict = field(default_factory=dict, compare=False)


def declared_machines() -> dict[str, DeclaredMachine]:
    """Every declared machine name, from every machine file; a name two files declare, or a wiring that does not
    have the sockets it is given for, is refused in one line naming the file and the field."""
    stamp = tuple((p, p.stat().st_mtime_ns, p.stat().st_size) for p in sorted(machine_file.DIRECTORY.glob("*.json")))
    return dict(_declared(stamp))


@functools.lru_cache(maxsize=4)   # every declaration asks, each several times: the files read once per version
def _declared(stamp: tuple) -> dict[str, DeclaredMachine]:
    out: dict[str, DeclaredMachine] = {}
    for name in machine_file.names():
        path = machine_file.DIRECTORY / f"{name}.json"
        for alias, entry in (_file(name).declared_as or {}).items():
            if alias in out:
                raise CohtbError(f"{path}: field 'declared_as.{alias}': also declared by machine "
                                 f"'{out[alias].run_machine}'")
            wrong = [(n, t) for n, t in entry["topologies"].items() if topology_sockets(t) != n]
            if wrong:
                raise CohtbError(f"{path}: field 'declared_as.{alias}.topologies': '{wrong[0][1]}' does not wire "
                                 f"{wrong[0][0]} sockets")
            out[alias] = DeclaredMachine(alias, entry["about"], name, entry["topologies"])
    return out


def hierarchy_of(machine: str) -> str:
    """The cache hierarchy of a machine; a machine that is neither a hierarchy nor a readable file is refused in
    one line naming the file and the field."""
    try:
        return machine_file.hierarchy_of(machine)
    except machine_file.MachineFileError as e:
        raise CohtbError(f"machine '{machine}': {e}") from None


def core_of(machine: str) -> str:
    """The core model of a machine's measured window (a machine file's `core`; a bare hierarchy's: timing)."""
    if machine in HIERARCHIES:
        return "timing"
    return _file(machine).params.get("core", "timing")


def l1d_versions(machine: str, cores: int, sockets: int) -> list[int] | None:
    """The L1D controller versions a trace of this machine names its cores by, before gem5 has run (a live ingest):
    None where the version is the core (MESI_Two_Level)."""
    hierarchy = hierarchy_of(machine)
    if PROTOCOL_OF[hierarchy] != "CHI":
        return None
    slices = _params(machine)["llc_slices"]
    return [placement.chi_l1d_version(c, hierarchy, sockets, cores, slices) for c in range(cores)]


def shape_problem(machine: str, sockets: int) -> str:
    """Why this machine cannot be built with this many sockets (the mesh machine: one), or ""."""
    return machine_file.shape_problem(hierarchy_of(machine), sockets, _params(machine))


def _params(machine: str) -> dict:
    """Every parameter's value on the machine: its file's, else the default (a bare hierarchy without a file of
    its own: every default)."""
    f = None if machine in HIERARCHIES and machine not in machine_file.names() else _file(machine)
    return {n: machine_file.param(f, n) for n in machine_file.PARAMS}


def topology_sockets(name: str) -> int:
    """How many sockets a topology file wires; a file that is missing or damaged is refused in one line."""
    try:
        return topology.load(name).sockets
    except topology.TopologyError as e:
        raise CohtbError(f"topology '{name}': {e}") from None
