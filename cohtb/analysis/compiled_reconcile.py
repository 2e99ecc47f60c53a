"""The reconciliation compiled (native/model/cohtb_reconcile.c): `Reconciler` over `IdealModel`, rule for rule, at
millions of events per second, so that the main job holds every bundled run against gem5's evidence in seconds.

`Reconciler` and `IdealModel` stay the specification: the compiled one is held to them in
tests/test_compiled_reconcile.py, never to the RTL. `reconcile` gives a finished `Reconciler` whose per-line
counts and checks, final line states, matrix and kind counts are the compiled ones, the same values in the same
order (the pairing's own working sets, emptied by the finish, stay empty)."""

from __future__ import annotations

import ctypes
from dataclasses import fields

import numpy as np

from cohtb.analysis.reconcile import LineCheck, Reconciler
from cohtb.contract import Kind
from cohtb.errors import CohtbError
from cohtb.monitor.compiled_model import LIBRARY, library
from cohtb.monitor.models import LineState, LineStats
from cohtb.trace.events import RECORD

STATS = [f.name for f in fields(LineStats)]    # the C side's per-line order (cohtb_reconcile.c: S_*, C_*)
CHECKS = [f.name for f in fields(LineCheck)]
NOT_IN = np.iinfo(np.uint64).max   # a line not in the dict (no check; a free state)
FAILURES = {-1: "out of memory", -2: "an event of an unknown kind or core, or a transfer from or to a socket past "
                                    "the header's"}


def _functions(lib: ctypes.CDLL) -> ctypes.CDLL:
    if not hasattr(lib, "cohtb_reconcile_new"):
        raise CohtbError(f"{LIBRARY}: built before the compiled reconciliation (rebuild: make setup)")
    lib.cohtb_reconcile_new.restype = ctypes.c_void_p
    lib.cohtb_reconcile_new.argtypes = [ctypes.c_uint32, ctypes.c_int]
    lib.cohtb_reconcile_free.argtypes = [ctypes.c_void_p]
    lib.cohtb_reconcile_apply.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint64]
    lib.cohtb_reconcile_finish.argtypes = [ctypes.c_void_p]
    lib.cohtb_reconcile_lines.restype = ctypes.c_uint64
    lib.cohtb_reconcile_lines.argtypes = [ctypes.c_void_p]
    lib.cohtb_reconcile_fields.restype = ctypes.c_uint32
    lib.cohtb_reconcile_read.argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * 6
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
        checks = np.zeros((n, len(CHECKS)), np.uint64)
        check_seq = np.zeros(n, np.uint64)
        states = np.zeros((n, 5), np.uint64)
        state_seq = np.zeros(n, np.uint64)
        lib.cohtb_reconcile_read(handle, *(a.ctypes.data for a in (lines, stats, checks, check_seq, states, state_seq)))
        matrix = np.zeros((sockets, sockets), np.uint64)
        kinds = np.zeros(len(Kind), np.uint64)   # IdealModel.kinds: one count per kind
        lib.cohtb_reconcile_totals(handle, matrix.ctypes.data, kinds.ctypes.data)
    finally:
        lib.cohtb_reconcile_free(handle)
    out = Reconciler(sockets, dirty_up)
    line_list = lines.tolist()
    out.ideal.stats = {line: LineStats(*row) for line, row in zip(line_list, stats.tolist())}
    out.ideal.matrix = matrix.tolist()
    out.ideal.kinds = kinds.tolist()
    checked = np.flatnonzero(check_seq != NOT_IN)
    out.lines = {line_list[i]: LineCheck(*checks[i].tolist()) for i in checked[np.argsort(check_seq[checked])]}
    tracked = np.flatnonzero(state_seq != NOT_IN)
    out.ideal.lines = {line_list[i]: LineState(bool(v), o, s, bool(d), h)
                       for i in tracked[np.argsort(state_seq[tracked])]
                       for v, o, s, d, h in [states[i].tolist()]}
    out.finish()   # nothing is left to settle: it only marks the reconciler finished
    return out
