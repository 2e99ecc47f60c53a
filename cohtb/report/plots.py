"""Report figures (PNG): throughput, ping-pong per operation, per-line traffic, socket matrices, scaling, ops per
interval and the checks. Each `draw_*` function returns the matplotlib figure it drew (for tests to look at); the
plain function of the same name draws it into one file.

Every figure orders the runs the same way, by machine size (sockets x cores per socket), then policy, layout and
intruder; colours, hatches and line styles come from cohtb/report/palette.py. Figures are at most WIDTH wide, the
HTML page's column, so the page shows them at their own size (their text as drawn, not shrunk): many runs make a
figure taller (more rows of panels), never wider."""

from __future__ import annotations

import dataclasses
import math
import re
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import ListedColormap, LogNorm  # noqa: E402
from matplotlib.patches import Patch, Rectangle  # noqa: E402
from matplotlib.transforms import ScaledTranslation  # noqa: E402

from cohtb.analysis.metrics import FIELD_COUNTS, RunMetrics, extra_text, per_op  # noqa: E402
from cohtb.analysis.steady import series  # noqa: E402
from cohtb.experiments.judging import declared_arms  # noqa: E402
from cohtb.report.palette import (EDGE, LAYOUT_ORDER, POLICY_ORDER, hatch_colour, is_kernels, layout_hatch,  # noqa: E402
                                  layout_line, spec_colour)
from cohtb.run.kernels import DENTRY_68, DENTRY_611, DENTRY_HYBRID184, recorded_dentry  # noqa: E402
from cohtb.tables import count  # noqa: E402

DPI = 110
WIDTH = 10.5          # inches: 1155 px at DPI, inside the HTML page's 1168 px column (html.CSS)
ROW_HEIGHT = 2.7      # one row of bar panels, its rotated run labels included
ROW_SLOTS = 26        # bar widths in one row of panels; a panel also takes PANEL_PAD for its own y axis
PANEL_PAD = 2.0
# The lines of one object in the fields figure, the ping-pong parts and the checks' parts: each a meaning of its
# own, so each at least 25 (CIELAB) from every policy's and kernel's colour, from the seed figures' inks and from
# each other (tests/test_plots.py); a row of the fields figure never holds more kinds of line than these.
LINE_COLOURS = ("#99ffff", "#eeaa66", "#6699ff", "#aa6666", "#aadd55", "#ddff22", "#778855", "#225533")
MARKERS = ("o", "s", "^", "D")   # the configurations sharing a panel of the intervals figure
HITM = "dirty reads (HITM)"      # what perf c2c calls them


def _save(fig, path: Path) -> Path:
    if fig.get_layout_engine() is None:     # figures drawn here use constrained layout already
        fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _rank(order: tuple[str, ...], v: str) -> tuple[int, str]:
    return (order.index(v), "") if v in order else (len(order), v)


def _natural(label: str) -> list:
    """A label's sort key with its numbers as numbers: "offset 8" before "offset 16"."""
    return [int(w) if w.isdigit() else w for w in re.split(r"(\d+)", label)]


def ordered(ms: list[RunMetrics]) -> list[RunMetrics]:
    """The runs by machine size, then policy, layout and intruder (the order of every figure)."""
    return sorted(ms, key=lambda m: (m.spec.sockets, m.spec.cores_per_socket, _rank(POLICY_ORDER, m.spec.policy),
                                     _rank(LAYOUT_ORDER, m.spec.layout), m.spec.intruder_period_us,
                                     _natural(m.label)))


def size_name(m: RunMetrics) -> str:
    n = m.spec.sockets
    return f"{count(n, 'socket')} x {count(m.spec.cores_per_socket, 'core')}"


def panel_name(m: RunMetrics) -> str:
    workload = f"{m.spec.workload} (full system)" if m.spec.kernel else m.spec.workload
    return f"{workload}, {size_name(m)}"


def panel_groups(ms: list[RunMetrics]) -> list[tuple[str, list[RunMetrics]]]:
    """The runs in order, grouped by workload and machine size: a panel's runs do the same operation on the same
    machine, so they share a scale; runs of different workloads can differ by orders of magnitude."""
    groups: dict[str, list[RunMetrics]] = {}
    for m in ordered(ms):
        groups.setdefault(panel_name(m), []).append(m)
    return list(groups.items())


def short_label(m: RunMetrics) -> str:
    """The run's label (metrics.run_label, unique in a report) without what its panel's title says: the workload
    and the machine size."""
    words = m.label.replace(f"{m.spec.sockets}x{m.spec.cores_per_socket}", "").split()
    if words and words[0] in (m.spec.workload, "fs"):
        words = words[1:]
    return " ".join(words).replace(" ,", ",").strip(" ,") or m.label


def config_key(m: RunMetrics) -> str:
    """What a run's repetitions have in common: everything but the seed (the threads' start skew)."""
    return repr(dataclasses.replace(m.spec, seed=0))


def repetitions(ms: list[RunMetrics]) -> dict[str, list[RunMetrics]]:
    """The runs by configuration (config_key), each configuration's first repetition first."""
    out: dict[str, list[RunMetrics]] = {}
    for m in sorted(ms, key=lambda m: m.spec.seed):
        out.setdefault(config_key(m), []).append(m)
    return out


def first_repetitions(ms: list[RunMetrics]) -> list[RunMetrics]:
    """Each configuration's first repetition present, in the order given."""
    first = {id(rs[0]) for rs in repetitions(ms).values()}
    return [m for m in ms if id(m) in first]


def _spread(runs: list[RunMetrics], value) -> tuple[float, float, float]:
    """Mean, least and most of value over a configuration's repetitions."""
    v = [value(m) for m in runs]
    return float(np.mean(v)), min(v), max(v)


def _whiskers(ax, x, spreads: list[tuple[float, float, float]]) -> None:
    """The repetitions' range on each bar, where a configuration has more than one."""
    if any(lo != hi for _, lo, hi in spreads):
        ax.errorbar(x, [m for m, _, _ in spreads], yerr=[[m - lo for m, lo, _ in spreads], [hi - m for m, _, hi in spreads]],
                    fmt="none", ecolor="black", elinewidth=0.8, capsize=2)


# The layout a kernel build's struct dentry is, by the name stat_path gives the same dentry (workloads/common/vfs.h
# mirrors 6.8's and 6.11's); the 184-byte one is no workload's. A guest benchmark run's spec says "shared" for a
# pre611 kernel (the lockref workloads' word for any dentry before 6.11), which is not stat_path's shared (6.1's).
DENTRY_LAYOUTS = {DENTRY_611.name: "split", DENTRY_68.name: "pre611", DENTRY_HYBRID184.name: "hybrid184"}


