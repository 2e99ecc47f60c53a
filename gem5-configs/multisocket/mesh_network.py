"""A Ruby SimpleNetwork laid out as a mesh part's die: one router per tile on a grid of `columns` tiles per row,
every controller of a tile (a core's L1s and L2, a last-level slice, a memory controller) on its tile's router by
a short link, and neighbouring routers joined both ways by a mesh link. Routes go X first, then Y (a vertical
link weighs more, as gem5's own configs/topologies/Mesh_XY.py does it), one link and one router per hop."""

from m5.objects import SimpleIntLink, SimpleNetwork

from .placement import mesh_neighbours
from .socket_network import on_routers


class MeshNetwork(SimpleNetwork):
    def __init__(self, ruby_system, columns: int, local_latency: int, local_bandwidth: int, link_latency: int,
                 router_latency: int | None = None):
        super().__init__()
        if columns < 1:
            raise ValueError(f"a mesh of {columns} columns")
        self.netifs = []
        self.ruby_system = ruby_system
        self._columns = columns
        self._local = (local_latency, local_bandwidth, router_latency)
        self._link = (link_latency, local_bandwidth)

    def connect_tiles(self, controllers_by_tile):
        """controllers_by_tile[t] lists the controllers of tile t (row t // columns, column t % columns)."""
        on_routers(self, controllers_by_tile, *self._local)
        latency, bandwidth = self._link
        links = []
        for a, b, weight in mesh_neighbours(len(controllers_by_tile), self._columns):
            for src, dst in ((a, b), (b, a)):
                links.append(SimpleIntLink(link_id=len(links), src_node=self.routers[src],
                                           dst_node=self.routers[dst], latency=latency,
                                           bandwidth_factor=bandwidth, weight=weight))
        self.int_links = links

