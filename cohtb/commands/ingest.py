"""`cohtb ingest`: a gem5 ProtocolTrace to a cohtb event file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.trace import ingest
from cohtb.tables import count



def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", help="the trace: a file (plain or gzip) or - for stdin")
    p.add_argument("out", help="the event file to write (written whole or not at all)")
    p.add_argument("--socket-map", help="core->socket map: a file of '<core> <socket>' lines, or sockets in core "
                   "order as a list (0,0,1,1); a core is an L1 controller (the trace's version column)")
    p.add_argument("--cores-per-socket", type=int, help="instead of a map: core c is in socket c // K, for as many "
                   "cores as the trace shows")
    p.add_argument("--controllers", help="instead of a map: the run's roi.json or manifest.json, whose controller map "
                   "gives each core's socket and, for a CHI trace (every controller named 'Cache'), its L1D's version")
    p.add_argument("--pagemap", help="also write the TLB page mappings found in the trace here")


def run(args: argparse.Namespace) -> int:
    given = [a for a in (args.socket_map, args.cores_per_socket, args.controllers) if a is not None]
    if len(given) != 1:
        raise CohtbError("give the sockets as --socket-map FILE|LIST, --cores-per-socket K or --controllers FILE "
                         "(one of the three)")
    if args.cores_per_socket is not None and args.cores_per_socket < 1:
        raise CohtbError(f"--cores-per-socket {args.cores_per_socket}: must be at least 1")
    smap, versions = None, None
    if args.socket_map:
        smap = ingest.read_socket_map(args.socket_map)
    elif args.controllers:
        smap, versions = ingest.read_controllers(Path(args.controllers))
    counts = ingest.ingest(args.trace, Path(args.out), smap, {"trace": str(args.trace)},
                           pagemap=Path(args.pagemap) if args.pagemap else None, cores_per_socket=args.cores_per_socket,
                           l1d_versions=versions)
    print(f"{args.trace}: {counts['lines']:,} lines -> {counts['events']:,} events of {count(counts['cores'], 'core')} in "
          f"{count(counts['sockets'], 'socket')} in {args.out}")
    print("  " + ", ".join(f"{k} {v:,}" for k, v in counts.items() if k not in ("lines", "events", "cores", "sockets")))
    if counts["events"] == 0:
        print(f"cohtb ingest: warning: {args.trace}: no coherence events in {counts['lines']:,} lines "
              "(was ProtocolTrace on, and the region of interest reached?)", file=sys.stderr)
    return 0