def run_layout(m: RunMetrics) -> str:
    """The layout a run's bar or line shows: for the guest benchmark, the dentry its kernel was built with (a
    bundled pre611 was built as hybrid184: its label says so, and so does its hatch); otherwise the run's own."""
    if is_kernels(m.spec):
        dentry = recorded_dentry(m.run.manifest.kernel or {})
        return DENTRY_LAYOUTS.get(dentry.name, m.spec.layout)
    return m.spec.layout


def meaning(m: RunMetrics) -> str:
    """What a run's colour stands for, as the legend names it: its policy, or "kernel X" (palette.spec_colour)."""
    return f"kernel {m.spec.kernel}" if is_kernels(m.spec) else m.spec.policy


def _colour_handles(ms: list[RunMetrics]) -> list:
    """One swatch per colour the runs are drawn in: the policies, then the guest benchmark's kernels."""
    firsts = {}
    for m in sorted(ms, key=lambda m: (is_kernels(m.spec), _rank(POLICY_ORDER, m.spec.policy), m.spec.kernel)):
        firsts.setdefault(meaning(m), m)
    return [Patch(facecolor=spec_colour(m.spec), edgecolor=EDGE, linewidth=0.6, label=name)
            for name, m in firsts.items()]


def _layouts(ms: list[RunMetrics]) -> list[str]:
    return sorted({run_layout(m) for m in ms}, key=lambda l: _rank(LAYOUT_ORDER, l))


def layout_name(layout: str) -> str:
    return f"layout {layout}" + (" (a kernel's dentry)" if layout == "hybrid184" else "")


def _policy_layout_handles(ms: list[RunMetrics]) -> list:
    return _colour_handles(ms) + [Patch(facecolor="white", edgecolor=EDGE, linewidth=0.6, hatch=layout_hatch(l),
                                        label=layout_name(l)) for l in _layouts(ms)]


def figure_wrap(text: str, fig_width: float, fontsize: float) -> str:
    """Wraps a figure-wide text to the figure's width (a figure-level title is not wrapped by matplotlib)."""
    return textwrap.fill(text, max(30, int(fig_width * 72 / (fontsize * 0.55))))


def _figure(width: float, height: float):
    fig = plt.figure(figsize=(width, height), layout="constrained", dpi=DPI)
    # a little more than the default pad at the edges: an axis' last tick label can overhang its axes a pixel or two
    fig.get_layout_engine().set(w_pad=0.06, h_pad=0.06)
    return fig


def _label_slots(g: list[RunMetrics], label=None) -> float:
    """A bar panel's width in bar slots: wider slots for all its bars when its longest run label (short_label
    unless given) wraps to more lines than one slot holds side by side."""
    lines = max(len(textwrap.wrap((label or short_label)(m), LABEL_WRAP, break_on_hyphens=False)) for m in g)
    return max(len(g) * max(1.0, lines / LABEL_LINES_PER_SLOT), 2)


def _pack(groups: list[tuple[str, list]], slots: int = ROW_SLOTS, pad: float = PANEL_PAD):
    """Consecutive panels into rows of at most `slots` bar widths (_label_slots); a panel wider than a row is cut
    into parts ("(1 of 2)")."""
    room = int(slots - pad)
    parts = []
    for name, g in groups:
        per = max(1, int(room * len(g) / _label_slots(g)))   # bars of this panel's slot width that fill a row
        k = math.ceil(len(g) / per)
        parts += [(name if k == 1 else f"{name} ({i + 1} of {k})", g[i * per:(i + 1) * per]) for i in range(k)]
    rows: list[list] = [[]]
    used = 0.0
    for name, g in parts:
        w = _label_slots(g) + pad
        if rows[-1] and used + w > slots:
            rows.append([])
            used = 0.0
        rows[-1].append((name, g))
        used += w
    return rows


def _panels(subs, rows: list[list], slots: int = ROW_SLOTS, pad: float = PANEL_PAD) -> list:
    """In each subfigure a row of panels, each as wide as its bars (the same bar width in every row) and with its
    own y axis. Returns [(axes, runs)]."""
    out = []
    for sub, row in zip(subs, rows):
        widths = [_label_slots(g) + pad for _, g in row]
        spare = slots - sum(widths)
        gs = sub.add_gridspec(1, len(row) + (spare >= 1), width_ratios=widths + ([spare] if spare >= 1 else []))
        for i, (name, g) in enumerate(row):
            ax = sub.add_subplot(gs[0, i])
            ax.set_title(name.replace(", ", "\n", 1), fontsize=8)   # workload over size: fits a narrow panel
            ax.tick_params(axis="y", labelsize=7)
            out.append((ax, g))
    return out


def _head(fig, title: str, handles: list, rows_below: list[float], ncol: int = 6):
    """The figure's title and legend in a subfigure of their own above subfigures of rows_below heights (a
    figure legend placed "outside" is not made room for when the figure holds subfigures). Returns those."""
    title = figure_wrap(title, fig.get_figwidth(), 10)
    legend_rows = math.ceil(len(handles) / ncol) if handles else 0
    head = 0.25 + 0.17 * (title.count("\n") + 1) + 0.2 * legend_rows
    fig.set_figheight(head + sum(rows_below))
    top, *subs = fig.subfigures(len(rows_below) + 1, 1, height_ratios=[head, *rows_below])
    top.suptitle(title, fontsize=10)
    if handles:
        top.legend(handles=handles, loc="lower center", fontsize=7, ncol=min(len(handles), ncol), frameon=False)
    return subs


def _bar_figure(ms: list[RunMetrics], title: str, handles: list, ylabel: str):
    """A figure of bar panels, one per workload and machine size, under a title and a legend."""
    rows = _pack(panel_groups(ms))
    fig = _figure(WIDTH, 1.0)
    subs = _head(fig, title, handles, [ROW_HEIGHT] * len(rows))
    panels = _panels(subs, rows)
    for ax, _ in panels:
        if ax.get_subplotspec().colspan.start == 0:
            ax.set_ylabel(ylabel, fontsize=8)
    return fig, panels


LABEL_WRAP = 22           # characters per line of a run label under its bar
LABEL_LINES_PER_SLOT = 4  # the lines of a rotated run label one bar's slot holds side by side


