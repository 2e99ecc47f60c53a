"""The simulated machines a run can name (RunSpec.machine): a cache hierarchy with its defaults (`flat`, `socket`)
or a machine file (gem5-configs/multisocket/machines/<name>.json) that names its hierarchy and fixes its
parameters. The files are read by the gem5 configs' own module (multisocket/machine_file.py, standard library
only), loaded here by its path, so cohtb and gem5 read them by the same rules; the socket machine's controller
numbering likewise (multisocket/placement.py)."""

from __future__ import annotations

import importlib.util

from cohtb.errors import CohtbError
from cohtb.places import ROOT

CONFIGS = ROOT / "gem5-configs" / "multisocket"


def _load_module(name: str):
    spec = importlib.util.spec_from_file_location(f"cohtb_{name}", CONFIGS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


machine_file = _load_module("machine_file")
placement = _load_module("placement")
topology = _load_module("topology")
HIERARCHIES: tuple[str, ...] = machine_file.HIERARCHIES
FILES = CONFIGS / "machines"


def known() -> list[str]:
    return [*HIERARCHIES, *machine_file.names()]


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
    try:
        return machine_file.load(machine).params.get("core", "timing")
    except machine_file.MachineFileError as e:
        raise CohtbError(f"machine '{machine}': {e}") from None


def l1d_versions(machine: str, cores: int, sockets: int) -> list[int] | None:
    """The L1D controller versions a trace of this machine names its cores by, before gem5 has run (a live ingest):
    None where the version is the core (MESI_Two_Level)."""
    if machine_file.PROTOCOL_OF[hierarchy_of(machine)] != "CHI":
        return None
    return [placement.chi_l1d_version(c, sockets) for c in range(cores)]


def topology_sockets(name: str) -> int:
    """How many sockets a topology file wires; a file that is missing or damaged is refused in one line."""
    try:
        return topology.load(name).sockets
    except topology.TopologyError as e:
        raise CohtbError(f"topology '{name}': {e}") from None
