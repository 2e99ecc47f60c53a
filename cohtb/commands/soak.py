"""`cohtb soak`: a long random stream through the RTL, the bit-exact model and the compiled model."""

from __future__ import annotations

import argparse

from cohtb.errors import CohtbError
from cohtb.verify.soak import soak


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--events", type=int, default=10_000_000, help="events in all")
    p.add_argument("--seed", type=int, default=1, help="seed of the stream (the same seed, the same stream)")
    p.add_argument("--variant", default="default", help="monitor configuration (rtl/variants.txt)")
    p.add_argument("--chunk", type=int, default=200_000, help="events between comparisons")


def run(args: argparse.Namespace) -> int:
    if args.events < 1 or args.chunk < 1:
        raise CohtbError("--events and --chunk must be at least 1")
    result = soak(args.events, args.seed, args.variant, args.chunk)
    print(result.summary())
    for line in result.first_mismatch:
        print("  first mismatch, RTL against the model: " + line)
    for line in result.compiled_first_mismatch:
        print("  first mismatch, compiled model against the model: " + line)
    return 1 if result.failed else 0
