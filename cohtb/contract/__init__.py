"""The contract between the pipeline's stages: event kinds, the event file's layout and the CSR constants,
generated from the hardware's own definitions (`generated.py`, see `codegen.py`), plus the rules for
numbering sockets when no gem5 run says otherwise."""

from .generated import *  # noqa: F401,F403


def contiguous_socket_map(cores: int, sockets: int) -> list[int]:
    """Cores numbered socket by socket, the same number per socket (as cohtb's gem5 system builds them), for
    streams that come from no gem5 run: synthetic events, test benches. A run's own map is in its manifest."""
    return [c * sockets // cores for c in range(cores)]


def block_socket_map(per_socket: int, cores: int | None = None) -> list[int]:
    """Core c in socket c // per_socket (the last socket may hold fewer), for traces of other configurations
    (`cohtb ingest --cores-per-socket`); without `cores`, for as many cores as the event file can number."""
    if cores is None:
        cores = min(MAX_CORES, MAX_SOCKETS * per_socket)  # noqa: F405 (from the generated contract)
    return [c // per_socket for c in range(cores)]
