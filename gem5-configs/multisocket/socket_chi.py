"""The socket machine (docs/machine.md): gem5's CHI protocol arranged as a multi-socket x86. Per core private
L1I and L1D; per socket one shared, inclusive last-level cache that is the point of coherence of its own cores
for every address (a same-socket transfer stays in the socket, whatever the line's home); per socket one home
node (a directory of the sockets' caches, no data) for the lines homed there, beside that socket's memory
channel. Line L's home is socket (L + home_socket) mod S, as on the flat machine, so runs of the two compare
line for line. Built from gem5's standard CHI nodes; only the arrangement is ours. Needs gem5 built with
PROTOCOL=CHI (docs/gem5.md).

Downstream routing is per controller (CHI's `downstream_destinations`): an L1 sends every miss to its socket's
cache; a socket cache sends to the home node whose interleaved address range holds the line; a home node to
the memory channel of that line."""

from m5.objects import NULL, RubyCache, RubyPortProxy, RubySequencer, RubySystem

from gem5.coherence_protocol import CoherenceProtocol
from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.cachehierarchies.abstract_cache_hierarchy import AbstractCacheHierarchy
from gem5.components.cachehierarchies.chi.nodes.abstract_node import AbstractNode
from gem5.components.cachehierarchies.chi.nodes.directory import SimpleDirectory
from gem5.components.cachehierarchies.chi.nodes.dma_requestor import DMARequestor
from gem5.components.cachehierarchies.chi.nodes.memory_controller import MemoryController
from gem5.components.cachehierarchies.chi.nodes.private_l1_moesi_cache import PrivateL1MOESICache
from gem5.components.cachehierarchies.ruby.abstract_ruby_cache_hierarchy import AbstractRubyCacheHierarchy
from gem5.isas import ISA
from gem5.utils.override import overrides
from gem5.utils.requires import requires

from .placement import chi_l1d_version, socket_of_core, socket_of_home
from .socket_network import SocketNetwork

VIRTUAL_NETWORKS = 4   # CHI's channels: request, snoop, response, data
# Every CHI node sends a line's data in two 32-byte messages (the stdlib's AbstractNode.data_channel_size); the
# network must size a data message the same, or each line costs its links twice (gem5's configs/ruby/CHI.py).
DATA_MESSAGE_BYTES = 32


class ChiCache(AbstractNode):
    """A CHI cache controller below the cores' L1s (no sequencer, no prefetcher), with the policies given: which
    requests it allocates on and drops lines on, whether it is a home node, its transaction buffers (the names of
    CHI's controller parameters, configs/ruby/CHI_config.py)."""

    def __init__(self, network, cache_line_size, clk_domain, size: str, assoc: int, policies: dict):
        super().__init__(network, cache_line_size)
        self.cache = RubyCache(size=size, assoc=assoc, start_index_bit=self.getBlockSizeBits())
        self.clk_domain = clk_domain
        self.sequencer = NULL
        self.send_evictions = False
        self.use_prefetcher = False
        self.prefetcher = NULL
        for name, value in policies.items():
            setattr(self, name, value)


# A socket's shared last-level cache (or a core's private L2): inclusive of the caches above it (a line it drops is
# taken from them too), allocating on every read, never a home node (CHI's L2 controller defaults, CHI_config.py).
INCLUSIVE_CACHE = {
    "is_HN": False, "enable_DMT": False, "enable_DCT": False, "allow_SD": True,
    # CHI's default: a read is passed up shared even when this cache holds the line uniquely, so a core's first
    # read is SC, not E, and its first store upgrades in the socket. Passing it up unique (E, as on Intel's parts)
    # made gem5 assert (CHI-cache-actions.sm:1692, a writeback of a partly valid line) in the first cclat run on 8x4.
    "fwd_unique_on_readshared": False,
    "alloc_on_seq_acc": False, "alloc_on_seq_line_write": False, "alloc_on_readshared": True,
    "alloc_on_readunique": True, "alloc_on_readonce": True, "alloc_on_writeback": True, "alloc_on_atomic": False,
    "dealloc_on_unique": False, "dealloc_on_shared": False, "dealloc_backinv_unique": True,
    "dealloc_backinv_shared": True,
    "number_of_TBEs": 32, "number_of_repl_TBEs": 32, "number_of_snoop_TBEs": 16, "number_of_DVM_TBEs": 1,
    "number_of_DVM_snoop_TBEs": 1, "unify_repl_TBEs": False,
}