def _bar_x(ax, g: list[RunMetrics], label=short_label) -> np.ndarray:
    """Run labels under the bars, upright and wrapped: side by side, three short lines fit under a bar."""
    x = np.arange(len(g))
    ax.set_xticks(x, [textwrap.fill(label(m), LABEL_WRAP, break_on_hyphens=False)
                      for m in g], rotation=90, fontsize=6.5, linespacing=1.0)
    pad = max(0.3, (2.5 - len(g)) / 2)      # a lone bar stays a bar, not a wall
    ax.set_xlim(-0.5 - pad, len(g) - 0.5 + pad)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return x


def _run_bars(ax, x, vals, g: list[RunMetrics], width: float = 0.75, bottom=None):
    bars = ax.bar(x, vals, width, bottom=bottom, color=[spec_colour(m.spec) for m in g], edgecolor=EDGE,
                  linewidth=0.6)
    for b, m in zip(bars, g):
        b.set_hatch(layout_hatch(run_layout(m)))
        b.set_hatchcolor(hatch_colour(spec_colour(m.spec)))
    return bars


REPS = "bar: mean of a configuration's repetitions, whisker: their range"
# What a run's colour says (palette.spec_colour), in every figure's title that colours runs
COLOUR_KEY = "colour: policy (a full-system stat_file run: its kernel)"


def draw_throughput(ms: list[RunMetrics]):
    """One bar per configuration (mean of its repetitions, whisker: their range) in panels by workload and machine
    size, each panel on its own scale; colour: policy or kernel (palette.spec_colour); hatch: layout (run_layout)."""
    reps = repetitions(ms)
    fig, panels = _bar_figure(first_repetitions(ms), "Throughput: operations per simulated µs (each workload's own "
                              "operation, docs/workloads.md); one panel per workload and machine size, each on its own "
                              f"scale; {COLOUR_KEY}, hatch: layout; {REPS}", _policy_layout_handles(ms),
                              "operations per simulated µs")
    for ax, g in panels:
        x = _bar_x(ax, g)
        spreads = [_spread(reps[config_key(m)], lambda r: r.throughput / 1e6) for m in g]
        _run_bars(ax, x, [s[0] for s in spreads], g)
        _whiskers(ax, x, spreads)
        for xi, (mean, _, hi) in zip(x, spreads):     # the mean above the whisker, not through it
            ax.annotate(f"{mean:.3g}", (xi, hi), xytext=(0, 2), textcoords="offset points", ha="center",
                        va="bottom", fontsize=6)
        ax.margins(y=0.15)
    return fig


def throughput(ms: list[RunMetrics], path: Path) -> Path:
    return _save(draw_throughput(ms), path)


PINGPONG_PARTS = (("local transfers", lambda m: m.per_op["transfers"] - m.per_op["crossSocketTransfers"], "#88ccaa"),
                  ("cross-socket transfers", lambda m: m.per_op["crossSocketTransfers"], "#ff8866"),
                  (f"local {HITM}", lambda m: m.per_op["dirtyReads"] - m.per_op["dirtyReadsRemote"], "#bbbbee"),
                  (f"remote {HITM}", lambda m: m.per_op["dirtyReadsRemote"], "#ff77cc"))


def draw_pingpong(ms: list[RunMetrics]):
    """Stacked bars per configuration (means of its repetitions; whisker: the range of the total) in panels by
    workload and machine size: local and cross-socket transfers, local and remote dirty reads."""
    handles = [Patch(facecolor=c, edgecolor="white", label=label) for label, _, c in PINGPONG_PARTS]
    reps = repetitions(ms)
    fig, panels = _bar_figure(first_repetitions(ms), f"Cache-line ping-pong per operation (each workload's own), "
                              f"counted by the coherence monitor RTL: transfers and {HITM}; one panel per workload and "
                              f"machine size, each on its own scale; {REPS} (of the total)", handles,
                              "per operation")
    for ax, g in panels:
        x = _bar_x(ax, g)
        _stacked(ax, x, [(label, [_spread(reps[config_key(m)], f)[0] for m in g], colour)
                         for label, f, colour in PINGPONG_PARTS], 0.75, edgecolor="white", linewidth=0.4)
        _whiskers(ax, x, [_spread(reps[config_key(m)], lambda r: r.per_op["transfers"] + r.per_op["dirtyReads"])
                          for m in g])
    return fig


def _stacked(ax, x, parts: list[tuple[str, list[float], str]], width: float, **style) -> None:
    """Bars stacked part on part (label, values, colour), the axis from 0 with a margin above the tallest."""
    bottom = np.zeros(len(x))
    for label, values, colour in parts:
        v = np.array(values, dtype=float)
        ax.bar(x, v, width, bottom=bottom, label=label, color=colour, **style)
        bottom += v
    ax.use_sticky_edges = False     # a stacked bar's bottom would stop the margin above the bars
    ax.margins(y=0.08)
    ax.set_ylim(bottom=0)


def pingpong(ms: list[RunMetrics], path: Path) -> Path:
    return _save(draw_pingpong(ms), path)


def obj(field: str) -> str:
    """The object a field belongs to: "file" of "file.d_lockref" (the layout map's instance name)."""
    return field.split(".", 1)[0] if "." in field else ""


def field_lines(m: RunMetrics) -> list[tuple[tuple[str, ...], dict]]:
    """The run's lines that hold fields, each once: (the fields on the line by their full names, in address order,
    a field on several lines named on each with its part, "file.d_iname (part 2 of 2)"; the line's per-operation
    counts). Fields on one line have the same counts (coherence is per line), so one entry per line; a field's own
    counts add up all its lines'. In address order of their first field: runs that list their fields in another
    order name a line alike."""
    names: dict[int, list[str]] = {}
    for field in sorted(m.run.fields, key=lambda f: f.vaddr):
        lines = m.fields[field.label].get("lines") or []
        for i, line in enumerate(lines):
            names.setdefault(line, []).append(field.label if len(lines) == 1 else
                                              f"{field.label} (part {i + 1} of {len(lines)})")
    regions = m.analysis.region_of_line()
    return [(tuple(n), line_counts(m, line, regions)) for line, n in names.items()]


def line_counts(m: RunMetrics, line: int, regions: dict) -> dict[str, float]:
    """One line's counts per operation, from where metrics.compute takes a field's: the monitor's region for the
    line, or the unbounded model's count of it when the monitor had none."""
    r = regions.get(line)
    if r is not None:
        counts = m.analysis.rtl.regions[r.index]
    else:
        st = m.analysis.ideal.lines.get(line)
        counts = st.to_json() if st else {}
    return per_op({k: counts.get(k, 0) for k in FIELD_COUNTS}, m.run.region_ops)


