"""The mesh machine (docs/machine.md, "The mesh machine"): one socket of a mesh part (Sapphire Rapids) in gem5's
CHI protocol, laid out as the part is. Tiles sit on a 2-D mesh of routers; a tile holds a core (its private L1I,
L1D and L2) and may hold a slice of the last-level cache. The slices are the socket's home nodes: each is home to
the lines its address range holds (lines interleaved over a power-of-two number of slices, the part's hash of
the address reduced to the line's low bits), caches them and keeps their directory. The last level is
non-inclusive, as the part's: a line a core takes unique leaves its slice (CHI's home-node defaults,
configs/ruby/CHI_config.py, CHI_HNFController). A message crosses the mesh one link and one router per hop,
X first, then Y, so a transfer costs more the farther apart the requester, the line's slice and its owner sit:
the spread of the part's core-to-core latencies. Built from gem5's standard CHI nodes; the arrangement is ours.

Downstream routing is per controller: an L1 sends every miss to its core's L2; an L2 to the slice whose
interleaved range holds the line; a slice to the memory channel."""

import math

from m5.objects import AddrRange

from gem5.coherence_protocol import CoherenceProtocol
from gem5.components.boards.abstract_board import AbstractBoard
from gem5.components.cachehierarchies.abstract_cache_hierarchy import AbstractCacheHierarchy
from gem5.components.cachehierarchies.ruby.abstract_ruby_cache_hierarchy import AbstractRubyCacheHierarchy
from gem5.utils.override import overrides
from gem5.utils.requires import requires

from .machine_file import kib, shape_problem
from .mesh_network import MeshNetwork
from .placement import MESH_MEMORY_TILE, chi_l1d_version, mesh_tile_of_core, mesh_tile_of_slice
from .socket_chi import (ChiCache, attach_ruby_system, cores_l1s, dma_requestors, finish,
                         home_node, inclusive_cache, memory_controllers)


# A slice of the last-level cache that is home to its lines: it caches them (non-inclusive of the cores' caches),
# keeps their directory, and fetches from memory (CHI's home-node defaults, CHI_HNFController).
HOME_SLICE = {
    "is_HN": True, "enable_DMT": True, "enable_DCT": True, "allow_SD": True,
    "alloc_on_seq_acc": False, "alloc_on_seq_line_write": False, "alloc_on_readshared": True,
    "alloc_on_readunique": False, "alloc_on_readonce": True, "alloc_on_writeback": True, "alloc_on_atomic": True,
    "dealloc_on_unique": True, "dealloc_on_shared": False, "dealloc_backinv_unique": False,
    "dealloc_backinv_shared": False,
    "number_of_TBEs": 32, "number_of_repl_TBEs": 32,
    "number_of_snoop_TBEs": 1,   # a home node is snooped by no one
    "number_of_DVM_TBEs": 1, "number_of_DVM_snoop_TBEs": 1, "unify_repl_TBEs": False,
}


