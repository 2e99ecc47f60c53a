"""Where things sit, the same on both machines (and the same as cohtb's contract: cores are numbered socket by
socket). Defined once here for the gem5 side; cohtb loads this file by its path (cohtb/run/machines.py), so it
needs only the standard library."""


def socket_of_core(core: int, cores_per_socket: int) -> int:
    """Cores are numbered socket by socket: core c is in socket c // C."""
    return core // cores_per_socket


def socket_of_home(residue: int, home_socket: int, sockets: int) -> int:
    """The socket of the home (L2 bank or home node, directory, memory channel) of the lines L with
    L mod S == residue: rotated by home_socket, so that repetitions can move every line's home without moving a
    thread."""
    return (residue + home_socket) % sockets


def chi_l1d_version(core: int, sockets: int) -> int:
    """The socket machine's controller version of core's L1D. CHI numbers every controller of its one type
    (`Cache`) in the order they are made, and the trace names them only by that number: socket_chi.py makes the
    homes (one per socket), then the socket caches, then each core's L1D and L1I, and checks its controllers
    against this. A live run's ingest starts before gem5 has built them, so it needs the rule, not the map."""
    return 2 * sockets + 2 * core
