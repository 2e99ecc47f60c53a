"""A Ruby SimpleNetwork whose topology makes sockets real: every controller of a socket (its cores'
L1s, its L2 bank, its directory) hangs off that socket's router by a short link, and the socket routers
that the topology file joins (topology.py) are linked both ways by slower, narrower inter-socket links.
Sockets with no link between them route through the sockets between (shortest paths, every link of weight
1), one more link and router per hop, as QPI forwards."""

from m5.objects import SimpleExtLink, SimpleIntLink, SimpleNetwork, Switch


class SocketNetwork(SimpleNetwork):
    def __init__(self, ruby_system, local_latency: int, local_bandwidth: int, socket_latency: int,
                 socket_bandwidth: int, topology, router_latency: int | None = None):
        super().__init__()
        self.netifs = []
        self.ruby_system = ruby_system
        self._local = (local_latency, local_bandwidth, router_latency)
        self._remote = (socket_latency, socket_bandwidth)
        self._topology = topology

    def connect_sockets(self, controllers_by_socket):
        """controllers_by_socket[s] lists the controllers of socket s."""
        sockets = len(controllers_by_socket)
        if sockets != self._topology.sockets:
            raise ValueError(f"topology {self._topology.name} wires {self._topology.sockets} sockets, not {sockets}")
        on_routers(self, controllers_by_socket, *self._local)
        latency, bandwidth = self._remote
        joined = set(self._topology.links)
        links = []
        for a in range(sockets):   # in this order, a complete wiring numbers its links as the first machine did
            for b in range(sockets):
                if (min(a, b), max(a, b)) in joined:
                    links.append(SimpleIntLink(link_id=len(links), src_node=self.routers[a], dst_node=self.routers[b],
                                               latency=latency, bandwidth_factor=bandwidth))
        self.int_links = links


def on_routers(network, controllers_by_router, local_latency: int, local_bandwidth: int,
               router_latency: int | None) -> None:
    """The network's routers, one per group of controllers, each controller on its group's router by a local link
    (network.routers, network.ext_links). A Switch charges its routing latencies (Switch.cc), not BasicRouter's
    `latency` (garnet's); None: gem5's 1 cycle."""
    timing = ({} if router_latency is None else
              {"int_routing_latency": router_latency, "ext_routing_latency": router_latency})
    network.routers = [Switch(router_id=r, **timing) for r in range(len(controllers_by_router))]
    ext = []
    for r, controllers in enumerate(controllers_by_router):
        for c in controllers:
            ext.append(SimpleExtLink(link_id=len(ext), ext_node=c, int_node=network.routers[r],
                                     latency=local_latency, bandwidth_factor=local_bandwidth))
    network.ext_links = ext
