"""The simulated machine both cohtb configs build (SE: cohtb_se.py, full system: cohtb_fs.py): S sockets x
C cores and one memory channel per socket, with one of three cache hierarchies: `flat` (MESI_Two_Level: private
L1s, one L2 bank per socket chosen by address, so a line's only point of coherence is its home socket's bank),
`socket` (CHI: a shared last-level cache per socket that is the point of coherence of its own cores for
every address, and a home directory per socket) or `mesh` (CHI, one socket: private L1s and L2 per core, the
last level sliced by address over a mesh, each slice home to its lines; docs/machine.md). Its parameters are
defined here once."""

import argparse
import importlib

from m5.defines import buildEnv
from m5.objects import DDR4_2400_8x8

from gem5.components.memory.memory import ChanneledMemory

from . import machine_file as files
from .refusal import refuse
from . import topology as wiring

# hierarchy -> the module and class of its hierarchy. A hierarchy's module is imported only for its machine: it
# needs its protocol's controllers (machine_file.PROTOCOL_OF), which exist only in a gem5 built with that protocol.
MACHINES = {"flat": ("multisocket_mesi_two_level", "MultiSocketMESITwoLevel"), "socket": ("socket_chi", "SocketCHI"),
            "mesh": ("mesh_chi", "MeshCHI")}
assert set(MACHINES) == set(files.HIERARCHIES)
DEFAULTS = files.DEFAULTS
# The CHI controllers' parameters (None: gem5's own; l1_dirty_shared True is CHI's L1 default)
CHI_ONLY = ("l1_latency", "l1i_latency", "l1_snoop_latency", "l1_dirty_shared", "llc_latency", "memory_latency")
SOCKET_ONLY = ("home_latency",)   # the socket machine's home directory
SOCKET_LINKS = ("socket_latency", "socket_bandwidth")   # the links between sockets (the flat and socket machines)
MESH_ONLY = ("l2_private_size", "l2_private_latency", "llc_slices", "mesh_columns", "mesh_link_latency")
HELP = {"clock": "core and cache clock", "l1d_assoc": "the L1D's ways (its sets, size / ways / 64, a power of two)", "l2_size": "per socket: the flat machine's L2 bank, the socket machine's "
                                                   "shared last-level cache, the mesh machine's slices together",
        "local_latency": "controller<->socket router link, cycles", "local_bandwidth": "bytes/cycle",
        "socket_latency": "socket<->socket link, cycles (100 ns at 3 GHz)",
        "socket_bandwidth": "bytes/cycle (about one UPI link at 3 GHz)",
        "router_latency": "cycles a socket's router takes to route a message (gem5's default: 1)",
        "l1_latency": "CHI machines: an L1 hit, cycles (tag 1 + data access; at least 2)",
        "l1i_latency": "CHI machines: the L1I's hit, cycles, where it differs from --l1-latency (a timing CPU fetches "
                       "every instruction through it)",
        "l1_snoop_latency": "CHI machines: cycles an L1 takes before it answers a snoop (the core's own snoop; "
                            "its private L2 on the real parts)",
        "l1_dirty_shared": "CHI machines: yes: an L1 may keep a line dirty and shared (CHI's SD, as MOESI's O); "
                           "no: a read of a core's dirty line leaves the dirty data in the socket cache (Intel's cores)",
        "llc_latency": "CHI machines: the socket cache's (mesh: a slice's) lookup, hit or miss or snoop, cycles",
        "home_latency": "socket machine: the home directory's lookup, cycles",
        "memory_latency": "CHI machines: cycles the memory controller adds to memory's answer",
        "core": "the measured window's cores: timing (TimingSimpleCPU, one instruction at a time) or o3 (X86O3CPU)",
        "o3_width": "o3: instructions fetched, decoded, renamed, dispatched, issued, written back and committed per cycle",
        "o3_rob_entries": "o3: reorder buffer entries", "o3_iq_entries": "o3: issue queue (reservation station) entries",
        "o3_lq_entries": "o3: load queue entries", "o3_sq_entries": "o3: store queue entries",
        "l2_private_size": "mesh machine: each core's private L2", "l2_private_latency": "mesh machine: a core's L2 "
        "lookup, hit or miss or snoop, cycles", "llc_slices": "mesh machine: the last level's slices, each home to the "
        "lines its address picks (a power of two; --l2-size is their sum)", "mesh_columns": "mesh machine: tiles "
        "per row (as many tiles as cores or slices, whichever is more; both spread evenly over them)",
        "mesh_link_latency": "mesh machine: one mesh link between neighbouring tiles' routers, cycles"}