def busy(f: dict) -> bool:
    return f.get("transfers", 0.0) + f.get("dirtyReads", 0.0) > 0


def object_lines(m: RunMetrics) -> dict[str, list[tuple[tuple[str, ...], dict]]]:
    """The run's lines with traffic, by the object of their first field; a line without transfers or dirty reads
    is left out (it would be an empty bar)."""
    out: dict[str, list] = {}
    for names, f in field_lines(m):
        if busy(f):
            out.setdefault(obj(names[0]), []).append((names, f))
    return out


LINE_NAMES = 8   # fields a legend names on one line


def line_name(names: tuple[str, ...], of: str) -> str:
    """The fields of a line as its legend names them: bare for the panel's object, with theirs for another's; past
    LINE_NAMES fields, the first and a count (two lines that differ only in the ones left out would read alike:
    a dentry's 6.8 and hybrid184 lines differ in their last field's part)."""
    short = [n.split(".", 1)[1] if obj(n) == of and "." in n else n for n in names]
    text = ", ".join(short if len(short) <= LINE_NAMES else [*short[:LINE_NAMES - 1],
                                                             f"{len(short) - LINE_NAMES + 1} more"])
    return textwrap.fill(f"line of {text}", 44)


FIELD_RUNS = 18   # bar slots (_field_slots) in one row of the fields figure


def _field_parts(ms: list[RunMetrics]) -> list[tuple[str, str, list[RunMetrics], list[tuple[str, ...]]]]:
    """Panels of the fields figure: per object, its runs with a busy line (each configuration's first repetition),
    cut so a panel is at most FIELD_RUNS bar slots wide and has at most len(LINE_COLOURS) kinds of line: (title, object, runs, kinds).
    An object with few enough kinds lists them all in each of its panels, so a kind keeps its colour."""
    objects: dict[str, list[RunMetrics]] = {}
    for m in ordered(first_repetitions(ms)):
        for o in object_lines(m):
            objects.setdefault(o, []).append(m)
    parts = []
    for o, runs in objects.items():
        cut: list[tuple[list[RunMetrics], list]] = [([], [])]
        for m in runs:
            kinds = [names for names, _ in object_lines(m)[o]]
            new = [k for k in kinds if k not in cut[-1][1]]
            if cut[-1][0] and (_field_slots([*cut[-1][0], m]) > FIELD_RUNS
                               or len(cut[-1][1]) + len(new) > len(LINE_COLOURS)):
                cut.append(([], []))
                new = kinds
            cut[-1][0].append(m)
            cut[-1][1].extend(new)
        every = list(dict.fromkeys(k for _, kinds in cut for k in kinds))   # a kind in two panels: listed once
        for i, (g, kinds) in enumerate(cut):
            parts.append((f"object {o}" + ("" if len(cut) == 1 else f" ({i + 1} of {len(cut)})"), o, g,
                          every if len(every) <= len(LINE_COLOURS) else kinds))
    return parts


def _field_slots(g: list[RunMetrics]) -> float:
    """A fields panel's width in bar slots (_label_slots of the full run labels: these panels mix workloads)."""
    return _label_slots(g, lambda m: m.label)


def field_rows(ms: list[RunMetrics]) -> list[list[tuple[str, str, list[RunMetrics], list[tuple[str, ...]]]]]:
    """The panels packed into rows of at most FIELD_RUNS bar slots (a panel also takes PANEL_PAD) and, between them,
    at most len(LINE_COLOURS) kinds of line: a row's legend gives each kind one colour."""
    rows: list[list] = [[]]
    for part in _field_parts(ms):
        used = sum(_field_slots(g) + PANEL_PAD for _, _, g, _ in rows[-1])
        kinds = sum(len(k) for *_, k in rows[-1])
        if rows[-1] and (used + _field_slots(part[2]) + PANEL_PAD > FIELD_RUNS + PANEL_PAD
                         or kinds + len(part[3]) > len(LINE_COLOURS)):
            rows.append([])
        rows[-1].append(part)
    return rows if rows[0] else []


def draw_fields(ms: list[RunMetrics]):
    """A panel per object (the layout map's instances), the runs with traffic on its lines along it (each
    configuration's first repetition: the others differ only in the threads' start skew): per run, one bar per
    line that holds the object's fields (named in the row's legend) with transfers (solid) and dirty reads (light,
    dotted) per operation. Lines without traffic are left out."""
    rows = field_rows(ms)
    if not rows:
        fig = _figure(WIDTH, 2.0)
        ax = fig.add_subplot()
        ax.axis("off")
        ax.text(0.5, 0.5, "No line holding fields had traffic in these runs (or no layout in the manifests).",
                ha="center", va="center")
        return fig
    fig = _figure(WIDTH, 1.0)
    subs = _head(fig, f"Per object, its cache lines that had traffic: transfers (solid) and {HITM} (light, dotted) "
                      "per operation, the first repetition of each configuration. Coherence is per line: the fields on "
                      "one line share its counts, so one bar per line, not per field", [], [ROW_HEIGHT + 0.3] * len(rows))
    for sub, row in zip(subs, rows):
        gs = sub.add_gridspec(1, len(row), width_ratios=[_field_slots(g) + PANEL_PAD for _, _, g, _ in row])
        kinds = [(o, k) for _, o, _, ks in row for k in ks]
        colour = {ok: LINE_COLOURS[i] for i, ok in enumerate(kinds)}
        drawn = set()
        for i, (title, o, g, _) in enumerate(row):
            ax = sub.add_subplot(gs[0, i])
            x = _bar_x(ax, g, label=lambda m: m.label)
            for xi, m in zip(x, g):
                lines = object_lines(m)[o]
                width = 0.8 / len(lines)
                for j, (names, f) in enumerate(lines):
                    pos = xi + (j - (len(lines) - 1) / 2) * width
                    t, d = f.get("transfers", 0.0), f.get("dirtyReads", 0.0)
                    c = colour[o, names]
                    ax.bar(pos, t, width, color=c, edgecolor=EDGE, linewidth=0.5)
                    ax.bar(pos, d, width, bottom=t, color=c, alpha=0.45, hatch="...", edgecolor=EDGE, linewidth=0.5)
                    drawn.add((o, names))
            ax.use_sticky_edges = False     # a stacked bar's bottom would stop the margin above the bars
            ax.margins(y=0.08)
            ax.set_ylim(bottom=0)
            ax.set_title(title, fontsize=9)
            ax.tick_params(axis="y", labelsize=7)
            if i == 0:
                ax.set_ylabel("per operation", fontsize=8)
        several = len(row) > 1
        handles = [Patch(facecolor=colour[o, k], edgecolor=EDGE, linewidth=0.5,
                         label=(f"{o}: " if several else "") + line_name(k, o)) for o, k in kinds if (o, k) in drawn]
        handles += [Patch(facecolor="white", edgecolor=EDGE, linewidth=0.5, label="transfers (solid)"),
                    Patch(facecolor="white", hatch="...", edgecolor=EDGE, linewidth=0.5, label=f"{HITM} (dotted)")]
        sub.legend(handles=handles, loc="outside right center", fontsize=6.5)
    return fig


