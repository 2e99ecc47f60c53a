"""The simulated machine both cohtb configs build (SE: cohtb_se.py, full system: cohtb_fs.py): S sockets x
C cores and one memory channel per socket, with one of two cache hierarchies: `flat` (MESI_Two_Level: private
L1s, one L2 bank per socket chosen by address, so a line's only point of coherence is its home socket's bank)
or `socket` (CHI: a shared last-level cache per socket that is the point of coherence of its own cores for
every address, and a home directory per socket; docs/machine.md). Its parameters are defined here once."""

import argparse
import importlib

from m5.defines import buildEnv
from m5.objects import DDR4_2400_8x8

from gem5.components.memory.memory import ChanneledMemory

from . import topology as wiring

# machine -> (the Ruby protocol gem5 must be built with, the module and class of its hierarchy). A hierarchy's
# module is imported only for its machine: it needs its protocol's controllers, which exist only in a gem5
# built with that protocol.
MACHINES = {"flat": ("MESI_Two_Level", "multisocket_mesi_two_level", "MultiSocketMESITwoLevel"),
            "socket": ("CHI", "socket_chi", "SocketCHI")}


def add_machine_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--machine", choices=sorted(MACHINES), default="flat",
                    help="the cache hierarchy (each needs gem5 built with its protocol: docs/gem5.md)")
    ap.add_argument("--sockets", type=int, default=8)
    ap.add_argument("--cores-per-socket", type=int, default=4)
    ap.add_argument("--clock", default="3GHz")
    ap.add_argument("--l1d-size", default="32KiB")
    ap.add_argument("--l1i-size", default="32KiB")
    ap.add_argument("--l2-size", default="1MiB", help="per socket: the flat machine's L2 bank, the socket machine's "
                                                       "shared last-level cache")
    ap.add_argument("--local-latency", type=int, default=20, help="controller<->socket router link, cycles")
    ap.add_argument("--local-bandwidth", type=int, default=32, help="bytes/cycle")
    ap.add_argument("--socket-latency", type=int, default=300, help="socket<->socket link, cycles (100 ns at 3 GHz)")
    ap.add_argument("--socket-bandwidth", type=int, default=8, help="bytes/cycle (about one UPI link at 3 GHz)")
    ap.add_argument("--mem-size", default="1GiB")
    ap.add_argument("--topology", default=None,
                    help="which socket pairs a link joins: a name in multisocket/topologies/ or a file "
                         "(default: complete-<sockets>s, every pair one hop, the first machine's wiring)")
    ap.add_argument("--home-socket", type=int, default=0,
                    help="rotate every line's home: line L's L2 bank and directory sit in socket (L + this) mod S")


def check_machine(opts, config: str) -> None:
    protocol = MACHINES[opts.machine][0]
    if str(buildEnv["PROTOCOL"]) != protocol:
        raise SystemExit(f"{config}: --machine {opts.machine} needs gem5 built with PROTOCOL={protocol}; this one "
                         f"has {buildEnv['PROTOCOL']} (docs/gem5.md)")
    if opts.sockets & (opts.sockets - 1):
        raise SystemExit(f"{config}: --sockets {opts.sockets}: gem5 interleaves memory channels by address bits, "
                         "so sockets must be a power of two")
    if not 0 <= opts.home_socket < opts.sockets:
        raise SystemExit(f"{config}: --home-socket {opts.home_socket}: must be under --sockets")
    topology = wiring_of(opts, config)
    if topology.sockets != opts.sockets:
        raise SystemExit(f"{config}: --topology {topology.name} wires {topology.sockets} sockets, "
                         f"not --sockets {opts.sockets}")


def wiring_of(opts, config: str = "cohtb"):
    try:
        return wiring.load(opts.topology or f"complete-{opts.sockets}s")
    except wiring.TopologyError as e:
        raise SystemExit(f"{config}: --topology: {e}") from None


def hierarchy_and_memory(opts):
    _, module, name = MACHINES[opts.machine]
    hierarchy_class = getattr(importlib.import_module(f".{module}", __package__), name)
    caches = ({"l2_size": opts.l2_size, "l2_assoc": 16} if opts.machine == "flat" else
              {"llc_size": opts.l2_size, "llc_assoc": 16})
    hierarchy = hierarchy_class(
        sockets=opts.sockets, cores_per_socket=opts.cores_per_socket, l1d_size=opts.l1d_size, l1d_assoc=8,
        l1i_size=opts.l1i_size, l1i_assoc=8, **caches, local_latency=opts.local_latency,
        local_bandwidth=opts.local_bandwidth, socket_latency=opts.socket_latency,
        socket_bandwidth=opts.socket_bandwidth, topology=wiring_of(opts), home_socket=opts.home_socket)
    memory = ChanneledMemory(DDR4_2400_8x8, num_channels=opts.sockets, interleaving_size=64, size=opts.mem_size)
    return hierarchy, memory


def machine_record(opts, hierarchy, cpu: str) -> dict:
    """What roi.json says about the machine (the manifest's system and controllers)."""
    return {"sockets": opts.sockets, "cores_per_socket": opts.cores_per_socket,
            "cores": opts.sockets * opts.cores_per_socket, "cpu": cpu, "clock": opts.clock,
            "machine": opts.machine, "home_socket": opts.home_socket, "topology": wiring_of(opts).record(),
            "controllers": hierarchy.controller_map()}