class SocketCHI(AbstractRubyCacheHierarchy):
    def __init__(self, sockets: int, cores_per_socket: int, l1d_size: str, l1d_assoc: int, l1i_size: str,
                 l1i_assoc: int, llc_size: str, llc_assoc: int, local_latency: int, local_bandwidth: int,
                 socket_latency: int, socket_bandwidth: int, topology, home_socket: int = 0,
                 router_latency: int | None = None, l1_latency: int | None = None, l1i_latency: int | None = None,
                 l1_snoop_latency: int | None = None, l1_dirty_shared: bool = True, llc_latency: int | None = None,
                 home_latency: int | None = None, memory_latency: int | None = None):
        super().__init__()
        # Controllers' latencies, cycles (None: gem5's own): an L1's hit is its cache's tag (1) and data access (a
        # core's own loads and stores never take CHI's ReadHitPipe, CHI-cache-actions.sm); the socket cache and the
        # home take read_hit/read_miss_latency on a request from above and snp_latency on a snoop from below; memory's
        # answer leaves its controller after data_latency (CHI-mem.sm).
        # An L1 answers a snoop after snp_latency (CHI-cache-actions.sm, SnpSharedPipe/SnpInvPipe): the real parts' core
        # snoop, which looks through the core's private L2 too (this machine has none).
        # l1i: the L1I's own, where given (else l1's): a timing CPU fetches every instruction through its L1I, so that
        # latency is charged on every instruction, which a published L1 (load-to-use) figure does not measure.
        self._latency = {"l1": l1_latency, "l1i": l1_latency if l1i_latency is None else l1i_latency,
                         "l1_snoop": l1_snoop_latency, "llc": llc_latency, "home": home_latency,
                         "memory": memory_latency}
        # CHI's L1 may keep a dirty line shared (SD, MOESI's O) and then answers for it; Intel's cores cannot (MESIF):
        # a read of a core's dirty line leaves the dirty data in the socket's cache, which answers later readers, of
        # any socket, without a core snoop. No: the L1 asks ReadNotSharedDirty (CHI-cache-actions.sm, Send_ReadShared).
        self._l1_dirty_shared = l1_dirty_shared
        self._sockets, self._cores_per_socket = sockets, cores_per_socket
        self._l1d, self._l1i, self._llc = (l1d_size, l1d_assoc), (l1i_size, l1i_assoc), (llc_size, llc_assoc)
        self._net = (local_latency, local_bandwidth, socket_latency, socket_bandwidth, topology, router_latency)
        self._home_socket = home_socket

    def socket_of_home(self, residue: int) -> int:
        """The socket of the home node (and memory channel) of the lines L with L mod S == residue."""
        return socket_of_home(residue, self._home_socket, self._sockets)

    def socket_of_core(self, core: int) -> int:
        return socket_of_core(core, self._cores_per_socket)

    def controller_map(self) -> dict:
        """Which controller is which: CHI names every controller `Cache` in ProtocolTrace, so the ingest tells
        them apart by version (docs/gem5.md)."""
        return {
            "l1": [{"controller": f"l1d{i}", "version": int(c.version), "core": i, "socket": self.socket_of_core(i),
                    "icache_version": int(self._l1i_controllers[i].version)}
                   for i, c in enumerate(self._l1d_controllers)],
            "llc": [{"controller": f"llc{s}", "version": int(c.version), "socket": s}
                    for s, c in enumerate(self._llc_controllers)],
            "home": [{"controller": f"home{r}", "version": int(c.version), "socket": self.socket_of_home(r),
                      "residue": r} for r, c in enumerate(self._home_controllers)],
        }

    @overrides(AbstractCacheHierarchy)
    def incorporate_cache(self, board: AbstractBoard) -> None:
        requires(coherence_protocol_required=CoherenceProtocol.CHI)
        line = board.get_cache_line_size()
        clock = board.get_clock_domain()
        network = attach_ruby_system(self, SocketNetwork, *self._net)
        cores = board.get_processor().get_cores()
        if len(cores) != self._sockets * self._cores_per_socket:
            raise ValueError(f"{len(cores)} cores, want {self._sockets} sockets x {self._cores_per_socket}")

        # Memory channel r holds the lines L mod S == r (interleaved by line, gem5's ChanneledMemory); home r is
        # the directory of the same lines: its range is the channel's, so the two cannot disagree.
        channels = board.get_mem_ports()
        if len(channels) != self._sockets:
            raise ValueError(f"memory has {len(channels)} channels, want one per socket")
        # Each controller is placed in the ruby system before any other controller names it as a downstream
        # destination: a SimObject named by a parameter before it has a parent is adopted by the one naming it.
        self._memory_controllers = memory_controllers(self.ruby_system, channels, self._latency["memory"])
        self._home_controllers = [home_node(SimpleDirectory(network, line, clock), self.ruby_system, [rng], [mc],
                                            self._latency["home"])
                                  for (rng, _), mc in zip(channels, self._memory_controllers)]
        self.ruby_system.home_controllers = self._home_controllers

        self._llc_controllers = [inclusive_cache(self.ruby_system, board, self._llc, self._latency["llc"],
                                                 self._home_controllers) for _ in range(self._sockets)]
        self.ruby_system.llc_controllers = self._llc_controllers

        self._l1d_controllers, self._l1i_controllers = cores_l1s(
            self.ruby_system, board, self._l1d, self._l1i, self._latency, self._l1_dirty_shared,
            below=lambda i: self._llc_controllers[self.socket_of_core(i)],
            version=lambda i: chi_l1d_version(i, "socket", self._sockets, len(cores)))

        self._dma_controllers = dma_requestors(self.ruby_system, board, len(self._l1d_controllers),
                                               self._home_controllers)

        by_socket = [[] for _ in range(self._sockets)]
        for i in range(len(self._l1d_controllers)):
            by_socket[self.socket_of_core(i)] += [self._l1d_controllers[i], self._l1i_controllers[i]]
        for s in range(self._sockets):
            by_socket[s].append(self._llc_controllers[s])
        for r in range(self._sockets):
            by_socket[self.socket_of_home(r)] += [self._home_controllers[r], self._memory_controllers[r]]
        by_socket[0] += self._dma_controllers
        network.connect_sockets(by_socket)
        finish(self.ruby_system, board)


