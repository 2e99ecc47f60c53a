"""`cohtb soak`: a long randomized stream, with the workloads' contention patterns mixed in, through the Verilated
monitor and the bit-exact model side by side; every counter compared after every chunk.

A mismatch is a chunk after which some counter differs; the first one's differences are printed. Regions watch a
few contended lines so the region counters are compared too."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from cohtb.monitor.config import variant as load_variant
from cohtb.monitor.counters import diff_counters
from cohtb.monitor.models import BoundedModel
from cohtb.monitor.rtl import VerilatedMonitor
from cohtb.verify.contention_patterns import COLD, HOT, mixed_chunk


@dataclass
class SoakResult:
    events: int
    chunks: int
    mismatched_chunks: int
    first_mismatch: list[str]
    rtl_seconds: float
    model_seconds: float

    @property
    def rtl_rate(self) -> float:
        return self.events / self.rtl_seconds if self.rtl_seconds else 0.0

    @property
    def model_rate(self) -> float:
        return self.events / self.model_seconds if self.model_seconds else 0.0

    def summary(self) -> str:
        verdict = "no mismatch" if not self.mismatched_chunks else f"{self.mismatched_chunks} MISMATCHED chunks"
        return (f"soak: {self.events:,} events in {self.chunks} chunks, every counter compared after each: {verdict}; "
                f"RTL {self.rtl_rate / 1e6:.2f} M events/s, model {self.model_rate / 1e3:.0f} k events/s")


def soak(events: int, seed: int, variant: str = "default", chunk: int = 200_000, progress: bool = True) -> SoakResult:
    cfg = load_variant(variant)
    p = cfg.params
    per_socket = max(1, p.cores // p.sockets)
    regions = [(HOT, p.line_mask), (HOT + 8, p.line_mask), (COLD, p.line_mask)][:p.regions]
    model = BoundedModel(p)
    for i, (base, mask) in enumerate(regions):
        model.set_region(i, base, mask)
    done = chunks = bad = 0
    first: list[str] = []
    t_rtl = t_model = 0.0
    t_start = time.monotonic()
    with VerilatedMonitor(variant, cfg) as mon:
        mon.set_regions(regions)
        while done < events:
            n = min(chunk, events - done)
            recs = mixed_chunk(seed, chunks, n, p.cores, per_socket)
            recs["line"] &= p.line_mask
            t0 = time.perf_counter()
            mon.stream(recs)
            mon.drain()
            t1 = time.perf_counter()
            model.apply_array(recs)
            t2 = time.perf_counter()
            t_rtl += t1 - t0
            t_model += t2 - t1
            diffs = diff_counters(model.snapshot(), mon.snapshot())
            if diffs:
                bad += 1
                first = first or [f"chunk {chunks} (events {done:,}..{done + n:,}): " + "; ".join(diffs[:8])]
            done += n
            chunks += 1
            if progress:
                eta = (time.monotonic() - t_start) / done * (events - done)
                print(f"\r  soak: {done:,}/{events:,} events, {bad} mismatched chunks, ~{eta:.0f} s left   ",
                      end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return SoakResult(done, chunks, bad, first, t_rtl, t_model)
