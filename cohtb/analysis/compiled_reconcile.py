"""The reconciliation compiled (native/model/cohtb_reconcile.c): `Reconciler` over `IdealModel`, rule for rule, at
millions of events per second, so that the main job holds every bundled run against gem5's evidence in seconds.

`Reconciler` and `IdealModel` stay the specification: the compiled one is held to them in
tests/test_compiled_reconcile.py, never to the RTL. `reconcile` gives a `Reconciler` whose per-line counts, matrix
and kind counts are the compiled ones, the same values in the same order."""

from __future__ import annotations

import ctypes
from dataclasses import fields

import numpy as np

from cohtb.analysis.reconcile import LineCheck, Reconciler
from cohtb.errors import CohtbError
from cohtb.monitor.compiled_model import LIBRARY, library
from cohtb.monitor.models import LineStats
from cohtb.trace.events import RECORD

STATS = [f.name for f in fields(LineStats)]    # the C side's per-line order (cohtb_reconcile.c: S_*, C_*)
CHECKS = [f.name for f in fields(LineCheck)]
FAILURES = {-1: "out of memory", -2: "an event of an unknown kind or core, or a transfer from or to a socket past "
                                    "the header's"}


def _functions(lib: ctypes.CDLL) -> ctypes.CDLL:
    lib.cohtb_reconcile_new.restype = ctypes.c_void_p
    lib.cohtb_reconcile_new.argtypes = [ctypes.c_uint32, ctypes.c_int]
    lib.cohtb_reconcile_free.argtypes = [ctypes.c_void_p]
    lib.cohtb_reconcile_apply.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64]
    lib.cohtb_reconcile_finish.argtypes = [ctypes.c_void_p]
    lib.cohtb_reconcile_lines.restype = ctypes.c_uint64
    lib.cohtb_reconcile_lines.argtypes = [ctypes.c_void_p]
    lib.cohtb_reconcile_fields.restype = ctypes.c_uint32
    lib.cohtb_reconcile_read.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 4
    lib.cohtb_reconcile_totals.argtypes = [ctypes.c_void_p] * 3
    if lib.cohtb_reconcile_fields() != (len(STATS) << 8 | len(CHECKS)):
        raise CohtbError(f"{LIBRARY}: per-line fields differ from the package's LineStats and LineCheck "
                         "(rebuild: make setup)")
    return lib


def reconcile(recs: np.ndarray, sockets: int, dirty_up: bool = False) -> Reconciler:
    """cohtb.analysis.reconcile.reconcile, compiled."""
    lib = _functions(library())
    handle = lib.cohtb_reconcile_new(sockets, int(dirty_up))
    if not handle:
        raise CohtbError("out of memory starting the compiled reconciliation")
    try:
        recs = np.ascontiguousarray(recs, dtype=RECORD)
        failed = lib.cohtb_reconcile_apply(handle, recs.ctypes.data, len(recs)) or lib.cohtb_reconcile_finish(handle)
        if failed:
            raise CohtbError(f"the compiled reconciliation stopped: {FAILURES.get(failed, failed)}")
        n = lib.cohtb_reconcile_lines(handle)
        lines = np.zeros(n, np.uint64)
        stats = np.zeros((n, len(STATS)), np.uint64)
        has_check = np.zeros(n, np.uint8)
        checks = np.zeros((n, len(CHECKS)), np.uint64)
        lib.cohtb_reconcile_read(handle, *(a.ctypes.data for a in (lines, stats, has_check, checks)))
        matrix = np.zeros((sockets, sockets), np.uint64)
        kinds = np.zeros(len(Reconciler(sockets).ideal.kinds), np.uint64)
        lib.cohtb_reconcile_totals(handle, matrix.ctypes.data, kinds.ctypes.data)
    finally:
        lib.cohtb_reconcile_free(handle)
    out = Reconciler(sockets, dirty_up)
    line_list = lines.tolist()
    out.ideal.stats = {line: LineStats(*row) for line, row in zip(line_list, stats.tolist())}
    out.ideal.matrix = matrix.tolist()
    out.ideal.kinds = kinds.tolist()
    out.lines = {line: LineCheck(*row) for line, row, has in zip(line_list, checks.tolist(), has_check.tolist()) if has}
    out.finish()   # nothing is left to settle: it only marks the reconciler finished
    return out