assert set(DEFAULTS) == set(files.PARAMS)


def add_machine_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--machine", default="flat",
                    help="a cache hierarchy (flat, socket, mesh: each needs gem5 built with its protocol, docs/gem5.md) "
                         "with the defaults below, or a machine file in multisocket/machines/ that names its "
                         "hierarchy and fixes its parameters")
    ap.add_argument("--sockets", type=int, default=8)
    ap.add_argument("--cores-per-socket", type=int, default=4)
    for name, kind in files.PARAMS.items():
        ap.add_argument(f"--{name.replace('_', '-')}", type=_yes_no if kind is bool else kind, default=None,
                        help=f"{HELP.get(name, '')} (default: the machine file's, else {DEFAULTS[name]})")
    ap.add_argument("--mem-size", default="1GiB")
    ap.add_argument("--topology", default=None,
                    help="which socket pairs a link joins: a name in multisocket/topologies/ or a file "
                         "(default: complete-<sockets>s, every pair one hop, the first machine's wiring)")
    ap.add_argument("--home-socket", type=int, default=0,
                    help="rotate every line's home: line L's L2 bank and directory sit in socket (L + this) mod S")


def _yes_no(text: str) -> bool:
    if text not in ("yes", "no"):
        raise argparse.ArgumentTypeError(f"{text!r}: yes or no")
    return text == "yes"


def check_machine(opts, config: str) -> None:
    """Checks the options and settles the machine's parameters into them: the command line's, else the machine
    file's, else DEFAULTS (opts.hierarchy and opts.machine_file are set too)."""
    try:
        opts.machine_file = None if opts.machine in files.HIERARCHIES else files.load(opts.machine)
    except files.MachineFileError as e:
        refuse(f"{config}: --machine: {e}")
    opts.hierarchy = opts.machine_file.hierarchy if opts.machine_file else opts.machine
    for name in files.PARAMS:
        if getattr(opts, name) is None:
            setattr(opts, name, (opts.machine_file.params if opts.machine_file else {}).get(name, DEFAULTS[name]))
    if opts.core not in files.CORES:
        refuse(f"{config}: --core {opts.core}: want one of {', '.join(files.CORES)}")
    if opts.core != "o3" and any(getattr(opts, n) is not None for n in files.O3_PARAMS):
        refuse(f"{config}: {', '.join(n for n in files.O3_PARAMS if getattr(opts, n) is not None)}: an O3 "
                         f"core's parameters, and the core is {opts.core}")
    for only, hierarchies, what in ((CHI_ONLY, ("socket", "mesh"), "the CHI machines' latencies"),
                                    (SOCKET_ONLY, ("socket",), "the socket machine's home directory"),
                                    (SOCKET_LINKS, ("flat", "socket"), "the links between sockets"),
                                    (MESH_ONLY, ("mesh",), "the mesh machine's parameters")):
        given = [n for n in only if getattr(opts, n) != DEFAULTS[n]]
        if given and opts.hierarchy not in hierarchies:
            refuse(f"{config}: {', '.join(given)}: {what}; machine {opts.machine} is {opts.hierarchy}")
    shape = files.shape_problem(opts.hierarchy, opts.sockets, {n: getattr(opts, n) for n in files.PARAMS})
    if shape:
        refuse(f"{config}: {shape}")
    protocol = files.PROTOCOL_OF[opts.hierarchy]
    if str(buildEnv["PROTOCOL"]) != protocol:
        refuse(f"{config}: --machine {opts.machine} needs gem5 built with PROTOCOL={protocol}; this one "
                         f"has {buildEnv['PROTOCOL']} (docs/gem5.md)")
    if opts.sockets & (opts.sockets - 1):
        refuse(f"{config}: --sockets {opts.sockets}: gem5 interleaves memory channels by address bits, "
                         "so sockets must be a power of two")
    if not 0 <= opts.home_socket < opts.sockets:
        refuse(f"{config}: --home-socket {opts.home_socket}: must be under --sockets")
    topology = wiring_of(opts, config)
    if topology.sockets != opts.sockets:
        refuse(f"{config}: --topology {topology.name} wires {topology.sockets} sockets, "
                         f"not --sockets {opts.sockets}")


