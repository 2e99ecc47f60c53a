"""The per-line table of one analysis: the lines with the most ping-pong, each with its exact counts and its
pairing with gem5's evidence (what `cohtb replay` prints, for a run or a bare event file)."""

from __future__ import annotations

from cohtb.analysis.analyse import Analysis
from cohtb.tables import Table


def line_table(doc: Analysis, n: int) -> Table:
    busy = [line for line, st in doc.ideal.lines.items() if st.pingpong]
    lines = sorted(busy, key=lambda line: -doc.ideal.lines[line].pingpong)[:n]
    rows = []
    for line in lines:
        st = doc.ideal.lines[line]
        chk = doc.gem5.lines.get(line) if doc.gem5.evidence else None
        rows.append([f"{doc.address(line):#x}", f"{line:#x}", f"{st.transfers:,}", f"{st.crossSocketTransfers:,}",
                     f"{st.dirty_reads:,}", f"{st.invalidations:,}",
                     *((f"{chk.matched:,}", f"{chk.unexplained:,}", f"{chk.explained:,}") if chk else
                       ("-", "-", "-") if not doc.gem5.evidence else ("0", "0", "0"))])
    return Table(f"Lines with the most transfers and dirty reads (HITM), counted by the ideal model: {doc.run}",
                 ["address", "line", "transfers", "cross-socket", "HITM", "invalidations", "matched",
                  "unexplained", "explained"], rows,
                 "address: the line's first physical byte (perf c2c's 'Cacheline'); line: address / line size, the "
                 "monitor's line number. Counts: the unbounded ideal model, every line (the monitor RTL's totals "
                 "above come from its bounded line table and can be lower). HITM: a dirty read, a load that hit a "
                 "line Modified in another cache. matched, unexplained, explained (against gem5's own evidence): docs/gem5.md, 'Reconciling'.")
