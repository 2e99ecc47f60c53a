"""`cohtb report`: per-run and per-matrix results as Markdown, JSON, PNG plots and one HTML page."""

from __future__ import annotations

import base64
import html
import json
import multiprocessing
import os
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from cohtb.analysis import profile as run_profile
from cohtb.analysis.advice import fields_on_hot_lines
from cohtb.analysis.layout_proposal import proposals
from cohtb.report import figure_cache, plots
from cohtb.report import advice as advice_report
from cohtb.report import profile as profile_report
from cohtb.atomic import atomic_dir
from cohtb.analysis.compare import TURNS_TITLE
from cohtb.analysis.metrics import RunMetrics
from cohtb.analysis.reconcile import LineCheck
from cohtb.errors import CohtbError
from cohtb.tables import Table, num, slug

CSS = """body{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:13px}td,th{border:1px solid #ccc;padding:3px 8px}
td:not(:first-child){text-align:right}th{background:#f3f3f3}img{max-width:100%;border:1px solid #eee;margin:.5em 0}
.note{color:#555;font-size:13px}h2{border-bottom:1px solid #ddd;padding-bottom:.2em}
.subtitle{color:#444;font-size:17px;margin-top:-.4em}figure{margin:1em 0 2em}figcaption{color:#444;font-size:14px}
a.csv{font-size:12px;font-weight:normal;margin-left:.5em}details{margin:.5em 0 1em}
summary{cursor:pointer;font-weight:600;font-size:15px}"""
LONG_TABLE = 20   # rows: a longer table is folded on the page (<details>); tables/ has every table whole
TALL_FIGURE = 1800   # px: a taller figure (socket matrices of many runs) is folded too, under its caption


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
                  "x-socket/op", "dirty reads (HITM)/op", "invalidations/op", "locked updates"],
                 rows, "Throughput is operations per simulated µs of the measured part: the workload's window (timed runs: a "
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
        rows.append([name, ", ".join(f"{m.analysis.address(l):#x}" for l in f["lines"]), ", ".join(s.split(".", 1)[-1] for s in f["shares_line_with"]) or "-",
                     num(f["transfers"]), num(f["crossSocketTransfers"]), num(f["dirtyReads"]), num(f["invalidations"])])
    return Table(f"Per field: {m.label}", ["field", "line address", "shares its line with", "transfers/op", "x-socket/op",
                                            "dirty reads (HITM)/op", "invalidations/op"], rows,
                 "Coherence is per line: fields on one line share its numbers (that is the false sharing).")