def fields(ms: list[RunMetrics], path: Path) -> Path:
    """Traffic per operation on each line holding fields: where the layout moves the ping-pong."""
    return _save(draw_fields(ms), path)


def socket_matrix(m: RunMetrics) -> np.ndarray:
    """The monitor's socket x socket transfers per operation (from row to column), at the run's own size: the
    monitor counts in a matrix as large as it was built for, of which a run of S sockets uses the top-left S x S."""
    sockets = m.run.manifest.system.sockets
    return np.array(m.analysis.rtl.matrix, dtype=float)[:sockets, :sockets] / m.run.region_ops


MATRIX_CMAP = ListedColormap(plt.get_cmap("magma_r")(np.linspace(0.1, 0.95, 256)), name="cohtb_magma").with_extremes(
    bad="white")


def _steps(lo: float, hi: float) -> list[float]:
    """1, 2, 5 x 10^k from lo to hi."""
    return [m * 10.0 ** k for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 1)
            for m in (1, 2, 5) if lo * (1 - 1e-9) <= m * 10.0 ** k <= hi * (1 + 1e-9)]


def _log_range(lo: float, hi: float) -> tuple[float, float]:
    """A log colour scale's ends: the 1-2-5 steps around the values, at least a decade apart."""
    steps = _steps(lo / 10, hi * 10)
    vmin = max(s for s in steps if s <= lo * (1 + 1e-9))
    vmax = min(s for s in steps if s >= hi * (1 - 1e-9))
    return min(vmin, vmax / 10), vmax


def _diag_text(v: float) -> str:
    if v == 0:
        return "0"
    if v < 0.01:
        return "<.01"
    return f"{v:.1f}" if v >= 9.95 else f"{v:.2f}"


MATRIX_PANELS = 30   # at most this many matrices in the figure: more made it thousands of px tall and slow to draw
MATRIX_SIDE = {1: 0.9, 2: 1.2, 4: 1.6, 8: 2.4}   # inches a matrix of that many sockets takes: cells of 0.3 in or more


def matrix_side(sockets: int) -> float:
    return MATRIX_SIDE.get(sockets, 0.3 * sockets)


def matrix_family(m: RunMetrics) -> tuple:
    """What a drawn matrix stands for when not every one fits: the workload, the policy or kernel, the layout and
    the machine size."""
    return m.spec.workload, meaning(m), run_layout(m), m.spec.sockets, m.spec.cores_per_socket


def matrix_runs(ms: list[RunMetrics]) -> tuple[list[RunMetrics], list[str]]:
    """The configurations (first repetitions) whose matrices are drawn, in the figures' order, and what is left out,
    said as the figure says it. Up to MATRIX_PANELS, every one; beyond, the one-socket configurations are left out
    first (a single same-socket cell, the summary table's transfers/op), then all but the first configuration of
    each matrix_family, then the last families."""
    runs = ordered(first_repetitions(ms))
    left = []
    if len(runs) > MATRIX_PANELS:
        one = [m for m in runs if m.spec.sockets == 1]
        if one:
            runs = [m for m in runs if m.spec.sockets > 1]
            left.append(f"{count(len(one), 'one-socket configuration')} (a single same-socket cell: the summary "
                        "table's transfers/op)")
    if len(runs) > MATRIX_PANELS:
        firsts = {}
        for m in runs:
            firsts.setdefault(matrix_family(m), m)
        alike = len(runs) - len(firsts)
        runs = list(firsts.values())
        left.append(f"{count(alike, 'configuration')} of the same workload, policy or kernel, layout and size as one "
                    "drawn (another lock model, declaration, home socket, placement or flags; its totals: the summary "
                    "table's transfers/op and x-socket/op)")
    if len(runs) > MATRIX_PANELS:
        left.append(f"{count(len(runs) - MATRIX_PANELS, 'configuration')} after the first {MATRIX_PANELS} drawn (their "
                    "totals: the summary table's transfers/op and x-socket/op)")
        runs = runs[:MATRIX_PANELS]
    return runs, left


def matrix_rows(runs: list[RunMetrics]) -> list[tuple[list[RunMetrics], int]]:
    """The drawn matrices in rows of (runs, columns): the runs of one socket count in rows of their own, as many
    panels a row as fit their matrices' side."""
    by_sockets: dict[int, list[RunMetrics]] = {}
    for m in runs:
        by_sockets.setdefault(m.spec.sockets, []).append(m)
    rows = []
    for sockets, g in by_sockets.items():
        cols = max(1, int((WIDTH - 0.3) / (matrix_side(sockets) + 0.75)))
        rows += [(g[i:i + cols], cols) for i in range(0, len(g), cols)]
    return rows


def _colour_ticks(lo: float, hi: float) -> list[float]:
    """A colour bar's ticks: the 1-2-5 steps, or only the powers of ten when those would crowd it (over nine)."""
    steps = _steps(lo, hi)
    return steps if len(steps) <= 9 else [t for t in steps if math.log10(t) == round(math.log10(t))]


def _matrix_title(m: RunMetrics, mat: np.ndarray, width: float) -> str:
    """The run's label wrapped to its panel's width (6.5-point text), then its same- and cross-socket totals."""
    diag = np.eye(len(mat), dtype=bool)
    label = textwrap.fill(m.label, max(20, int(width * 72 / (6.5 * 0.58))), break_on_hyphens=False)
    return f"{label}\nsame socket {np.trace(mat):.2f}, cross {mat[~diag].sum():.2f} /op"


