"""The bounded reference model compiled (native/model/cohtb_model.c): `BoundedModel` rule for rule, without the
coverage bins, at tens of millions of events per second, so that the main job checks every run's RTL counters
against a model in seconds.

`BoundedModel` stays the specification: the compiled model is held to it on every soak and in
tests/test_compiled_model.py, never to the RTL. It takes the same commands (set_region, drop, apply_array,
snapshot) and gives the same `Counters`."""

from __future__ import annotations

import ctypes

import numpy as np

from cohtb import contract as ct
from cohtb.errors import CohtbError
from cohtb.monitor.config import MonitorParams
from cohtb.monitor.counters import Counters, HotEntry
from cohtb.places import ROOT
from cohtb.trace.events import RECORD

LIBRARY = ROOT / "build" / "native" / "libcohtb_model.so"
# the C model counts an event's kind at GLOBAL_COUNTERS[kind]
assert ct.GLOBAL_COUNTERS[:len(ct.KIND_COUNTERS)] == ct.KIND_COUNTERS, "the kind counters lead the global counters"


class _Params(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint32) for name in ("cores", "sockets", "line_addr_bits", "sets", "ways", "xorfold",
                                                     "lru", "hot_entries", "regions", "counter_width")]


_lib: ctypes.CDLL | None = None


def library() -> ctypes.CDLL:
    """The compiled library (the bounded model, and the reconciliation: cohtb/analysis/compiled_reconcile.py), loaded
    once and held to the package's record layout."""
    global _lib
    if _lib is None:
        if not LIBRARY.exists():
            raise CohtbError(f"{LIBRARY}: compiled model not built (run the set-up: make setup)")
        lib = ctypes.CDLL(str(LIBRARY))
        lib.cohtb_model_new.restype = ctypes.c_void_p
        lib.cohtb_model_new.argtypes = [ctypes.POINTER(_Params)]
        lib.cohtb_model_free.argtypes = [ctypes.c_void_p]
        lib.cohtb_model_clear_state.argtypes = [ctypes.c_void_p]
        lib.cohtb_model_set_region.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_uint64,
                                               ctypes.c_int]
        lib.cohtb_model_drop.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
        lib.cohtb_model_apply.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64]
        lib.cohtb_model_counters.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 5
        lib.cohtb_model_record_size.restype = ctypes.c_size_t
        if lib.cohtb_model_record_size() != RECORD.itemsize:
            raise CohtbError(f"{LIBRARY}: record size {lib.cohtb_model_record_size()}, the package's is "
                             f"{RECORD.itemsize} (rebuild: make setup)")
        _lib = lib
    return _lib


class CompiledModel:
    """BoundedModel's counting, compiled: one freshly cleared model of a parameter set."""

    def __init__(self, p: MonitorParams):
        self.p = p
        self.lib = library()
        params = _Params(p.cores, p.sockets, p.lineAddrBits, p.sets, p.ways, p.indexing == "xorfold",
                         p.replacement == "lru", p.hotEntries, p.regions, p.counterWidth)
        self.handle = self.lib.cohtb_model_new(ctypes.byref(params))
        if not self.handle:
            raise CohtbError(f"the compiled model cannot take these parameters: {p}")

    def __del__(self) -> None:
        if getattr(self, "handle", None):
            self.lib.cohtb_model_free(self.handle)
            self.handle = None

    def clear_state(self) -> None:
        self.lib.cohtb_model_clear_state(self.handle)

    def set_region(self, r: int, base: int, mask: int, enabled: bool = True) -> None:
        self.lib.cohtb_model_set_region(self.handle, r, base, mask, int(enabled))

    def drop(self, n: int = 1) -> None:
        self.lib.cohtb_model_drop(self.handle, n)

    def apply_array(self, recs: np.ndarray) -> None:
        recs = np.ascontiguousarray(recs, dtype=RECORD)
        self.lib.cohtb_model_apply(self.handle, recs.ctypes.data, len(recs))

    def snapshot(self) -> Counters:
        p = self.p
        totals = np.zeros(len(ct.GLOBAL_COUNTERS), np.uint64)
        regions = np.zeros((p.regions, len(ct.REGION_COUNTERS)), np.uint64)
        matrix = np.zeros((p.sockets, p.sockets), np.uint64)
        hot = np.zeros((p.hotEntries, len(ct.HOT_FIELDS)), np.uint64)
        flags = np.zeros(2, np.uint8)
        self.lib.cohtb_model_counters(self.handle, *(a.ctypes.data for a in (totals, regions, matrix, hot, flags)))
        return Counters(totals=dict(zip(ct.GLOBAL_COUNTERS, totals.tolist())),
                        regions=[dict(zip(ct.REGION_COUNTERS, row)) for row in regions.tolist()],
                        matrix=matrix.tolist(),
                        hot=[HotEntry(**dict(zip(ct.HOT_FIELDS, row))) for row in hot.tolist()],
                        saturated=bool(flags[0]), dropped=bool(flags[1]))


class ModelMonitor:
    """The compiled model behind a monitor's counting interface (set_regions, stream, drain, snapshot, close), so
    that counters over time (cohtb/monitor/live.py: series) can be taken of an event file without the RTL's CSR
    readout, whose eight clocks per word make a snapshot cost thousands of clocks."""

    def __init__(self, p: MonitorParams):
        self.model = CompiledModel(p)

    def set_regions(self, regions: list[tuple[int, int]]) -> None:
        for r, (base, mask) in enumerate(regions):
            self.model.set_region(r, base, mask)

    def stream(self, recs: np.ndarray) -> None:
        self.model.apply_array(recs)

    def drain(self) -> None:
        """Nothing in flight: the model applies each event at once."""

    def snapshot(self) -> Counters:
        return self.model.snapshot()

    def close(self) -> None:
        """Nothing to release before the model is collected."""