def hot_table(m: RunMetrics) -> Table:
    rows = []
    for h in m.hot:
        g = LineCheck(**h["gem5"])
        named = [f.split(".", 1)[-1] for f in h["fields"]] or [f"kernel {s}" for s in h.get("symbols", [])]
        named = named if len(named) <= 4 else [*named[:3], f"{len(named) - 3} more"]
        rows.append([f"{m.analysis.address(h['line']):#x}", f"{h['line']:#x}", ", ".join(named) or "-",
                     f"{h['count']:,} (±{h['error']:,})", f"{h['transfers']:,}", f"{h['dirty_reads']:,}",
                     f"{h['remote_share'] * 100:.0f}%", f"{g.matched:,}", f"{g.transfersMonitorOnly + g.dirtyReadsMonitorOnly:,}",
                     f"{g.transfersGem5Only + g.dirtyReadsGem5Only:,}", f"{g.explained:,}"])
    return Table(f"Hottest lines (shared cache lines, as perf c2c shows them): {m.label}",
                 ["address", "line", "fields", "monitor count (Space-Saving)", "transfers", "dirty reads (HITM)", "cross-socket",
                  "matched in gem5", "monitor only", "gem5 only", "explained"], rows,
                 "Address: the line's first physical byte (perf c2c's Cacheline); line: the monitor's line number "
                 "(address / line size). Fields: the layout map's, or for a full-system run the kernel globals on the line (vmlinux symbols; slab "
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
                     f"{c['ownerBeforeTrace']:,} / {c['requesterAfterTrace']:,} / {c['writebackForwards']:,} / "
                     f"{c.get('dirtyHandedUp', 0):,}",
                     f"{c['cleanForwards']:,}",
                     f"{c['contended_lines'] - c['lines_outside_tolerance']} of {c['contended_lines']}",
                     c["verdict"].split(":")[0]])
    return Table("Checks against gem5: every transfer and dirty read (HITM) paired with gem5's evidence",
                 ["run", "transfers matched", "monitor only", "gem5 only", "dirty reads (HITM) matched", "monitor only",
                  "gem5 only", "explained: owner before / requester after the trace / writeback forward / dirty handed up",
                  "clean forwards",
                  "contended lines within 1%", "verdict"], rows,
                 "A transfer from O is matched by gem5's Fwd_GETX or Inv at O, a dirty read from O by Fwd_GETS at O "
                 "(docs/gem5.md, 'Reconciling'). Explained remainders: forwards by a core that wrote the line before "
                 "tracing began, forwards whose requester completed after it ended, forwards from a writeback buffer "
                 "whose EVICT completed first, and dirty reads served by a core that got the line unique and dirty with a "
                 "read (CHI passes a written-back line's dirtiness up) and has not stored into it since (in runs ingested before "
                 "chi_stores_after_read_ud, one that stored since too), which the counting rules make no dirty owner. "
                 "Clean forwards (at a core in E, "
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


@dataclass
class Details:
    """Tables folded on the HTML page under one line (<details>): per-run tables, which would otherwise make up
    most of the page. `csv_only` tables are left off the page and report.md (tables/ and report.json have them):
    the per-field tables of runs with no traffic on any field, all zeros."""

    summary: str
    tables: list[Table]
    csv_only: list[Table] = field(default_factory=list)


def has_traffic(m: RunMetrics) -> bool:
    return any(f.get("transfers", 0) or f.get("dirtyReads", 0) or f.get("invalidations", 0) for f in m.fields.values())


def fold_pairs(tables: list[Table]) -> list[Table | Details]:
    """The comparisons with each pair's own tables (every count, "base -> new", its attribution to lines,
    "Attribution: base -> new", and its hottest line's turns) folded together under the pair's name: the tables
    across configurations above them say what changed, these say where, for whoever opens them."""
    out: list[Table | Details] = []
    for t in tables:
        pair = t.title.removeprefix("Attribution: ").removeprefix(f"{TURNS_TITLE}: ")
        if " -> " not in pair:
            out.append(t)
        elif out and isinstance(out[-1], Details) and out[-1].summary.startswith(pair + ":"):
            out[-1].tables.append(t)
        else:
            out.append(Details(f"{pair}: every count, the attribution to lines and fields, and the hottest line's "
                               "turns", [t]))
    return out


def fields_details(ms: list[RunMetrics]) -> Details:
    shown = [field_table(m) for m in ms if has_traffic(m)]
    zeros = [field_table(m) for m in ms if not has_traffic(m)]
    note = (f"; {len(zeros)} run{'s' if len(zeros) > 1 else ''} with no traffic on any field: only in tables/"
            if zeros else "")
    return Details(f"Per field, per run: {len(shown)} table{'s' if len(shown) != 1 else ''}{note}", shown, zeros)


FIGURES = {"throughput": plots.throughput, "pingpong": plots.pingpong, "intervals": plots.intervals,
           "monitor": plots.monitor, "scaling": plots.scaling, "fields": plots.fields, "matrices": plots.matrices,
           "checks": plots.checks}


def time_and_layout(ms: list[RunMetrics]) -> list[Details]:
    """Per run with a profile: where its window's time went, the fields on its hot lines and the layout proposed
    for each object there (cohtb advise's, without groups)."""
    out = []
    for m in ms:
        rows = run_profile.of(m.run)
        if rows is None:
            continue
        tables = [profile_report.table(m.run, rows)]
        doc = m.run.profile()
        if doc.get("lines") and any(rec.paddr is not None for rec in m.run.manifest.layout):
            try:
                fields = fields_on_hot_lines(m.run)
            except CohtbError:   # the hot lines hold none of the layout's objects: nothing to advise on
                fields = []
            if fields:
                tables.append(advice_report.fields_table(profile_report.describe(m.run), fields, m.run.region_ops))
                tables += [advice_report.proposal_table(m.run.id, p) for p in proposals(m.run)]
        out.append(Details(f"{m.run.id}: {len(tables)} table{'s' if len(tables) > 1 else ''}", tables))
    return out


_DRAWING: list[RunMetrics] = []   # in a drawing process: the runs it draws (set by its initializer, not pickled)


def _drawing(ms: list[RunMetrics]) -> None:
    global _DRAWING
    _DRAWING = ms


def _draw_one(name: str, d: Path) -> Path | None:
    return FIGURES[name](_DRAWING, d / f"{name}.png")


def draw_figures(ms: list[RunMetrics], d: Path) -> dict[str, Path | None]:
    """Every figure of the report into d, by name (None: nothing to draw): d/<name>.png. On Linux, from a process
    with no other thread, the figures are drawn side by side on the cores it may use (each is independent, and
    drawing is most of a report's time), each in a forked process that has the runs in its memory already (a
    fork's initializer arguments are inherited, not pickled); elsewhere one after another."""
    workers = min(len(FIGURES), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1)
    if workers < 2 or sys.platform != "linux" or threading.active_count() > 1:
        return {name: draw(ms, d / f"{name}.png") for name, draw in FIGURES.items()}
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"), initializer=_drawing,
                             initargs=(ms,)) as pool:
        futures = {name: pool.submit(_draw_one, name, d) for name in FIGURES}
        return {name: f.result() for name, f in futures.items()}