def wiring_of(opts, config: str = "cohtb"):
    try:
        return wiring.load(opts.topology or f"complete-{opts.sockets}s")
    except wiring.TopologyError as e:
        refuse(f"{config}: --topology: {e}")


def hierarchy_and_memory(opts):
    module, name = MACHINES[opts.hierarchy]
    hierarchy_class = getattr(importlib.import_module(f".{module}", __package__), name)
    common = dict(sockets=opts.sockets, cores_per_socket=opts.cores_per_socket, l1d_size=opts.l1d_size, l1d_assoc=opts.l1d_assoc,
                  l1i_size=opts.l1i_size, l1i_assoc=files.L1I_WAYS, local_latency=opts.local_latency,
                  local_bandwidth=opts.local_bandwidth, router_latency=opts.router_latency)
    chi = {n: getattr(opts, n) for n in CHI_ONLY}
    if opts.hierarchy == "flat":
        hierarchy = hierarchy_class(**common, l2_size=opts.l2_size, l2_assoc=16,
                                    **{n: getattr(opts, n) for n in SOCKET_LINKS}, topology=wiring_of(opts),
                                    home_socket=opts.home_socket)
    elif opts.hierarchy == "socket":
        hierarchy = hierarchy_class(**common, **chi, llc_size=opts.l2_size, llc_assoc=16,
                                    **{n: getattr(opts, n) for n in SOCKET_ONLY + SOCKET_LINKS},
                                    topology=wiring_of(opts), home_socket=opts.home_socket)
    else:
        hierarchy = hierarchy_class(**common, **chi, llc_size=opts.l2_size, llc_assoc=16, l2_private_assoc=16,
                                    **{n: getattr(opts, n) for n in MESH_ONLY})
    memory = ChanneledMemory(DDR4_2400_8x8, num_channels=opts.sockets, interleaving_size=64, size=opts.mem_size)
    return hierarchy, memory


def shape_cores(cpus, opts) -> None:
    """An O3 machine's cores given its widths and queue sizes (gem5's own where the file gives none)."""
    if opts.core != "o3":
        return
    for cpu in cpus:
        if opts.o3_width is not None:
            for stage in ("fetch", "decode", "rename", "dispatch", "issue", "wb", "commit"):
                setattr(cpu, f"{stage}Width", opts.o3_width)
        for name, param in (("o3_rob_entries", "numROBEntries"), ("o3_iq_entries", "numIQEntries"),
                            ("o3_lq_entries", "LQEntries"), ("o3_sq_entries", "SQEntries")):
            if getattr(opts, name) is not None:
                setattr(cpu, param, getattr(opts, name))


def machine_record(opts, hierarchy, cpu: str) -> dict:
    """What roi.json says about the machine (the manifest's system and controllers)."""
    return {"sockets": opts.sockets, "cores_per_socket": opts.cores_per_socket,
            "cores": opts.sockets * opts.cores_per_socket, "cpu": cpu, "clock": opts.clock,
            "machine": opts.machine, "hierarchy": opts.hierarchy,
            **({"machine_file": opts.machine_file.record()} if opts.machine_file else {}),
            "home_socket": opts.home_socket, "topology": wiring_of(opts).record(),
            "controllers": hierarchy.controller_map()}
