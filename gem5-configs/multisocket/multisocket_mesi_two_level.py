"""MESI_Two_Level with sockets: private L1s per core, one L2 bank and one directory per socket,
line addresses interleaved across the sockets (the L2 bank of line L and its memory channel both
belong to socket (L + home_socket) mod S; home_socket 0 unless a repetition rotates it), connected by SocketNetwork. On a full-system board (X86Board) it also
carries the FS plumbing of gem5's own MESITwoLevelCacheHierarchy: every sequencer on the IO bus, and
one DMA controller per DMA port, on socket 0 (where the south bridge would be)."""

from m5.objects import DMASequencer, RubyPortProxy, RubySequencer, RubySystem

from gem5.coherence_protocol import CoherenceProtocol
from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.cachehierarchies.abstract_two_level_cache_hierarchy import AbstractTwoLevelCacheHierarchy
from gem5.components.cachehierarchies.ruby.abstract_ruby_cache_hierarchy import AbstractRubyCacheHierarchy
from gem5.components.cachehierarchies.ruby.caches.mesi_two_level.directory import Directory
from gem5.components.cachehierarchies.ruby.caches.mesi_two_level.dma_controller import DMAController
from gem5.components.cachehierarchies.ruby.caches.mesi_two_level.l1_cache import L1Cache
from gem5.components.cachehierarchies.ruby.caches.mesi_two_level.l2_cache import L2Cache
from gem5.isas import ISA
from gem5.utils.requires import requires

from .placement import socket_of_core, socket_of_home
from .socket_network import SocketNetwork


class MultiSocketMESITwoLevel(AbstractRubyCacheHierarchy, AbstractTwoLevelCacheHierarchy):
    def __init__(self, sockets: int, cores_per_socket: int, l1d_size: str, l1d_assoc: int, l1i_size: str, l1i_assoc: int,
                 l2_size: str, l2_assoc: int, local_latency: int, local_bandwidth: int, socket_latency: int,
                 socket_bandwidth: int, topology, home_socket: int = 0, router_latency: int | None = None):
        AbstractRubyCacheHierarchy.__init__(self=self)
        AbstractTwoLevelCacheHierarchy.__init__(self, l1i_size=l1i_size, l1i_assoc=l1i_assoc, l1d_size=l1d_size,
                                                l1d_assoc=l1d_assoc, l2_size=l2_size, l2_assoc=l2_assoc)
        self._sockets = sockets
        self._cores_per_socket = cores_per_socket
        self._net = (local_latency, local_bandwidth, socket_latency, socket_bandwidth, topology, router_latency)
        self._home_socket = home_socket

    def socket_of_bank(self, bank: int) -> int:
        """The socket of L2 bank and directory `bank` (the one that serves line L mod S)."""
        return socket_of_home(bank, self._home_socket, self._sockets)

    def socket_of_core(self, core: int) -> int:
        return socket_of_core(core, self._cores_per_socket)

    def controller_map(self) -> dict:
        """Which controller serves which core and socket (for the run manifest)."""
        return {
            "l1": [{"controller": f"l1_controllers{i}", "version": int(c.version), "core": i, "socket": self.socket_of_core(i)}
                   for i, c in enumerate(self._l1_controllers)],
            "l2": [{"controller": f"l2_controllers{s}", "socket": self.socket_of_bank(s)} for s in range(self._sockets)],
            "directory": [{"controller": f"directory_controllers{s}", "socket": self.socket_of_bank(s)}
                          for s in range(self._sockets)],
        }

    def incorporate_cache(self, board: AbstractBoard) -> None:
        requires(coherence_protocol_required=CoherenceProtocol.MESI_TWO_LEVEL)
        line = board.get_cache_line_size()
        self.ruby_system = RubySystem()
        self.ruby_system.number_of_virtual_networks = 3
        self.ruby_system.network = SocketNetwork(self.ruby_system, *self._net)
        self.ruby_system.network.number_of_virtual_networks = 3

        cores = board.get_processor().get_cores()
        if len(cores) != self._sockets * self._cores_per_socket:
            raise ValueError(f"{len(cores)} cores for {self._sockets} sockets x {self._cores_per_socket}")
        self._l1_controllers = []
        for i, core in enumerate(cores):
            l1 = L1Cache(self._l1i_size, self._l1i_assoc, self._l1d_size, self._l1d_assoc, self.ruby_system.network,
                         core, self._sockets, line, board.processor.get_isa(), board.get_clock_domain())
            l1.sequencer = RubySequencer(version=i, dcache=l1.L1Dcache, clk_domain=l1.clk_domain)
            l1.ruby_system = self.ruby_system
            if board.has_io_bus():
                l1.sequencer.connectIOPorts(board.get_io_bus())
            core.connect_icache(l1.sequencer.in_ports)
            core.connect_dcache(l1.sequencer.in_ports)
            core.connect_walker_ports(l1.sequencer.in_ports, l1.sequencer.in_ports)
            if board.get_processor().get_isa() == ISA.X86:
                core.connect_interrupt(l1.sequencer.interrupt_out_port, l1.sequencer.in_ports)
            else:
                core.connect_interrupt()
            self._l1_controllers.append(l1)

        # One L2 bank per socket: the L1s pick bank (line mod sockets), so bank s is socket s's.
        self._l2_controllers = [L2Cache(self._l2_size, self._l2_assoc, self.ruby_system.network, self._sockets, line)
                                for _ in range(self._sockets)]
        for l2 in self._l2_controllers:
            l2.ruby_system = self.ruby_system
        mem_ports = board.get_mem_ports()
        if len(mem_ports) != self._sockets:
            raise ValueError(f"memory has {len(mem_ports)} channels, want one per socket ({self._sockets})")
        self._directory_controllers = [Directory(self.ruby_system.network, line, rng, port) for rng, port in mem_ports]
        for d in self._directory_controllers:
            d.ruby_system = self.ruby_system

        self._dma_controllers = []
        if board.has_dma_ports():
            for i, port in enumerate(board.get_dma_ports()):
                dma = DMAController(self.ruby_system.network, line)
                dma.dma_sequencer = DMASequencer(version=i, in_ports=port)
                dma.ruby_system = self.ruby_system
                self._dma_controllers.append(dma)
            self.ruby_system.dma_controllers = self._dma_controllers

        self.ruby_system.num_of_sequencers = len(self._l1_controllers) + len(self._dma_controllers)
        self.ruby_system.l1_controllers = self._l1_controllers
        self.ruby_system.l2_controllers = self._l2_controllers
        self.ruby_system.directory_controllers = self._directory_controllers

        by_socket = [[] for _ in range(self._sockets)]
        for i, l1 in enumerate(self._l1_controllers):
            by_socket[self.socket_of_core(i)].append(l1)
        for s in range(self._sockets):
            by_socket[self.socket_of_bank(s)] += [self._l2_controllers[s], self._directory_controllers[s]]
        by_socket[0] += self._dma_controllers
        self.ruby_system.network.connect_sockets(by_socket)
        self.ruby_system.network.setup_buffers()
        self.ruby_system.sys_port_proxy = RubyPortProxy()
        board.connect_system_port(self.ruby_system.sys_port_proxy.in_ports)