def write(ms: list[RunMetrics], out: Path, title: str = "cohtb report", extra_tables: list[Table] | None = None,
          subtitle: str | None = None) -> Path:
    """Writes report.md, report.json, report.html, plots/ and tables/ (every table as CSV) into out, atomically
    (a temporary directory renamed)."""
    out = Path(out)
    with atomic_dir(out) as tmp:
        d = tmp / "plots"
        d.mkdir()
        drawn, _ = figure_cache.drawn(ms, d, draw_figures)
        summary: list[Table | Figure] = [
            summary_table(ms),
            Figure("Throughput per configuration (mean of its repetitions, whisker: their range), one panel per "
                   "workload and machine size, each on its own scale; colour: policy (a full-system stat_file run: its "
                   "kernel), hatch: layout",
                   drawn["throughput"]),
            Figure("Ping-pong per operation per configuration (means of its repetitions): local and cross-socket "
                   "transfers, local and remote dirty reads (HITM)", drawn["pingpong"])]
        iv = drawn["intervals"]
        if iv:
            summary.append(Figure("Ops per interval over the window (timed runs): will-it-scale's per-interval total "
                                  "of all threads, the first repetition of each configuration, the arms of a declared "
                                  "comparison in one panel", iv))
        mon = drawn["monitor"]
        if mon:
            summary.append(Figure("The monitor live (runs launched with --live): transfers, cross-socket transfers, "
                                  "dirty reads (HITM) and invalidations per interval of simulated time", mon))
        sc = drawn["scaling"]
        if sc:
            summary.append(Figure("Scaling: throughput and transfers per operation against the number of sockets", sc))
        sections: list[tuple[str, list[Table | Figure]]] = [("Summary", summary)]
        if extra_tables:
            sections.append(("Comparisons", fold_pairs(extra_tables)))
        sections.append(("Fields", [Figure("Per object, transfers and dirty reads (HITM) per operation on each of its "
                                           "lines that had traffic (one bar per line), the first repetition of each "
                                           "configuration", drawn["fields"]), fields_details(ms)]))
        profiled = time_and_layout(ms)
        if profiled:
            sections.append(("Where the time went", profiled))
        sections.append(("Sockets", [Figure("Socket x socket transfers per operation, one colour scale for all runs, "
                                            "the first repetition of each configuration (at most "
                                            f"{plots.MATRIX_PANELS}: the figure says which are left out)",
                                            drawn["matrices"])]))
        sections.append(("Hot lines", [Details(f"Hottest lines, per run: {len(ms)} table{'s' if len(ms) > 1 else ''}",
                                               [hot_table(m) for m in ms])]))
        sections.append(("Checks", [check_table(ms), Figure("The monitor's transfers and dirty reads (HITM) against "
                                                            "gem5's evidence, per configuration (means of its checked "
                                                            "repetitions)", drawn["checks"]),
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


def _tables(blocks: list) -> list[Table]:
    """The tables of a section's blocks, those folded in a Details (shown or CSV only) included."""
    out: list[Table] = []
    for b in blocks:
        out += [b] if isinstance(b, Table) else [*b.tables, *b.csv_only] if isinstance(b, Details) else []
    return out


def _csv_names(sections: list[tuple[str, list]]) -> dict[int, str]:
    """tables/<slug>.csv for every table, unique within the report."""
    names: dict[int, str] = {}
    used: set[str] = set()
    for name, blocks in sections:
        for t in _tables(blocks):
            base = slug(t.title or name)
            s, k = base, 2
            while s in used:
                s, k = f"{base}-{k}", k + 1
            used.add(s)
            names[id(t)] = f"tables/{s}.csv"
    return names


def _table_html(t: Table, csv: str) -> str:
    """A table, folded under its title when long: the page stays a few screens tall, tables/ has it whole."""
    if len(t.rows) <= LONG_TABLE:
        return t.html(csv)
    return f"<details><summary>{html.escape(t.title)} ({len(t.rows)} rows)</summary>{t.html(csv)}</details>"


def render(into: Path, title: str, sections: list[tuple[str, list[Table | Figure | Details]]],
           figures: list[tuple[str, Path]], runs_json: list[dict], subtitle: str | None = None) -> None:
    """report.md, report.json, report.html (plots inlined) and tables/*.csv of these sections. A section holds
    tables, figures and folded tables in the order shown; `figures` (caption, path), if any, go into a last section
    of their own."""
    if figures:
        sections = [*sections, ("Figures", [Figure(t, p) for t, p in figures])]
    head, sub = split_title(title, subtitle)
    csvs = _csv_names(sections)
    (into / "tables").mkdir(exist_ok=True)
    for name, blocks in sections:
        for t in _tables(blocks):
            (into / csvs[id(t)]).write_text(t.csv())
    number = {id(f): i for i, f in enumerate((f for _, bs in sections for f in bs if isinstance(f, Figure)), 1)}
    about = "Every table is also a CSV file in tables/ beside this report (linked from its title)."

    md = [f"# {head}", ""] + ([f"_{sub}_", ""] if sub else []) + [about, ""]
    for name, blocks in sections:
        md += [f"## {name}", ""]
        for b in blocks:
            if isinstance(b, Table):
                md.append(b.markdown(csvs[id(b)]))
            elif isinstance(b, Details):
                md += [f"**{b.summary}**", ""] + [t.markdown(csvs[id(t)]) for t in b.tables]
            else:
                md.append(f"![Figure {number[id(b)]}](plots/{b.path.name})\n\n*Figure {number[id(b)]}: {b.caption}.*\n")
    (into / "report.md").write_text("\n".join(md))
    (into / "report.json").write_text(json.dumps(
        {"title": head, "subtitle": sub, "runs": runs_json,
         "tables": {t.title: {"header": t.header, "rows": t.rows, "csv": csvs[id(t)]}
                    for _, bs in sections for t in _tables(bs)}}, indent=1))

    body = [f"<h1>{html.escape(head)}</h1>"] + ([f"<p class='subtitle'>{html.escape(sub)}</p>"] if sub else [])
    body.append(f"<p class='note'>{html.escape(about)}</p>")
    for name, blocks in sections:
        body.append(f"<h2>{html.escape(name)}</h2>")
        for b in blocks:
            if isinstance(b, Table):
                body.append(_table_html(b, csvs[id(b)]))
            elif isinstance(b, Details):
                if b.tables:
                    body.append(f"<details><summary>{html.escape(b.summary)}</summary>"
                                f"{''.join(t.html(csvs[id(t)]) for t in b.tables)}</details>")
                else:
                    body.append(f"<p class='note'>{html.escape(b.summary)}</p>")
            else:
                png = b.path.read_bytes()
                data = base64.b64encode(png).decode()
                caption = f"Figure {number[id(b)]}: {b.caption}."
                fig = (f"<figure><img alt='{html.escape(caption)}' src='data:image/png;base64,{data}'>"
                       f"<figcaption>{html.escape(caption)}</figcaption></figure>")
                height = int.from_bytes(png[20:24], "big")    # the PNG header's height
                body.append(fig if height <= TALL_FIGURE else
                            f"<details><summary>{html.escape(caption)} ({height} px tall)</summary>{fig}</details>")
    page_title = f"{head} — {sub}" if sub else head
    (into / "report.html").write_text(f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(page_title)}"
                                      f"</title><style>{CSS}</style></head><body>{''.join(body)}</body></html>\n")
