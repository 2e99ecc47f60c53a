"""A Ruby SimpleNetwork whose topology makes sockets real: every controller of a socket (its cores'
L1s, its L2 bank, its directory) hangs off that socket's router by a short link, and the socket
routers are joined pairwise by slower, narrower inter-socket links."""

from m5.objects import SimpleExtLink, SimpleIntLink, SimpleNetwork, Switch


class SocketNetwork(SimpleNetwork):
    def __init__(self, ruby_system, local_latency: int, local_bandwidth: int, socket_latency: int, socket_bandwidth: int):
        super().__init__()
        self.netifs = []
        self.ruby_system = ruby_system
        self._local = (local_latency, local_bandwidth)
        self._remote = (socket_latency, socket_bandwidth)

    def connect_sockets(self, controllers_by_socket):
        """controllers_by_socket[s] lists the controllers of socket s."""
        sockets = len(controllers_by_socket)
        self.routers = [Switch(router_id=s) for s in range(sockets)]
        latency, bandwidth = self._local
        ext = []
        for s, controllers in enumerate(controllers_by_socket):
            for c in controllers:
                ext.append(SimpleExtLink(link_id=len(ext), ext_node=c, int_node=self.routers[s],
                                         latency=latency, bandwidth_factor=bandwidth))
        self.ext_links = ext
        latency, bandwidth = self._remote
        links = []
        for a in range(sockets):
            for b in range(sockets):
                if a != b:
                    links.append(SimpleIntLink(link_id=len(links), src_node=self.routers[a], dst_node=self.routers[b],
                                               latency=latency, bandwidth_factor=bandwidth))
        self.int_links = links
