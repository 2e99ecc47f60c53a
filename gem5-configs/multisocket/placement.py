"""Where things sit, the same on every machine (and the same as cohtb's contract: cores are numbered socket by
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


def chi_l1d_version(core: int, hierarchy: str, sockets: int, cores: int, slices: int = 0) -> int:
    """A CHI machine's controller version of core's L1D (of `cores` in all). CHI numbers every controller of its one
    type (`Cache`) in the order they are made, and the trace names them only by that number. socket_chi.py makes
    the homes (one per socket), then the socket caches, then each core's L1D and L1I; mesh_chi.py the slices, then
    every core's L2, then each core's L1D and L1I. Each checks its controllers against this. A live run's ingest
    starts before gem5 has built them, so it needs the rule, not the map."""
    if hierarchy == "socket":
        return 2 * sockets + 2 * core
    if hierarchy == "mesh":
        if slices < 1:
            raise ValueError("the mesh machine's L1D versions follow its slices: give their number")
        return slices + cores + 2 * core
    raise ValueError(f"hierarchy {hierarchy!r} is not a CHI machine")


def mesh_tile_of_slice(slice_: int, slices: int, tiles: int) -> int:
    """The mesh machine's tile of a last-level slice: the slices spread evenly over the tiles, from tile 0."""
    return slice_ * tiles // slices


def mesh_tile_of_core(core: int, cores: int, tiles: int) -> int:
    """The mesh machine's tile of a core: the cores spread evenly over the tiles, from tile 0, as a thread count
    below the part's spreads over its whole mesh (where the seeds' threads ran on the part is not published)."""
    return core * tiles // cores


MESH_MEMORY_TILE = 0   # the mesh machine's one memory controller sits on a corner tile


def mesh_hops(a: int, b: int, columns: int) -> int:
    """Mesh links between tiles a and b (tile t in row t // columns, column t % columns): X then Y, as routed."""
    return abs(a // columns - b // columns) + abs(a % columns - b % columns)


def mesh_neighbours(tiles: int, columns: int) -> list[tuple[int, int, int]]:
    """(a, b, weight) for each pair of neighbouring tiles of the mesh machine, a < b, tile t in row t // columns and
    column t % columns; a vertical link weighs more (as gem5's configs/topologies/Mesh_XY.py), so routes go X first."""
    out = []
    for t in range(tiles):
        if t % columns + 1 < columns and t + 1 < tiles:
            out.append((t, t + 1, 1))
        if t + columns < tiles:
            out.append((t, t + columns, 2))
    return out
