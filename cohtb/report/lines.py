"""The per-line table of one analysis: the lines with the most ping-pong, each with its exact counts and its
pairing with gem5's evidence (what `cohtb replay` prints, for a run or a bare event file)."""

from __future__ import annotations

from cohtb.analysis.analyse import Analysis
from cohtb.report.tables import Table


def line_table(doc: Analysis, n: int) -> Table:
    busy = [line for line, st in doc.ideal.lines.items() if st.pingpong]
    lines = sorted(busy, key=lambda line: -doc.ideal.lines[line].pingpong)[:n]
    rows = []
    for line in lines:
        st = doc.ideal.lines[line]
        chk = doc.gem5.lines.get(line) if doc.gem5.evidence else None
        rows.append([f"{line:#x}", f"{st.transfers:,}", f"{st.crossSocketTransfers:,}", f"{st.dirty_reads:,}",
                     f"{st.invalidations:,}", *((f"{chk.matched:,}", f"{chk.unexplained:,}", f"{chk.explained:,}") if chk else
                       ("-", "-", "-") if not doc.gem5.evidence else ("0", "0", "0"))])
    return Table(f"Lines with the most transfers and dirty reads: {doc.run}",
                 ["line", "transfers", "cross-socket", "dirty reads", "invalidations", "matched in gem5", "unexplained",
                  "explained"], rows,
                 "Exact counts of the unbounded model; matched, unexplained and explained: docs/gem5.md, 'Reconciling'.")
