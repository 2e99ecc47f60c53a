"""`cohtb report`: per-run and per-matrix results as Markdown, JSON, PNG plots and one HTML page."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

from cohtb.report import plots
from cohtb.atomic import atomic_dir
from cohtb.analysis.metrics import RunMetrics
from cohtb.analysis.reconcile import LineCheck
from cohtb.report.tables import Table, num

CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px}
td:not(:first-child){text-align:right}th{background:#f3f3f3}img{max-width:100%;border:1px solid #eee;margin:.5em 0}
.note{color:#555;font-size:13px}h2{border-bottom:1px solid #ddd;padding-bottom:.2em}"""


def summary_table(ms: list[RunMetrics]) -> Table:
    rows = []
    for m in ms:
        p = m.per_op
        ls = m.locked_share
        rows.append([m.label, str(m.run.manifest.workload.threads), num(m.throughput / 1e6, 3), num(p["transfers"]),
                     num(p["crossSocketTransfers"]), num(p["dirtyReads"]), num(p["invalidations"]),
                     "-" if ls is None else f"{ls * 100:.1f}%"])
    return Table("Throughput and ping-pong per operation",
                 ["run", "threads", "ops/sim µs", "transfers/op", "x-socket/op", "dirty reads/op", "invalidations/op", "locked ops"],
                 rows, "Operations are get+put pairs; throughput is per simulated second of the region of interest; "
                       "ping-pong counts come from the coherence monitor RTL replaying the run's coherence events.")


def field_table(m: RunMetrics) -> Table:
    rows = []
    for name, f in m.fields.items():
        if not f["lines"]:
            rows.append([name, "unmapped", "-", "-", "-", "-", "-"])
            continue
        rows.append([name, ", ".join(f"{l:#x}" for l in f["lines"]), ", ".join(s.split(".", 1)[-1] for s in f["shares_line_with"]) or "-",
                     num(f["transfers"]), num(f["crossSocketTransfers"]), num(f["dirtyReads"]), num(f["invalidations"])])
    return Table(f"Per field: {m.label}", ["field", "line", "shares its line with", "transfers/op", "x-socket/op",
                                            "dirty reads/op", "invalidations/op"], rows,
                 "Coherence is per line: fields on one line share its numbers (that is the false sharing).")


def hot_table(m: RunMetrics) -> Table:
    rows = []
    for h in m.hot:
        g = LineCheck(**h["gem5"])
        rows.append([f"{h['line']:#x}", ", ".join(f.split(".", 1)[-1] for f in h["fields"]) or "-",
                     f"{h['count']:,} (±{h['error']:,})", f"{h['transfers']:,}", f"{h['dirty_reads']:,}",
                     f"{h['remote_share'] * 100:.0f}%", f"{g.matched:,}", f"{g.transfersMonitorOnly + g.dirtyReadsMonitorOnly:,}",
                     f"{g.transfersGem5Only + g.dirtyReadsGem5Only:,}", f"{g.explained:,}"])
    return Table(f"Hottest lines (shared cache lines, as perf c2c shows them): {m.label}",
                 ["line", "fields", "monitor count (Space-Saving)", "transfers", "dirty reads (HITM)", "cross-socket",
                  "matched in gem5", "monitor only", "gem5 only", "explained"], rows,
                 "Monitor count: the hardware's Space-Saving table (count - error <= true <= count). "
                 "Transfers, dirty reads and cross-socket share: the unbounded model's exact counts for that line. "
                 "Matched, monitor only, gem5 only, explained: the line's pairing with gem5's evidence (docs/gem5.md).")


def check_table(ms: list[RunMetrics]) -> Table:
    rows = []
    for m in ms:
        c = m.check
        if c["verdict"].startswith("not checked"):
            rows.append([m.label, *["-"] * 9, "not checked (event format 1)" if c["event_format"] == 1 else "not checked"])
            continue
        rows.append([m.label, f"{c['transfersMatched']:,}", f"{c['transfersMonitorOnly']:,}", f"{c['transfersGem5Only']:,}",
                     f"{c['dirtyReadsMatched']:,}", f"{c['dirtyReadsMonitorOnly']:,}", f"{c['dirtyReadsGem5Only']:,}",
                     f"{c['ownerBeforeTrace']:,} / {c['requesterAfterTrace']:,}", f"{c['cleanForwards']:,}",
                     f"{c['contended_lines'] - c['lines_outside_tolerance']} of {c['contended_lines']}",
                     c["verdict"].split(":")[0]])
    return Table("Checks against gem5: every transfer and dirty read paired with gem5's evidence",
                 ["run", "transfers matched", "monitor only", "gem5 only", "dirty reads matched", "monitor only",
                  "gem5 only", "explained: owner before / requester after the trace", "clean forwards",
                  "contended lines within 1%", "verdict"], rows,
                 "A transfer from O is matched by gem5's Fwd_GETX or Inv at O, a dirty read from O by Fwd_GETS at O "
                 "(docs/gem5.md, 'Reconciling'). Explained remainders: forwards by a core that wrote the line before "
                 "tracing began, and forwards whose requester completed after it ended. Clean forwards (at a core in E, "
                 "which never wrote the line) are not transfers or dirty reads by the counting rules. The verdict holds "
                 "the unexplained remainder to 1% of the matched items, per run and per contended line (10 or more items). "
                 "Runs recorded as event format 1 (issue-time events, before the completion-time ingest) are not "
                 "checked: their order is the L1s' requests, not the L2's grants (docs/event-format.md, 'Version 1').")