def attach_ruby_system(hierarchy, network_class, *network_args):
    """The hierarchy's ruby system and its network (network_class(ruby_system, *network_args)) with CHI's channels;
    the ruby system joins the hierarchy before the network names it (a SimObject named by a parameter before it
    has a parent is adopted by the one naming it)."""
    hierarchy.ruby_system = RubySystem()
    network = hierarchy.ruby_system.network = network_class(hierarchy.ruby_system, *network_args)
    hierarchy.ruby_system.number_of_virtual_networks = VIRTUAL_NETWORKS
    network.number_of_virtual_networks = VIRTUAL_NETWORKS
    network.data_msg_size = DATA_MESSAGE_BYTES
    return network


def memory_controllers(ruby_system, channels: list, latency: int | None) -> list:
    """A CHI memory controller per channel of the board's memory, in the ruby system; `latency`: cycles before its
    answer leaves it (data_latency, CHI-mem.sm; None: gem5's own)."""
    controllers = []
    for rng, port in channels:
        mc = MemoryController(ruby_system.network, rng, port)
        mc.ruby_system = ruby_system
        if latency is not None:
            mc.data_latency = latency
        controllers.append(mc)
    ruby_system.memory_controllers = controllers
    return controllers


def home_node(node, ruby_system, addr_ranges: list, below: list, latency: int | None):
    """`node` in the ruby system as the home of the lines in addr_ranges, fetching them from `below`; `latency`: its
    lookup on a request, hit or miss, in cycles (None: gem5's own)."""
    node.addr_ranges = addr_ranges
    node.downstream_destinations = below
    node.ruby_system = ruby_system
    if latency is not None:
        node.read_hit_latency = node.read_miss_latency = latency
    return node


def finish(ruby_system, board: AbstractBoard) -> None:
    """Once every controller is connected: the network's buffers, and the board's system port through ruby."""
    ruby_system.network.setup_buffers()
    ruby_system.sys_port_proxy = RubyPortProxy()
    board.connect_system_port(ruby_system.sys_port_proxy.in_ports)


