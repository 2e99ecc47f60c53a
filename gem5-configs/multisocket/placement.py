"""Where things sit, the same on both machines (and the same as cohtb's contract: cores are numbered socket by
socket). Defined once here for the gem5 side."""


def socket_of_core(core: int, cores_per_socket: int) -> int:
    """Cores are numbered socket by socket: core c is in socket c // C."""
    return core // cores_per_socket


def socket_of_home(residue: int, home_socket: int, sockets: int) -> int:
    """The socket of the home (L2 bank or home node, directory, memory channel) of the lines L with
    L mod S == residue: rotated by home_socket, so that repetitions can move every line's home without moving a
    thread."""
    return (residue + home_socket) % sockets