def bounds_table(ms: list[RunMetrics]) -> Table:
    rows = []
    for m in ms:
        c = m.check
        rows.append([m.label, f"{c['ideal_transfers']:,}", f"{c['bounded_transfers']:,}", f"{c['missed_by_bounded']:,}",
                     f"{c['state_evictions']:,}", "yes" if c["saturated"] else "no", c["model_check"]])
    return Table("Checks of the hardware: bounded RTL against the ideal monitor",
                 ["run", "transfers (ideal)", "transfers (bounded RTL)", "missed by bounds", "state evictions",
                  "saturated", "RTL vs model"], rows,
                 "The ideal monitor applies the counting rules without bounds; the bounded RTL can only miss transfers, "
                 "by forgetting lines it had to evict. RTL vs model: the bit-exact model replayed beside it.")


def write(ms: list[RunMetrics], out: Path, title: str = "cohtb report", extra_tables: list[Table] | None = None) -> Path:
    """Writes report.md, report.json, report.html and plots/ into out, atomically (a temporary directory renamed)."""
    out = Path(out)
    with atomic_dir(out) as tmp:
        (tmp / "plots").mkdir()
        figures = [("Throughput", plots.throughput(ms, tmp / "plots" / "throughput.png")),
                   ("Ping-pong per operation", plots.pingpong(ms, tmp / "plots" / "pingpong.png")),
                   ("Per field", plots.fields(ms, tmp / "plots" / "fields.png")),
                   ("Socket x socket transfers", plots.matrices(ms, tmp / "plots" / "matrices.png"))]
        sc = plots.scaling(ms, tmp / "plots" / "scaling.png")
        if sc:
            figures.append(("Scaling", sc))
        figures.append(("Checks", plots.checks(ms, tmp / "plots" / "checks.png")))
        sections: list[tuple[str, list[Table]]] = [("Summary", [summary_table(ms)])]
        if extra_tables:
            sections.append(("Comparisons", extra_tables))
        sections.append(("Fields", [field_table(m) for m in ms]))
        sections.append(("Hot lines", [hot_table(m) for m in ms]))
        sections.append(("Checks", [check_table(ms), bounds_table(ms)]))
        render(tmp, title, sections, figures, [m.to_json() for m in ms])
    return out / "report.html"


def render(into: Path, title: str, sections: list[tuple[str, list[Table]]], figures: list[tuple[str, Path]],
           runs_json: list[dict]) -> None:
    """report.md, report.json and report.html (plots inlined) of these sections and figures."""
    md = [f"# {title}", ""]
    for name, tables in sections:
        md += [f"## {name}", ""] + [t.markdown() for t in tables]
        md += [f"![{t}](plots/{p.name})\n" for t, p in figures if t.split()[0] in name or name == "Summary" and t == "Throughput"]
    if figures:
        md += ["## Figures", ""] + [f"![{t}](plots/{p.name})\n" for t, p in figures]
    (into / "report.md").write_text("\n".join(md))
    (into / "report.json").write_text(json.dumps({"title": title, "runs": runs_json,
                                                  "tables": {t.title: {"header": t.header, "rows": t.rows}
                                                             for _, ts in sections for t in ts}}, indent=1))
    body = [f"<h1>{html.escape(title)}</h1>"]
    for name, tables in sections:
        body.append(f"<h2>{html.escape(name)}</h2>")
        body += [t.html() for t in tables]
    if figures:
        body.append("<h2>Figures</h2>")
    for t, p in figures:
        data = base64.b64encode(p.read_bytes()).decode()
        body.append(f"<h3>{html.escape(t)}</h3><img alt='{html.escape(t)}' src='data:image/png;base64,{data}'>")
    (into / "report.html").write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
                                      f"<style>{CSS}</style></head><body>{''.join(body)}</body></html>\n")