def inclusive_cache(ruby_system, board: AbstractBoard, size_assoc: tuple, latency: int | None, below: list):
    """An inclusive cache (INCLUSIVE_CACHE: a socket's shared cache, or a core's private L2) in the ruby system, sending to `below`;
    `latency`: its lookup, hit, miss or snoop, in cycles (None: gem5's own)."""
    cache = ChiCache(ruby_system.network, board.get_cache_line_size(), board.get_clock_domain(), *size_assoc,
                     INCLUSIVE_CACHE)
    cache.ruby_system = ruby_system
    if latency is not None:
        cache.read_hit_latency = cache.read_miss_latency = cache.snp_latency = latency
    cache.downstream_destinations = below
    return cache


def cores_l1s(ruby_system, board: AbstractBoard, l1d: tuple, l1i: tuple, latency: dict, dirty_shared: bool,
              below, version) -> tuple[list, list]:
    """Every core's L1D and L1I (private_l1s), each sending to below(core), in the ruby system; each L1D checked to
    be the controller version(core) a live ingest expects (placement.chi_l1d_version)."""
    l1ds, l1is = [], []
    for i, core in enumerate(board.get_processor().get_cores()):
        d, ic = private_l1s(ruby_system, core, i, board, l1d, l1i, latency, dirty_shared)
        d.downstream_destinations = [below(i)]
        ic.downstream_destinations = [below(i)]
        l1ds.append(d)
        l1is.append(ic)
    ruby_system.l1d_controllers = l1ds
    ruby_system.l1i_controllers = l1is
    for i, d in enumerate(l1ds):
        if int(d.version) != version(i):
            raise ValueError(f"core {i}'s L1D is controller {int(d.version)}, not {version(i)} as placement says")
    return l1ds, l1is


def private_l1s(ruby_system, core, i: int, board: AbstractBoard, l1d: tuple, l1i: tuple, latency: dict,
                dirty_shared: bool):
    """Core i's L1D and L1I with their sequencers, wired to the core as gem5's own CHI hierarchy does (the X86
    interrupt ports, the IO bus and the page-table walkers included); `latency`: the hierarchy's (l1, l1i,
    l1_snoop: cycles, None for gem5's own)."""
    isa = board.get_processor().get_isa()
    line, clock = board.get_cache_line_size(), board.get_clock_domain()
    d = PrivateL1MOESICache(*l1d, ruby_system.network, core, line, isa, clock)
    ic = PrivateL1MOESICache(*l1i, ruby_system.network, core, line, isa, clock)
    ic.sequencer = RubySequencer(version=i, dcache=NULL, clk_domain=ic.clk_domain)
    d.sequencer = RubySequencer(version=i, dcache=d.cache, clk_domain=d.clk_domain)
    if board.has_io_bus():
        d.sequencer.connectIOPorts(board.get_io_bus())
    d.ruby_system = ic.ruby_system = ruby_system
    if latency["l1"] is not None:   # tag 1 + data (0 would wrap around: at least 1)
        d.cache.dataAccessLatency = max(1, latency["l1"] - 1)
    if latency["l1i"] is not None:
        ic.cache.dataAccessLatency = max(1, latency["l1i"] - 1)
    if latency["l1_snoop"] is not None:
        d.snp_latency = ic.snp_latency = latency["l1_snoop"]
    d.allow_SD = ic.allow_SD = dirty_shared
    core.connect_icache(ic.sequencer.in_ports)
    core.connect_dcache(d.sequencer.in_ports)
    core.connect_walker_ports(d.sequencer.in_ports, ic.sequencer.in_ports)
    if isa == ISA.X86:
        core.connect_interrupt(d.sequencer.interrupt_out_port, d.sequencer.in_ports)
    else:
        core.connect_interrupt()
    return d, ic


def dma_requestors(ruby_system, board: AbstractBoard, cores: int, homes: list) -> list:
    """The board's DMA ports as CHI requestors sending to the homes, their sequencers numbered after the cores'
    (the ruby system's sequencer count set to match)."""
    dmas = []
    if board.has_dma_ports():
        for i, port in enumerate(board.get_dma_ports()):
            dma = DMARequestor(ruby_system.network, board.get_cache_line_size(), board.get_clock_domain())
            dma.sequencer = RubySequencer(version=cores + i, in_ports=port, dcache=NULL)
            dma.ruby_system = ruby_system
            dma.sequencer.ruby_system = ruby_system
            dma.downstream_destinations = homes
            dmas.append(dma)
        ruby_system.dma_controllers = dmas
    ruby_system.num_of_sequencers = 2 * cores + len(dmas)
    return dmas
