"""`cohtb soak`: a long randomized stream, with the workloads' contention patterns mixed in, through the Verilated
monitor, the bit-exact model (the Python specification) and its compiled twin side by side; every counter of the
RTL and of the compiled model compared with the specification's after every chunk. The specification is the
oracle of both: the compiled model, which checks every run's RTL in the main job, is never checked against the RTL.

A mismatch is a chunk after which some counter differs; the first one's differences are printed. Regions watch a
few contended lines so the region counters are compared too."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from cohtb.monitor.compiled_model import CompiledModel
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
    compiled_mismatched_chunks: int = 0     # chunks after which the compiled model differs from the specification
    compiled_first_mismatch: list[str] = field(default_factory=list)
    compiled_seconds: float = 0.0

    @property
    def rtl_rate(self) -> float:
        return self.events / self.rtl_seconds if self.rtl_seconds else 0.0

    @property
    def model_rate(self) -> float:
        return self.events / self.model_seconds if self.model_seconds else 0.0

    @property
    def compiled_rate(self) -> float:
        return self.events / self.compiled_seconds if self.compiled_seconds else 0.0

    @property
    def failed(self) -> bool:
        return bool(self.mismatched_chunks or self.compiled_mismatched_chunks)

    def summary(self) -> str:
        def verdict(n: int) -> str:
            return "no mismatch" if not n else f"{n} MISMATCHED chunks"
        return (f"soak: {self.events:,} events in {self.chunks} chunks, every counter compared with the model's after "
                f"each: RTL {verdict(self.mismatched_chunks)}, compiled model "
                f"{verdict(self.compiled_mismatched_chunks)}; RTL {self.rtl_rate / 1e6:.2f} M events/s, model "
                f"(Python) {self.model_rate / 1e3:.0f} k events/s, compiled model {self.compiled_rate / 1e6:.1f} M events/s")


def soak(events: int, seed: int, variant: str = "default", chunk: int = 200_000, progress: bool = True) -> SoakResult:
    cfg = load_variant(variant)
    p = cfg.params
    per_socket = max(1, p.cores // p.sockets)
    regions = [(HOT, p.line_mask), (HOT + 8, p.line_mask), (COLD, p.line_mask)][:p.regions]
    model, compiled = BoundedModel(p), CompiledModel(p)
    for i, (base, mask) in enumerate(regions):
        model.set_region(i, base, mask)
        compiled.set_region(i, base, mask)
    done = chunks = bad = compiled_bad = 0
    first: list[str] = []
    compiled_first: list[str] = []
    t_rtl = t_model = t_compiled = 0.0
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
            compiled.apply_array(recs)
            t3 = time.perf_counter()
            t_rtl += t1 - t0
            t_model += t2 - t1
            t_compiled += t3 - t2
            spec = model.snapshot()
            where = f"chunk {chunks} (events {done:,}..{done + n:,}): "
            diffs = diff_counters(spec, mon.snapshot())
            if diffs:
                bad += 1
                first = first or [where + "; ".join(diffs[:8])]
            diffs = diff_counters(spec, compiled.snapshot())
            if diffs:
                compiled_bad += 1
                compiled_first = compiled_first or [where + "; ".join(diffs[:8])]
            done += n
            chunks += 1
            if progress:
                eta = (time.monotonic() - t_start) / done * (events - done)
                print(f"\r  soak: {done:,}/{events:,} events, {bad + compiled_bad} mismatched chunks, ~{eta:.0f} s left   ",
                      end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    return SoakResult(done, chunks, bad, first, t_rtl, t_model, compiled_bad, compiled_first, t_compiled)
