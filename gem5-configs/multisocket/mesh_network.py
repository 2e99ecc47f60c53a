"""A Ruby SimpleNetwork laid out as a mesh part's die: one router per tile on a grid of `columns` tiles per row,
every controller of a tile (a core's L1s and L2, a last-level slice, a memory controller) on its tile's router by
a short link, and neighbouring routers joined both ways by a mesh link. Routes go X first, then Y (a vertical
link weighs more, as gem5's own configs/topologies/Mesh_XY.py does it), one link and one router per hop."""

from m5.objects import SimpleExtLink, SimpleIntLink, SimpleNetwork, Switch

from .placement import mesh_neighbours


class MeshNetwork(SimpleNetwork):
    def __init__(self, ruby_system, columns: int, local_latency: int, local_bandwidth: int, link_latency: int,
                 router_latency: int | None = None):
        super().__init__()
        if columns < 1:
            raise ValueError(f"a mesh of {columns} columns")
        self.netifs = []
        self.ruby_system = ruby_system
        self._columns = columns
        self._local = (local_latency, local_bandwidth)
        self._link_latency = link_latency
        # A Switch charges its routing latencies (Switch.cc); None: gem5's 1 cycle.
        self._router = ({} if router_latency is None else
                        {"int_routing_latency": router_latency, "ext_routing_latency": router_latency})

    def connect_tiles(self, controllers_by_tile):
        """controllers_by_tile[t] lists the controllers of tile t (row t // columns, column t % columns)."""
        tiles = len(controllers_by_tile)
        self.routers = [Switch(router_id=t, **self._router) for t in range(tiles)]
        latency, bandwidth = self._local
        ext = []
        for t, controllers in enumerate(controllers_by_tile):
            for c in controllers:
                ext.append(SimpleExtLink(link_id=len(ext), ext_node=c, int_node=self.routers[t],
                                         latency=latency, bandwidth_factor=bandwidth))
        self.ext_links = ext
        links = []
        for a, b, weight in mesh_neighbours(tiles, self._columns):
            for src, dst in ((a, b), (b, a)):
                links.append(SimpleIntLink(link_id=len(links), src_node=self.routers[src],
                                           dst_node=self.routers[dst], latency=self._link_latency,
                                           bandwidth_factor=bandwidth, weight=weight))
        self.int_links = links