def _matrix_panel(ax, m: RunMetrics, mat: np.ndarray, norm, width: float) -> None:
    n = len(mat)
    diag = np.eye(n, dtype=bool)
    ax.imshow(np.ma.masked_array(mat, mask=diag | (mat <= 0)), cmap=MATRIX_CMAP, norm=norm)
    for k in range(n):
        ax.add_patch(Rectangle((k - 0.5, k - 0.5), 1, 1, facecolor="#d9d9d9", edgecolor="none"))
        ax.text(k, k, _diag_text(mat[k, k]), ha="center", va="center", fontsize=7 if n <= 4 else 6.5)
    ax.set_xticks(range(n))
    ax.set_yticks(range(n))
    ax.tick_params(labelsize=6, length=2)
    ax.set_xlabel("to socket", fontsize=7)
    ax.set_ylabel("from socket", fontsize=7)
    ax.set_title(_matrix_title(m, mat, width), fontsize=6.5)


def draw_matrices(ms: list[RunMetrics]):
    """One panel per configuration drawn (matrix_runs) at its own number of sockets, in rows by socket count, each
    row of panels as tall as its titles and matrices. The colour is cross-socket transfers per operation on one log
    scale for every panel (the colour bar under the title); the diagonal (same-socket transfers) is grey with its
    value written in, since a socket's cores passing the line among themselves would swamp the scale. What is not
    drawn is said under the colour bar."""
    runs, left = matrix_runs(ms)
    mats = {id(m): socket_matrix(m) for m in runs}
    off = np.concatenate([mats[id(m)][~np.eye(len(mats[id(m)]), dtype=bool)] for m in runs] or [np.zeros(0)])
    pos = off[off > 0]
    norm = LogNorm(*_log_range(float(pos.min()), float(pos.max())) if pos.size else (0.1, 1.0))
    rows = matrix_rows(runs)
    widths = [(WIDTH - 0.3) / cols for _, cols in rows]   # each panel's share of the figure's width
    heights = [matrix_side(row[0].spec.sockets) + 0.5 + 0.12 * max(
        _matrix_title(m, mats[id(m)], w).count("\n") + 1 for m in row) for (row, _), w in zip(rows, widths)]
    note = figure_wrap("Grey diagonal, with its value: same-socket transfers (between cores of one socket), left out "
                       "of the colour scale since they would swamp it; white: no cross-socket transfer."
                       + (f" Not drawn: {'; '.join(left)}." if left else ""), WIDTH, 8)
    fig = _figure(WIDTH, 1.0)
    title = figure_wrap("Ownership transfers per operation (each workload's own), from socket (row) to socket "
                        "(column), counted by the coherence monitor RTL; the first repetition of each configuration",
                        WIDTH, 10)
    head = 0.75 + 0.17 * (title.count("\n") + 1) + 0.15 * (note.count("\n") + 1)
    fig.set_figheight(head + sum(heights))
    top, *subs = fig.subfigures(len(rows) + 1, 1, height_ratios=[head, *heights])
    top.suptitle(title, fontsize=10)
    cax = top.add_subplot(top.add_gridspec(1, 3, width_ratios=[1, 2, 1])[0, 1])   # the middle half of the width
    cb = top.colorbar(plt.cm.ScalarMappable(norm=norm, cmap=MATRIX_CMAP), cax=cax, orientation="horizontal",
                      ticks=_colour_ticks(norm.vmin, norm.vmax), format="%g")
    cb.minorticks_off()
    cb.set_label("cross-socket transfers per operation (log scale), one scale for every panel", fontsize=8)
    cb.ax.tick_params(labelsize=7)
    top.supxlabel(note, fontsize=8)
    for sub, (row, cols), width in zip(subs, rows, widths):
        for ax, m in zip(sub.subplots(1, cols, squeeze=False)[0], row):
            _matrix_panel(ax, m, mats[id(m)], norm, width)
        for ax in sub.axes[len(row):]:
            ax.axis("off")
    return fig


def matrices(ms: list[RunMetrics], path: Path) -> Path:
    return _save(draw_matrices(ms), path)


def scaling_series(ms: list[RunMetrics]) -> dict[tuple[str, str, str, str, str, str], list[RunMetrics]]:
    """The runs without an intruder (each configuration's first repetition) by (workload, policy, layout, guest
    kernel, extra flags and window, declaration), each in order of machine size, for the series run at more than
    one size; {} if none is. A declaration's runs are a series of their own: two declarations may measure one
    configuration differently, and a line through both would mix them; so are a kernel's (full-system runs
    differ by kernel, not by policy). A series at one size says nothing of scaling (the throughput figure has it).
    The series of one compared configuration (compared_configuration) come together."""
    return more_than_one_size(_series_by_configuration(ms))


def more_than_one_size(series: dict) -> dict:
    return {k: v for k, v in series.items() if len({m.spec.sockets for m in v}) > 1}


def _series_by_configuration(ms: list[RunMetrics]) -> dict[tuple[str, str, str, str, str, str], list[RunMetrics]]:
    series: dict[tuple[str, str, str, str, str, str], dict[int, RunMetrics]] = {}
    for m in sorted(ordered(first_repetitions(ms)), key=lambda m: m.spec.seed):
        if not m.spec.intruder_period_us:
            key = (m.spec.workload, m.spec.policy, m.spec.layout, m.spec.kernel,
                   extra_text(m.spec.extra) + (f" {m.spec.window_us} µs" if m.spec.window_us else ""),
                   m.spec.declaration)
            # one run per size: a repetition that varies the placement or the home socket is not another point
            series.setdefault(key, {}).setdefault(m.spec.sockets, m)
    out = {k: ordered(list(v.values())) for k, v in series.items()}
    # the series one configuration compares next to each other (the legend lists them in this order)
    configurations = list(dict.fromkeys(compared_configuration(k, v[0]) for k, v in out.items()))
    return dict(sorted(out.items(), key=lambda kv: configurations.index(compared_configuration(kv[0], kv[1][0]))))


# The scaling figure's markers, each drawn filled and hollow: 24 configurations told apart beyond colour and line.
SCALING_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "p", "h", "*")


def compared_configuration(key: tuple[str, str, str, str, str, str], m: RunMetrics) -> tuple[str, ...]:
    """A scaling series' key less what its colour and line say (policy or kernel, layout): the series of one
    configuration that differ only in those share it, and so their marker. A kernel's own workload (rwsem in the
    guest) is coloured by its policy, so its kernel stays in."""
    workload, _, _, kernel, extra, declaration = key
    return workload, "" if is_kernels(m.spec) else kernel, extra, declaration


