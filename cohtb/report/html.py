"""`cohtb report`: per-run and per-matrix results as Markdown, JSON, PNG plots and one HTML page."""

from __future__ import annotations

import base64
import html
import json
from dataclasses import dataclass
from pathlib import Path

from cohtb.report import plots
from cohtb.atomic import atomic_dir
from cohtb.analysis.metrics import RunMetrics
from cohtb.analysis.reconcile import LineCheck
from cohtb.report.tables import Table, num, slug

CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px}
td:not(:first-child){text-align:right}th{background:#f3f3f3}img{max-width:100%;border:1px solid #eee;margin:.5em 0}
.note{color:#555;font-size:13px}h2{border-bottom:1px solid #ddd;padding-bottom:.2em}
.subtitle{color:#444;font-size:17px;margin-top:-.4em}figure{margin:1em 0 2em}figcaption{color:#444;font-size:14px}
a.csv{font-size:12px;font-weight:normal;margin-left:.5em}"""


def summary_table(ms: list[RunMetrics]) -> Table:
    rows = []
    for m in ms:
        p = m.per_op
        ls = m.locked_share
        f = m.fairness
        rows.append([m.label, str(m.run.manifest.workload.threads), num(m.throughput / 1e6, 3),
                     f"{f.thread_min:,}-{f.thread_max:,}" if f else "-", f"{f.ratio:.2f}" if f else "-",
                     num(p["transfers"]), num(p["crossSocketTransfers"]), num(p["dirtyReads"]), num(p["invalidations"]),
                     "-" if ls is None else f"{ls * 100:.1f}%"])
    return Table("Throughput, fairness and ping-pong per operation",
                 ["run", "threads", "ops/sim µs", "ops per thread (min-max)", "fairness (min/max)", "transfers/op",
                  "x-socket/op", "dirty reads/op", "invalidations/op", "locked updates"],
                 rows, "Throughput is per simulated second of the measured part: the workload's window (timed runs: a "
                       "warm-up, then a window in which every thread runs), or the region of interest (fixed-work runs). "
                       "Fairness is the least productive thread's ops over the most productive's. Ping-pong counts come "
                       "from the coherence monitor RTL replaying the run's coherence events. Locked updates: the share "
                       "of lockref gets and puts that took the spinlock.")


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
        named = [f.split(".", 1)[-1] for f in h["fields"]] or [f"kernel {s}" for s in h.get("symbols", [])]
        named = named if len(named) <= 4 else [*named[:3], f"{len(named) - 3} more"]
        rows.append([f"{h['line']:#x}", ", ".join(named) or "-",
                     f"{h['count']:,} (±{h['error']:,})", f"{h['transfers']:,}", f"{h['dirty_reads']:,}",
                     f"{h['remote_share'] * 100:.0f}%", f"{g.matched:,}", f"{g.transfersMonitorOnly + g.dirtyReadsMonitorOnly:,}",
                     f"{g.transfersGem5Only + g.dirtyReadsGem5Only:,}", f"{g.explained:,}"])
    return Table(f"Hottest lines (shared cache lines, as perf c2c shows them): {m.label}",
                 ["line", "fields", "monitor count (Space-Saving)", "transfers", "dirty reads (HITM)", "cross-socket",
                  "matched in gem5", "monitor only", "gem5 only", "explained"], rows,
                 "Fields: the layout map's, or for a full-system run the kernel globals on the line (vmlinux symbols; slab "
                 "and per-CPU lines have none). Monitor count: the hardware's Space-Saving table (count - error <= true <= count). "
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
                     f"{c['ownerBeforeTrace']:,} / {c['requesterAfterTrace']:,} / {c['writebackForwards']:,}",
                     f"{c['cleanForwards']:,}",
                     f"{c['contended_lines'] - c['lines_outside_tolerance']} of {c['contended_lines']}",
                     c["verdict"].split(":")[0]])
    return Table("Checks against gem5: every transfer and dirty read paired with gem5's evidence",
                 ["run", "transfers matched", "monitor only", "gem5 only", "dirty reads matched", "monitor only",
                  "gem5 only", "explained: owner before / requester after the trace / writeback forward", "clean forwards",
                  "contended lines within 1%", "verdict"], rows,
                 "A transfer from O is matched by gem5's Fwd_GETX or Inv at O, a dirty read from O by Fwd_GETS at O "
                 "(docs/gem5.md, 'Reconciling'). Explained remainders: forwards by a core that wrote the line before "
                 "tracing began, forwards whose requester completed after it ended, and forwards from a writeback buffer "
                 "whose EVICT completed first. Clean forwards (at a core in E, "
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


@dataclass
class Figure:
    """A plot in a section of the report, with its caption."""

    caption: str
    path: Path


def write(ms: list[RunMetrics], out: Path, title: str = "cohtb report", extra_tables: list[Table] | None = None,
          subtitle: str | None = None) -> Path:
    """Writes report.md, report.json, report.html, plots/ and tables/ (every table as CSV) into out, atomically
    (a temporary directory renamed)."""
    out = Path(out)
    with atomic_dir(out) as tmp:
        d = tmp / "plots"
        d.mkdir()
        summary: list[Table | Figure] = [
            summary_table(ms),
            Figure("Throughput by machine size; colour: policy, hatch: layout", plots.throughput(ms, d / "throughput.png")),
            Figure("Ping-pong per operation: local and cross-socket transfers, local and remote dirty reads",
                   plots.pingpong(ms, d / "pingpong.png"))]
        iv = plots.intervals(ms, d / "intervals.png")
        if iv:
            summary.append(Figure("Ops per interval over the window (timed runs): will-it-scale's per-interval total, "
                                  "with the least and most productive thread", iv))
        mon = plots.monitor(ms, d / "monitor.png")
        if mon:
            summary.append(Figure("The monitor live (runs launched with --live): transfers, cross-socket transfers, "
                                  "dirty reads and invalidations per interval of simulated time", mon))
        sc = plots.scaling(ms, d / "scaling.png")
        if sc:
            summary.append(Figure("Scaling: throughput and transfers per operation against the number of sockets", sc))
        sections: list[tuple[str, list[Table | Figure]]] = [("Summary", summary)]
        if extra_tables:
            sections.append(("Comparisons", extra_tables))
        sections.append(("Fields", [Figure("Ping-pong per operation on each line holding fields (one bar per line)",
                                           plots.fields(ms, d / "fields.png")), *(field_table(m) for m in ms)]))
        sections.append(("Sockets", [Figure("Socket x socket transfers per operation, one colour scale for all runs",
                                            plots.matrices(ms, d / "matrices.png"))]))
        sections.append(("Hot lines", [hot_table(m) for m in ms]))
        sections.append(("Checks", [check_table(ms), Figure("The monitor's transfers and dirty reads against gem5's "
                                                            "evidence", plots.checks(ms, d / "checks.png")),
                                    bounds_table(ms)]))
        render(tmp, title, sections, [], [m.to_json() for m in ms], subtitle=subtitle)
    return out / "report.html"


def split_title(title: str, subtitle: str | None = None) -> tuple[str, str | None]:
    """The heading and the line under it. Without a subtitle, a title's trailing parenthesis becomes the
    subtitle: "cohtb: X (bundled runs (reference-runs/))" -> ("cohtb: X", "bundled runs (reference-runs/)"),
    not a heading with doubled parentheses."""
    if subtitle is not None or not title.endswith(")"):
        return title, subtitle
    depth = 0
    for i in range(len(title) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(title[i], 0)
        if depth == 0:
            head, inner = title[:i].rstrip(), title[i + 1:-1].strip()
            return (head, inner) if head and inner else (title, None)
    return title, None


def _csv_names(sections: list[tuple[str, list]]) -> dict[int, str]:
    """tables/<slug>.csv for every table, unique within the report."""
    names: dict[int, str] = {}
    used: set[str] = set()
    for name, blocks in sections:
        for t in blocks:
            if isinstance(t, Table):
                base = slug(t.title or name)
                s, k = base, 2
                while s in used:
                    s, k = f"{base}-{k}", k + 1
                used.add(s)
                names[id(t)] = f"tables/{s}.csv"
    return names


def render(into: Path, title: str, sections: list[tuple[str, list[Table | Figure]]], figures: list[tuple[str, Path]],
           runs_json: list[dict], subtitle: str | None = None) -> None:
    """report.md, report.json, report.html (plots inlined) and tables/*.csv of these sections. A section holds
    tables and figures in the order shown; `figures` (caption, path), if any, go into a last section of their own."""
    if figures:
        sections = [*sections, ("Figures", [Figure(t, p) for t, p in figures])]
    head, sub = split_title(title, subtitle)
    csvs = _csv_names(sections)
    (into / "tables").mkdir(exist_ok=True)
    for name, blocks in sections:
        for t in blocks:
            if isinstance(t, Table):
                (into / csvs[id(t)]).write_text(t.csv())
    number = {id(f): i for i, f in enumerate((f for _, bs in sections for f in bs if isinstance(f, Figure)), 1)}
    about = "Every table is also a CSV file in tables/ beside this report (linked from its title)."

    md = [f"# {head}", ""] + ([f"_{sub}_", ""] if sub else []) + [about, ""]
    for name, blocks in sections:
        md += [f"## {name}", ""]
        for b in blocks:
            md.append(b.markdown(csvs[id(b)]) if isinstance(b, Table) else
                      f"![Figure {number[id(b)]}](plots/{b.path.name})\n\n*Figure {number[id(b)]}: {b.caption}.*\n")
    (into / "report.md").write_text("\n".join(md))
    (into / "report.json").write_text(json.dumps(
        {"title": head, "subtitle": sub, "runs": runs_json,
         "tables": {t.title: {"header": t.header, "rows": t.rows, "csv": csvs[id(t)]}
                    for _, bs in sections for t in bs if isinstance(t, Table)}}, indent=1))

    body = [f"<h1>{html.escape(head)}</h1>"] + ([f"<p class='subtitle'>{html.escape(sub)}</p>"] if sub else [])
    body.append(f"<p class='note'>{html.escape(about)}</p>")
    for name, blocks in sections:
        body.append(f"<h2>{html.escape(name)}</h2>")
        for b in blocks:
            if isinstance(b, Table):
                body.append(b.html(csvs[id(b)]))
            else:
                data = base64.b64encode(b.path.read_bytes()).decode()
                caption = f"Figure {number[id(b)]}: {b.caption}."
                body.append(f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,{data}'>"
                            f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    page_title = f"{head} — {sub}" if sub else head
    (into / "report.html").write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(page_title)}"
                                      f"</title><style>{CSS}</style></head><body>{''.join(body)}</body></html>\n")
