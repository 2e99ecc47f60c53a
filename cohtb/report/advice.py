"""Layout advice as text: a run's fields on its hot lines, classified (cohtb/analysis/advice.py), and its
false-sharing pairs."""

from __future__ import annotations

from cohtb.analysis.advice import FalseSharing, FieldTraffic
from cohtb.report.profile import describe
from cohtb.run.runs import Run
from cohtb.tables import Table


def fields_table(run: Run, fields: list[FieldTraffic]) -> Table:
    ops = run.region_ops
    body = [[f"{f.object}.{f.field}", f"{f.address - f.offset:#x}+{f.offset:#x}", str(f.size), f.kind,
             f"{f.loads / ops:.3f}", f"{f.stores / ops:.3f}", str(f.load_cores), str(f.store_cores)] for f in fields]
    return Table(f"Fields on the hottest lines, by the misses their bytes took: {describe(run)}",
                 ["field", "line+offset", "bytes", "class", "load misses/op", "store misses/op", "cores loading",
                  "cores storing"], body,
                 "A miss: the line's event when its bytes came from another cache, given to the instruction that "
                 "waited for it and the bytes it accessed (docs/gem5.md, 'The profile of the window'). Classes: "
                 "cohtb/analysis/advice.py.")


def pairs_text(run: Run, pairs: list[FalseSharing]) -> str:
    if not pairs:
        return "False sharing: none (no field only read on a line that another field's stores take away)."
    ops = run.region_ops
    return "False sharing (a written field beside a field only read, on one line; the reads' misses per op):\n" + \
        "\n".join(f"  line {p.written.address - p.written.offset:#x}: {p.written.object}.{p.written.field} ({p.written.kind}) takes the line from "
                  f"{p.read.object}.{p.read.field} ({p.read.kind}): {p.read.loads / ops:.3f} read misses/op"
                  for p in pairs)