def scaling_styles(series: dict) -> dict[tuple, dict]:
    """Each series' colour (policy or kernel), line (layout) and marker (compared_configuration, one marker filled or
    hollow each, in order): the series compared at one configuration share a marker and differ in colour or line."""
    configurations = list(dict.fromkeys(compared_configuration(k, v[0]) for k, v in series.items()))
    out = {}
    for k, v in series.items():
        i = configurations.index(compared_configuration(k, v[0])) % (2 * len(SCALING_MARKERS))
        colour = spec_colour(v[0].spec)
        out[k] = dict(color=colour, linestyle=layout_line(run_layout(v[0])),
                      marker=SCALING_MARKERS[i % len(SCALING_MARKERS)], markeredgecolor=colour,
                      markerfacecolor=colour if i < len(SCALING_MARKERS) else "white")
    return out


def draw_scaling(ms: list[RunMetrics]):
    """Throughput and transfers per operation against sockets: a line per configuration run at more than one size
    (colour: policy or kernel, line: layout, marker: what else the configuration is, shared by the lines it
    compares), named in the legend; how many were run at one size only is said at the legend's head. None if no
    configuration has runs at more than one size."""
    every = _series_by_configuration(ms)
    series = more_than_one_size(every)
    if not series:
        return None
    # the legend under the panels, two series a line of 8-point text: the figure grows to hold it
    fig = _figure(WIDTH, 4.2 + 0.17 * math.ceil(len(series) / 2))
    a1, a2 = fig.subplots(1, 2)
    sockets = sorted({m.spec.sockets for v in series.values() for m in v})
    cores = {m.spec.cores_per_socket for v in series.values() for m in v}
    workloads = {k[0] for k in series}
    styles = scaling_styles(series)
    for k, v in series.items():
        xs = [m.spec.sockets for m in v]
        # the run's own label less its size (it names the lock model, which the flags may leave implicit)
        label = short_label(v[0]) if workloads == {"lockref"} else f"{k[0]} {short_label(v[0])}"
        a1.plot(xs, [m.throughput / 1e6 for m in v], markersize=5, label=label, **styles[k])
        a2.plot(xs, [m.per_op["transfers"] for m in v], markersize=5, label=label, **styles[k])
    xlabel = f"sockets ({cores.pop()} cores each)" if len(cores) == 1 else "sockets"
    for a, label in ((a1, "operations per simulated µs"), (a2, "ownership transfers per operation")):
        a.set_xscale("log", base=2)
        a.set_xticks(sockets, [str(s) for s in sockets])
        a.minorticks_off()
        a.set_xlim(sockets[0] / 1.25, sockets[-1] * 1.25)
        a.set_xlabel(xlabel)
        a.set_ylabel(label)
        a.set_ylim(bottom=0)
        a.grid(alpha=0.3)
    a1.set_title("Throughput", fontsize=10)
    a2.set_title("Ownership transfers per operation\n(same- and cross-socket)", fontsize=10)
    fig.suptitle(figure_wrap(f"Scaling with the number of sockets (runs without an intruder); {COLOUR_KEY}, line: "
                             "layout, marker: the configuration compared (the lines that share one differ only in "
                             "colour or line)", WIDTH, 11), fontsize=11)
    one_size = len(every) - len(series)
    # what is not drawn is said where the lines are named
    note = (f"not drawn: {one_size} configuration{'s' * (one_size > 1)} run at one size only (the throughput "
            "figure has them)" if one_size else "")
    fig.legend(handles=a1.get_legend_handles_labels()[0], loc="outside lower center", fontsize=8, title=note,
               title_fontsize=8, ncol=min(2, len(series)))
    return fig


def scaling(ms: list[RunMetrics], path: Path) -> Path | None:
    fig = draw_scaling(ms)
    return _save(fig, path) if fig is not None else None


CHECK_PARTS = (("matched with gem5's evidence", lambda c: c["matched"], "#776699"),
               ("gem5 only, explained (before/after the trace, writeback forwards, dirty handed up)",
                lambda c: c["explained"], "#bb9977"),
               ("unexplained (monitor only + gem5 only)", lambda c: c["unexplained"], "#bb4444"))


def draw_checks(ms: list[RunMetrics]):
    """Per configuration (means of its checked repetitions), the monitor's items split by their gem5 evidence:
    matched, explained, unexplained; panels by workload and machine size, each on its own scale. Runs not checked
    are left out (the Checks table says why)."""
    checked = [m for m in ms if not m.check["verdict"].startswith("not checked")]
    if not checked:
        fig = _figure(WIDTH, 1.6)
        ax = fig.add_subplot()
        ax.axis("off")
        ax.text(0.5, 0.5, "No run checked against gem5: the runs are event format 1 (issue-time events)\n"
                "or hold none of gem5's evidence; see the Checks table.", ha="center", va="center", fontsize=9)
        return fig
    left = len(ms) - len(checked)
    handles = [Patch(facecolor=c, label=label) for label, _, c in CHECK_PARTS]
    reps = repetitions(checked)
    fig, panels = _bar_figure(first_repetitions(checked), f"Checks: the monitor's transfers and {HITM} per operation "
                              "against gem5's own evidence; one panel per workload and machine size, each on its own "
                              "scale; bar: means of a configuration's repetitions"
                              + (f" ({left} run{'s' if left > 1 else ''} not checked, left out)" if left else ""),
                              handles, "per operation")
    for ax, g in panels:
        x = _bar_x(ax, g)
        _stacked(ax, x, [(label, [_spread(reps[config_key(m)], lambda r: value(r.check) / r.run.region_ops)[0] for m in g],
                          colour) for label, value, colour in CHECK_PARTS], 0.6)
    return fig


def checks(ms: list[RunMetrics], path: Path) -> Path:
    return _save(draw_checks(ms), path)


def comparison(m: RunMetrics, arms: dict[tuple[str, str], tuple[str, str]]) -> tuple:
    """What the intervals figure keeps in one panel: the arms of one declared point or series (base and new, side by
    side), of one repetition's home socket and placement (which a declaration varies with the repetition); a run no
    declaration compares, on its own."""
    found = arms.get((m.spec.declaration, m.spec.repetition_of))
    return (found, m.spec.home_socket, m.spec.placement) if found else (config_key(m),)


def _fill(groups: list[list], most: int) -> list[list]:
    """Consecutive groups into panels of at most `most` runs, a group never split between panels unless it alone is
    larger (then cut into consecutive parts)."""
    panels: list[list] = [[]]
    for g in groups:
        for part in (g[i:i + most] for i in range(0, len(g), most)):
            if panels[-1] and len(panels[-1]) + len(part) > most:
                panels.append([])
            panels[-1].extend(part)
    return panels if panels[0] else []


