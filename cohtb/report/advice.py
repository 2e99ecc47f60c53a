"""Layout advice as text: the fields on the hottest lines, classified (cohtb/analysis/advice.py), and the
false-sharing pairs; of a simulated run (misses per operation) or of a real machine's perf c2c report (counts)."""

from __future__ import annotations

from cohtb.analysis.advice import FalseSharing, FieldTraffic
from cohtb.tables import Table


def _rate(n: int, ops: float | None) -> str:
    return f"{n / ops:.3f}" if ops else f"{n:,}"


def fields_table(what: str, fields: list[FieldTraffic], ops: float | None = None) -> Table:
    """ops: the run's operations, for rates per operation; None (a perf c2c report): counts."""
    unit = "/op" if ops else ""
    body = [[f"{f.object}.{f.field}", f"{f.address - f.offset:#x}+{f.offset:#x}", str(f.size), f.kind,
             _rate(f.loads, ops), _rate(f.stores, ops), str(f.load_cores), str(f.store_cores)] for f in fields]
    return Table(f"Fields on the hottest lines, by the misses their bytes took: {what}",
                 ["field", "line+offset", "bytes", "class", f"load misses{unit}", f"store misses{unit}",
                  "cores loading", "cores storing"], body,
                 "Simulated: a miss is the line's event when its bytes came from another cache, given to the "
                 "instruction that waited for it and the bytes it accessed (docs/gem5.md, 'The profile of the "
                 "window'). From perf c2c: loads are the HITMs sampled on the field's bytes, stores an estimate. "
                 "Classes: cohtb/analysis/advice.py.")


def pairs_text(pairs: list[FalseSharing], ops: float | None = None) -> str:
    if not pairs:
        return "False sharing: none (no field only read on a line that another field's stores take away)."
    unit = "read misses/op" if ops else "read misses"
    return "False sharing (a written field beside a field only read, on one line):\n" + \
        "\n".join(f"  line {p.written.address - p.written.offset:#x}: {p.written.object}.{p.written.field} "
                  f"({p.written.kind}) takes the line from {p.read.object}.{p.read.field} ({p.read.kind}): "
                  f"{_rate(p.read.loads, ops)} {unit}" for p in pairs)