class MeshCHI(AbstractRubyCacheHierarchy):
    def __init__(self, sockets: int, cores_per_socket: int, l1d_size: str, l1d_assoc: int, l1i_size: str,
                 l1i_assoc: int, llc_size: str, llc_assoc: int, l2_private_size: str, l2_private_assoc: int,
                 llc_slices: int, mesh_columns: int, local_latency: int, local_bandwidth: int, mesh_link_latency: int,
                 router_latency: int | None = None, l1_latency: int | None = None, l1i_latency: int | None = None,
                 l1_snoop_latency: int | None = None, l1_dirty_shared: bool = True, l2_private_latency: int | None = None,
                 llc_latency: int | None = None, memory_latency: int | None = None):
        super().__init__()
        problem = shape_problem("mesh", sockets, {"llc_slices": llc_slices, "mesh_columns": mesh_columns,
                                                  "l2_size": llc_size, "l1d_size": l1d_size, "l1d_assoc": l1d_assoc,
                                                  "l1i_size": l1i_size})
        if problem:   # machine.py's check_machine refuses these first
            raise ValueError(problem)
        self._cores = cores_per_socket
        self._slices = llc_slices
        self._columns = mesh_columns
        self._l1d, self._l1i, self._l2 = (l1d_size, l1d_assoc), (l1i_size, l1i_assoc), (l2_private_size, l2_private_assoc)
        self._slice_cache = (f"{kib(llc_size) // llc_slices}KiB", llc_assoc)
        # Latencies, cycles (None: gem5's own), as on the socket machine; l2_private: the core's L2 on a hit and on
        # a snoop from its slice, llc: a slice's lookup.
        self._latency = {"l1": l1_latency, "l1i": l1_latency if l1i_latency is None else l1i_latency,
                         "l1_snoop": l1_snoop_latency, "l2": l2_private_latency, "llc": llc_latency,
                         "memory": memory_latency}
        self._l1_dirty_shared = l1_dirty_shared
        self._net = (mesh_columns, local_latency, local_bandwidth, mesh_link_latency, router_latency)

    def tiles(self) -> int:
        return max(self._cores, self._slices)

    def controller_map(self) -> dict:
        """Which controller is which (docs/gem5.md): the ingest names a core by its L1D's version."""
        return {
            "l1": [{"controller": f"l1d{i}", "version": int(c.version), "core": i, "socket": 0,
                    "icache_version": int(self._l1i_controllers[i].version),
                    "tile": mesh_tile_of_core(i, self._cores, self.tiles())}
                   for i, c in enumerate(self._l1d_controllers)],
            "l2": [{"controller": f"l2_{i}", "version": int(c.version), "core": i, "socket": 0}
                   for i, c in enumerate(self._l2_controllers)],
            "home": [{"controller": f"slice{j}", "version": int(c.version), "socket": 0, "residue": j,
                      "tile": mesh_tile_of_slice(j, self._slices, self.tiles())}
                     for j, c in enumerate(self._slice_controllers)],
        }

    def _slice_ranges(self, board: AbstractBoard, line: int, j: int) -> list:
        """Slice j's lines: every memory range, interleaved by line over the slices."""
        line_bits, slice_bits = int(math.log2(line)), int(math.log2(self._slices))
        if slice_bits == 0:
            return list(board.mem_ranges)
        return [AddrRange(start=r.start, size=r.size(), intlvHighBit=line_bits + slice_bits - 1,
                          intlvBits=slice_bits, intlvMatch=j) for r in board.mem_ranges]

    @overrides(AbstractCacheHierarchy)
    def incorporate_cache(self, board: AbstractBoard) -> None:
        requires(coherence_protocol_required=CoherenceProtocol.CHI)
        line = board.get_cache_line_size()
        clock = board.get_clock_domain()
        network = attach_ruby_system(self, MeshNetwork, *self._net)
        cores = board.get_processor().get_cores()
        if len(cores) != self._cores:
            raise ValueError(f"{len(cores)} cores, want {self._cores}")

        # Each controller joins the ruby system before another names it as a downstream destination (a SimObject
        # named by a parameter before it has a parent is adopted by the one naming it).
        channels = board.get_mem_ports()
        if len(channels) != 1:
            raise ValueError(f"memory has {len(channels)} channels, want one (the slices interleave every range)")
        self._memory_controllers = memory_controllers(self.ruby_system, channels, self._latency["memory"])

        self._slice_controllers = [home_node(ChiCache(network, line, clock, *self._slice_cache, HOME_SLICE),
                                             self.ruby_system, self._slice_ranges(board, line, j),
                                             self._memory_controllers, self._latency["llc"])
                                   for j in range(self._slices)]
        self.ruby_system.home_controllers = self._slice_controllers

        # The L2s join the ruby system before their L1s name them: so they are made first.
        self._l2_controllers = [inclusive_cache(self.ruby_system, board, self._l2, self._latency["l2"],
                                                self._slice_controllers) for _ in range(self._cores)]
        self.ruby_system.l2_controllers = self._l2_controllers
        self._l1d_controllers, self._l1i_controllers = cores_l1s(
            self.ruby_system, board, self._l1d, self._l1i, self._latency, self._l1_dirty_shared,
            below=lambda i: self._l2_controllers[i],
            version=lambda i: chi_l1d_version(i, "mesh", 1, self._cores, self._slices))

        self._dma_controllers = dma_requestors(self.ruby_system, board, self._cores, self._slice_controllers)

        by_tile = [[] for _ in range(self.tiles())]
        for i in range(self._cores):
            by_tile[mesh_tile_of_core(i, self._cores, self.tiles())] += [
                self._l1d_controllers[i], self._l1i_controllers[i], self._l2_controllers[i]]
        for j, s in enumerate(self._slice_controllers):
            by_tile[mesh_tile_of_slice(j, self._slices, self.tiles())].append(s)
        by_tile[MESH_MEMORY_TILE] += self._memory_controllers + self._dma_controllers
        network.connect_tiles(by_tile)
        finish(self.ruby_system, board)

