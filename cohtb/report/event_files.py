"""`cohtb report` of bare event files (a trace from any gem5 configuration, ingested with a socket map): what the
monitor counted, the hottest lines and the check against gem5's evidence; no fields and no throughput, since
no manifest says what ran or for how long."""

from __future__ import annotations

import json
from pathlib import Path

from cohtb.analysis.analyse import Analysis
from cohtb.atomic import atomic_dir
from cohtb.report.html import render
from cohtb.report.lines import line_table
from cohtb.tables import Table


def counters_table(docs: list[Analysis]) -> Table:
    rows = []
    for d in docs:
        g, c = d.rtl.totals, d.gem5.totals
        rows.append([d.run, d.variant, f"{d.replay.events:,}", f"{g['transfers']:,}", f"{g['crossSocketTransfers']:,}",
                     f"{d.rtl.dirty_reads:,}", f"{g['invalidations']:,}",
                     *((f"{c.matched:,}", f"{c.unexplained:,}", f"{c.explained:,}") if d.gem5.evidence else ("-",) * 3),
                     d.gem5.verdict])
    return Table("Counters (monitor RTL) and the check against gem5",
                 ["event file", "monitor", "events", "transfers", "cross-socket", "dirty reads (HITM)", "invalidations",
                  "matched in gem5", "unexplained", "explained", "verdict"], rows,
                 "The monitor variant is sized for the file's cores and sockets; matched/unexplained/explained: "
                 "docs/gem5.md, 'Reconciling'.")


def matrix_table(d: Analysis) -> Table:
    m = d.ideal.matrix          # the file's own number of sockets (the monitor's matrix may be larger)
    return Table(f"Socket x socket transfers (from row to column): {d.run}", ["from \\ to", *map(str, range(len(m)))],
                 [[str(i), *(f"{v:,}" for v in row)] for i, row in enumerate(m)])


def write(docs: list[Analysis], out: Path, lines: int = 16) -> Path:
    with atomic_dir(Path(out)) as tmp:
        sections = [("Summary", [counters_table(docs)]),
                    ("Hot lines", [line_table(d, lines) for d in docs]),
                    ("Sockets", [matrix_table(d) for d in docs])]
        render(tmp, "cohtb report of event files", sections, [],
               [json.loads(d.model_dump_json(by_alias=True)) for d in docs])
    return Path(out) / "report.html"