def interval_panels(ms: list[RunMetrics]) -> list[tuple[str, list]]:
    """Timed runs' first repetitions with their series, by workload and machine size, at most len(MARKERS)
    configurations a panel, the arms of a declared comparison in one (comparison); a panel cut into parts ("(1 of
    3)"): [(title, [(run, series)])]."""
    timed = [(m, s) for m in ordered(first_repetitions(ms)) if (s := series(m.run)) is not None]
    arms = declared_arms()
    groups: dict[str, dict[tuple, list]] = {}
    for m, s in timed:
        groups.setdefault(panel_name(m), {}).setdefault(comparison(m, arms), []).append((m, s))
    out = []
    for name, compared in groups.items():
        parts = _fill(list(compared.values()), len(MARKERS))
        k = len(parts)
        out += [(name if k == 1 else f"{name} ({i + 1} of {k})", part) for i, part in enumerate(parts)]
    return out


LEGEND_DROP = 34   # points from an axes' bottom to below its tick labels and x label (7 and 8 point text)


def _legend_below(ax, **kw):
    """ax's legend under its x label: anchored LEGEND_DROP points below the axes, not a share of its height, which
    put it on the label when the panel was short."""
    drop = ScaledTranslation(0, -LEGEND_DROP / 72, ax.figure.dpi_scale_trans)
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, 0), bbox_transform=ax.transAxes + drop,
                     frameon=False, **kw)


def draw_intervals(ms: list[RunMetrics]):
    """Timed runs only: ops per interval over the window (will-it-scale's `total:` line, all threads), each
    configuration's first repetition, one panel per workload and machine size (at most four configurations a panel,
    the arms of a declared comparison side by side, each with its own marker; colour: policy or kernel, line:
    layout). Per-thread least and most per interval are in the runs' data, not drawn. None when no run is timed."""
    panels = interval_panels(ms)
    if not panels:
        return None
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    labels = {id(m): textwrap.fill(short_label(m), 36 if cols > 2 else 48, break_on_hyphens=False)
              for _, g in panels for m, _ in g}
    # each row as tall as its longest legend (one entry a line of 6.5-point text per wrapped line) under its panels
    lines = [max(sum(labels[id(m)].count("\n") + 1 for m, _ in g) for _, g in panels[r * cols:(r + 1) * cols])
             for r in range(rows)]
    heights = [2.1 + 0.115 * n for n in lines]
    fig = _figure(WIDTH, 0.7 + sum(heights))
    axes = fig.subplots(rows, cols, squeeze=False, gridspec_kw={"height_ratios": heights})
    for ax, (name, group) in zip(axes.flat, panels):
        for marker, (m, s) in zip(MARKERS, group):
            t = np.array(s.starts_us) + s.interval_us / 2
            ax.plot(t, np.array(s.total) / s.interval_us, color=spec_colour(m.spec), ls=layout_line(run_layout(m)),
                    marker=marker, markersize=4, label=labels[id(m)])
        ax.set_title(name.replace(", ", "\n", 1), fontsize=9)   # workload over size: fits a third of the width
        ax.set_xlabel("µs into the window", fontsize=8)
        ax.set_ylabel("ops per simulated µs", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_ylim(bottom=0)
        _legend_below(ax, fontsize=6.5, ncol=1)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(figure_wrap(
        "Ops per interval over the window, all threads (will-it-scale's per-interval total), the first "
        f"repetition of each configuration, the arms of a declared comparison in one panel; {COLOUR_KEY}, line: "
        "layout, marker: the run within its panel", WIDTH, 10), fontsize=10)
    return fig


def intervals(ms: list[RunMetrics], path: Path) -> Path | None:
    fig = draw_intervals(ms)
    return _save(fig, path) if fig is not None else None


# The monitor's counts per interval a live run's snapshots hold (live.json), one panel each.
MONITOR_SERIES = (("transfers", ("transfers",)), ("cross-socket transfers", ("crossSocketTransfers",)),
                  ("dirty reads (HITM), local + remote", ("dirtyReadsLocal", "dirtyReadsRemote")),
                  ("invalidations", ("invalidations",)))


def monitor_series(m: RunMetrics) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """A live run's snapshots as rates: each whole interval's middle (µs from the first traced event) and, per
    panel of MONITOR_SERIES, its counts per simulated µs. The last interval ends with the stream, part way: left
    out. None for a run counted afterwards (no live.json), or without intervals."""
    doc = m.analysis.series
    if doc is None or not (m.run.path / "live.json").exists():
        return None
    whole = doc["intervals"][:-1]
    interval_us = doc["interval_ticks"] / 1e6
    t = (np.arange(len(whole)) + 0.5) * interval_us
    return t, {name: np.array([sum(iv[k] for k in keys) for iv in whole], dtype=float) / interval_us
               for name, keys in MONITOR_SERIES}


def draw_monitor(ms: list[RunMetrics]):
    """Live runs only: the coherence monitor's snapshots over simulated time, one panel per count, one line per
    run (colour: policy or kernel, line: layout). None when no run was live."""
    got = [(m, s) for m in ordered(ms) if (s := monitor_series(m)) is not None and len(s[0])]
    if not got:
        return None
    fig, axes = plt.subplots(2, 2, figsize=(WIDTH, 6.4), squeeze=False, layout="constrained", sharex=True)
    for ax, (name, _) in zip(axes.flat, MONITOR_SERIES):
        for i, (m, (t, rates)) in enumerate(got):
            ax.plot(t, rates[name], color=spec_colour(m.spec), ls=layout_line(run_layout(m)), marker=".",
                    label=f"{short_label(m)}, {size_name(m)}")
        ax.set_title(name, fontsize=9)
        ax.set_ylabel("per simulated µs", fontsize=8)
        ax.set_ylim(0, max(max(rates[name].max() for _, (_, rates) in got) * 1.12, 0.05))   # room above the top point
    for ax in axes[-1]:
        ax.set_xlabel("µs from the first traced event", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", fontsize=7, ncol=min(3, len(labels)))   # off the data
    fig.suptitle(figure_wrap("The coherence monitor live: its snapshots over simulated time (CSR snapshot every "
                       f"interval); {COLOUR_KEY}, line: layout", WIDTH, 10), fontsize=10)
    return fig


def monitor(ms: list[RunMetrics], path: Path) -> Path | None:
    fig = draw_monitor(ms)
    return _save(fig, path) if fig is not None else None
