"""Report figures (PNG): throughput, ping-pong per operation, per-line traffic, socket matrices, scaling, and
the checks. Each `draw_*` function returns the matplotlib figure it drew (for tests to look at); the plain
function of the same name draws it into one file.

Every figure orders the runs the same way, by machine size (sockets x cores per socket), then policy, layout
and intruder; a policy has one colour and a layout one hatch (bars) or line style (lines) in every figure."""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import ListedColormap, LogNorm  # noqa: E402
from matplotlib.patches import Patch, Rectangle  # noqa: E402

from cohtb.analysis.metrics import RunMetrics, extra_text  # noqa: E402

POLICY_ORDER = ("locked", "cmpxchg", "retry100", "unified")
LAYOUT_ORDER = ("shared", "split", "padded")
# Okabe-Ito colours (distinguishable with the common colour-vision deficiencies); others for unknown policies.
POLICY_COLOURS = {"locked": "#d55e00", "cmpxchg": "#0072b2", "retry100": "#009e73", "unified": "#cc79a7"}
MORE_COLOURS = ("#e69f00", "#56b4e9", "#000000", "#f0e442", "#999999")
LAYOUT_HATCH = {"shared": "///", "split": "", "padded": ".."}
LAYOUT_LINE = {"shared": "--", "split": "-", "padded": ":"}
LINE_COLOURS = ("#7570b3", "#1b9e77", "#e6ab02", "#a6761d", "#e7298a", "#666666")
EDGE = "#333333"
DPI = 110


def _save(fig, path: Path) -> Path:
    if fig.get_layout_engine() is None:     # figures drawn here use constrained layout already
        fig.tight_layout()
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def _rank(order: tuple[str, ...], v: str) -> tuple[int, str]:
    return (order.index(v), "") if v in order else (len(order), v)


def ordered(ms: list[RunMetrics]) -> list[RunMetrics]:
    """The runs by machine size, then policy, layout and intruder (the order of every figure)."""
    return sorted(ms, key=lambda m: (m.spec.sockets, m.spec.cores_per_socket, _rank(POLICY_ORDER, m.spec.policy),
                                     _rank(LAYOUT_ORDER, m.spec.layout), m.spec.intruder_period_us, m.label))


def size_name(m: RunMetrics) -> str:
    n = m.spec.sockets
    return f"{n} socket{'s' if n > 1 else ''} x {m.spec.cores_per_socket} cores"


def size_groups(ms: list[RunMetrics]) -> list[tuple[str, list[RunMetrics]]]:
    """The runs in order, grouped by machine size: [("2 sockets x 4 cores", [...]), ...]."""
    groups: dict[str, list[RunMetrics]] = {}
    for m in ordered(ms):
        groups.setdefault(size_name(m), []).append(m)
    return list(groups.items())


def policy_colour(policy: str) -> str:
    if policy in POLICY_COLOURS:
        return POLICY_COLOURS[policy]
    return MORE_COLOURS[sum(map(ord, policy)) % len(MORE_COLOURS)]


def short_label(m: RunMetrics) -> str:
    """The run within its machine size: (workload, unless lockref) policy/layout (and the intruder)."""
    s = f"{m.spec.policy}/{m.spec.layout}" + (" +intruder" if m.spec.intruder_period_us else "")
    return s if m.spec.workload == "lockref" else f"{m.spec.workload} {s}"


def _policies(ms: list[RunMetrics]) -> list[str]:
    return sorted({m.spec.policy for m in ms}, key=lambda p: _rank(POLICY_ORDER, p))


def _layouts(ms: list[RunMetrics]) -> list[str]:
    return sorted({m.spec.layout for m in ms}, key=lambda l: _rank(LAYOUT_ORDER, l))


def _policy_layout_handles(ms: list[RunMetrics]) -> list:
    handles = [Patch(facecolor=policy_colour(p), edgecolor=EDGE, linewidth=0.6, label=p) for p in _policies(ms)]
    return handles + [Patch(facecolor="white", edgecolor=EDGE, linewidth=0.6, hatch=LAYOUT_HATCH.get(l, ""),
                            label=f"layout {l}") for l in _layouts(ms)]


def _wrap(text: str, fig_width: float, fontsize: float) -> str:
    """Wraps a figure-wide text to the figure's width (a figure-level title is not wrapped by matplotlib)."""
    return textwrap.fill(text, max(30, int(fig_width * 72 / (fontsize * 0.55))))


def _figure(width: float, height: float):
    return plt.figure(figsize=(width, height), layout="constrained", dpi=DPI)


def _group_axes(fig, groups: list[tuple[str, list[RunMetrics]]]) -> list:
    """One axes per machine size, side by side, as wide as its runs, sharing the y axis."""
    gs = fig.add_gridspec(1, len(groups), width_ratios=[max(len(g), 1.6) for _, g in groups])
    axes = []
    for i, (name, g) in enumerate(groups):
        ax = fig.add_subplot(gs[0, i], sharey=axes[0] if axes else None)
        ax.set_title(name, fontsize=9)
        if i:
            ax.tick_params(labelleft=False)
        axes.append(ax)
    return axes


def _bar_x(ax, g: list[RunMetrics]) -> np.ndarray:
    x = np.arange(len(g))
    ax.set_xticks(x, [short_label(m) for m in g], rotation=40, ha="right", rotation_mode="anchor", fontsize=8)
    pad = max(0.3, (2.5 - len(g)) / 2)      # a lone bar stays a bar, not a wall
    ax.set_xlim(-0.5 - pad, len(g) - 0.5 + pad)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    return x


def _policy_bars(ax, x, vals, g: list[RunMetrics], width: float = 0.75, bottom=None):
    bars = ax.bar(x, vals, width, bottom=bottom, color=[policy_colour(m.spec.policy) for m in g], edgecolor=EDGE,
                  linewidth=0.6)
    for b, m in zip(bars, g):
        b.set_hatch(LAYOUT_HATCH.get(m.spec.layout, ""))
    return bars


def draw_throughput(ms: list[RunMetrics]):
    """Bars grouped by machine size; colour: policy; hatch: layout."""
    groups = size_groups(ms)
    fig = _figure(max(6.0, 0.42 * len(ms) + 4.0), 4.8)
    axes = _group_axes(fig, groups)
    for ax, (name, g) in zip(axes, groups):
        x = _bar_x(ax, g)
        bars = _policy_bars(ax, x, [m.throughput / 1e6 for m in g], g)
        ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
        ax.margins(y=0.12)
    axes[0].set_ylabel("operations per simulated µs")
    fig.suptitle(_wrap("Throughput: get+put pairs per simulated µs of the region of interest, by machine size "
                       "(sockets x cores per socket)", fig.get_figwidth(), 11), fontsize=11)
    fig.legend(handles=_policy_layout_handles(ms), loc="outside right center", fontsize=8, title="policy, layout",
               title_fontsize=8)
    return fig


def throughput(ms: list[RunMetrics], path: Path) -> Path:
    return _save(draw_throughput(ms), path)


PINGPONG_PARTS = (("local transfers", lambda m: m.per_op["transfers"] - m.per_op["crossSocketTransfers"], "#66c2a5"),
                  ("cross-socket transfers", lambda m: m.per_op["crossSocketTransfers"], "#fc8d62"),
                  ("local dirty reads", lambda m: m.per_op["dirtyReads"] - m.per_op["dirtyReadsRemote"], "#8da0cb"),
                  ("remote dirty reads", lambda m: m.per_op["dirtyReadsRemote"], "#e78ac3"))


def draw_pingpong(ms: list[RunMetrics]):
    """Stacked bars per run, grouped by machine size: local and cross-socket transfers, local and remote dirty reads."""
    groups = size_groups(ms)
    fig = _figure(max(6.0, 0.42 * len(ms) + 4.0), 4.8)
    axes = _group_axes(fig, groups)
    for ax, (name, g) in zip(axes, groups):
        x = _bar_x(ax, g)
        bottom = np.zeros(len(g))
        for label, f, colour in PINGPONG_PARTS:
            v = np.array([f(m) for m in g], dtype=float)
            ax.bar(x, v, 0.75, bottom=bottom, label=label, color=colour, edgecolor="white", linewidth=0.4)
            bottom += v
        ax.margins(y=0.08)
    axes[0].set_ylabel("transfers and dirty reads per operation")
    fig.suptitle(_wrap("Cache-line ping-pong per operation (get+put pair), counted by the coherence monitor RTL, "
                       "by machine size", fig.get_figwidth(), 11), fontsize=11)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles[::-1], labels[::-1], loc="outside right center", fontsize=8)   # top to bottom, as stacked
    return fig


def pingpong(ms: list[RunMetrics], path: Path) -> Path:
    return _save(draw_pingpong(ms), path)


def field_lines(m: RunMetrics) -> list[tuple[tuple[str, ...], dict]]:
    """The run's lines that hold fields, in the order of their first field: (the fields on the line, the line's
    per-operation counts). Fields on one line have the same counts (coherence is per line), so one entry per line."""
    out: dict[tuple[int, ...], tuple[list[str], dict]] = {}
    for name, f in m.fields.items():
        if f.get("lines"):
            out.setdefault(tuple(f["lines"]), ([], f))[0].append(name.split(".", 1)[-1])
    return [(tuple(names), f) for names, f in out.values()]


def draw_fields(ms: list[RunMetrics]):
    """Per run, one bar per line that holds fields (labelled in the legend with its fields): its transfers (solid)
    and dirty reads (light, dotted) per operation."""
    groups = size_groups(ms)
    kinds: list[tuple[str, ...]] = []        # the distinct sets of fields sharing a line, in order of appearance
    for m in ordered(ms):
        kinds += [names for names, _ in field_lines(m) if names not in kinds]
    structs = sorted({n.split(".", 1)[0] for m in ms for n in m.fields if "." in n})
    fig = _figure(max(6.5, 0.5 * len(ms) + 4.5), 5.0)
    if not kinds:
        ax = fig.add_subplot()
        ax.axis("off")
        ax.text(0.5, 0.5, "No field of these runs is mapped to a line (no layout in the manifests).", ha="center",
                va="center")
        return fig
    colour = {k: LINE_COLOURS[i % len(LINE_COLOURS)] for i, k in enumerate(kinds)}
    axes = _group_axes(fig, groups)
    for ax, (name, g) in zip(axes, groups):
        x = _bar_x(ax, g)
        for xi, m in zip(x, g):
            lines = field_lines(m)
            width = 0.8 / len(lines) if lines else 0.8
            for j, (names, f) in enumerate(lines):
                pos = xi + (j - (len(lines) - 1) / 2) * width
                t, d = f.get("transfers", 0.0), f.get("dirtyReads", 0.0)
                ax.bar(pos, t, width, color=colour[names], edgecolor=EDGE, linewidth=0.5)
                ax.bar(pos, d, width, bottom=t, color=colour[names], alpha=0.45, hatch="...", edgecolor=EDGE, linewidth=0.5)
                if t + d == 0:
                    ax.text(pos, 0, "0", ha="center", va="bottom", fontsize=7, color=colour[names])
        ax.margins(y=0.08)
    axes[0].set_ylabel("transfers + dirty reads per operation")
    of = f" of {', '.join(structs)}" if structs else ""
    fig.suptitle(_wrap(f"Per cache line: ping-pong per operation on each line holding fields{of}. Coherence is per "
                       "line: the fields on one line share its counts, so there is one bar per line, not per field",
                       fig.get_figwidth(), 11), fontsize=11)
    layouts = {k: _layouts([m for m in ms if k in [names for names, _ in field_lines(m)]]) for k in kinds}
    handles = [Patch(facecolor=colour[k], edgecolor=EDGE, linewidth=0.5,
                     label="\n".join(textwrap.wrap(f"line of {', '.join(k)} (layout {', '.join(layouts[k])})", 60)))
               for k in kinds]
    handles += [Patch(facecolor="#bbbbbb", edgecolor=EDGE, linewidth=0.5, label="transfers"),
                Patch(facecolor="#bbbbbb", alpha=0.45, hatch="...", edgecolor=EDGE, linewidth=0.5, label="dirty reads")]
    ncol = max(1, min(len(handles), int(fig.get_figwidth() // 4.5)))
    text_lines = sum(h.get_label().count("\n") + 1 for h in handles)
    fig.set_figheight(5.0 + 0.2 * math.ceil(text_lines / ncol) + 0.1 * math.ceil(len(handles) / ncol))  # room for the legend
    fig.legend(handles=handles, loc="outside lower center", ncol=ncol, fontsize=8)
    return fig


def fields(ms: list[RunMetrics], path: Path) -> Path:
    """Traffic per operation on each line holding fields: where the layout moves the ping-pong."""
    return _save(draw_fields(ms), path)


def socket_matrix(m: RunMetrics) -> np.ndarray:
    """The monitor's socket x socket transfers per operation (from row to column), at the run's own size: the
    monitor counts in a matrix as large as it was built for, of which a run of S sockets uses the top-left S x S."""
    sockets = m.run.manifest.system.sockets
    return np.array(m.analysis.rtl.matrix, dtype=float)[:sockets, :sockets] / m.run.ops


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


def draw_matrices(ms: list[RunMetrics]):
    """One panel per run at its own number of sockets, grouped by machine size. The colour is cross-socket
    transfers per operation on one log scale for every panel; the diagonal (same-socket transfers) is grey with
    its value written in, since a socket's cores passing the line among themselves would swamp the scale."""
    groups = size_groups(ms)
    mats = {id(m): socket_matrix(m) for m in ms}
    off = np.concatenate([mats[id(m)][~np.eye(len(mats[id(m)]), dtype=bool)] for m in ms] or [np.zeros(0)])
    pos = off[off > 0]
    norm = LogNorm(*_log_range(float(pos.min()), float(pos.max())) if pos.size else (0.1, 1.0))
    cols = min(4, max(len(g) for _, g in groups))
    rows = sum(math.ceil(len(g) / cols) for _, g in groups)
    fig = _figure(max(6.5, 2.8 * cols + 1.6), 3.0 * rows + 1.6)
    axes = fig.subplots(rows, cols, squeeze=False)
    used = []
    r = 0
    for _, g in groups:
        for i, m in enumerate(g):
            ax = axes[r + i // cols, i % cols]
            used.append(ax)
            mat = mats[id(m)]
            n = len(mat)
            diag = np.eye(n, dtype=bool)
            ax.imshow(np.ma.masked_array(mat, mask=diag | (mat <= 0)), cmap=MATRIX_CMAP, norm=norm)
            for k in range(n):
                ax.add_patch(Rectangle((k - 0.5, k - 0.5), 1, 1, facecolor="#d9d9d9", edgecolor="none"))
                ax.text(k, k, _diag_text(mat[k, k]), ha="center", va="center", fontsize=7 if n <= 4 else 5.5)
            ax.set_xticks(range(n))
            ax.set_yticks(range(n))
            ax.tick_params(labelsize=6, length=2)
            ax.set_xlabel("to socket", fontsize=7)
            ax.set_ylabel("from socket", fontsize=7)
            ax.set_title(f"{textwrap.fill(m.label, 36, break_on_hyphens=False)}\nsame socket {np.trace(mat):.2f}, cross-socket "
                         f"{mat[~diag].sum():.2f} /op", fontsize=8)
        for i in range(len(g), math.ceil(len(g) / cols) * cols):
            axes[r + i // cols, i % cols].axis("off")
        r += math.ceil(len(g) / cols)
    sm = plt.cm.ScalarMappable(norm=norm, cmap=MATRIX_CMAP)
    cb = fig.colorbar(sm, ax=used, shrink=0.9 if rows == 1 else 0.5, aspect=25 if rows == 1 else 35,
                      ticks=_steps(norm.vmin, norm.vmax), format="%g")
    cb.minorticks_off()
    cb.set_label("cross-socket transfers per operation (log scale)", fontsize=8)
    cb.ax.tick_params(labelsize=7)
    width = fig.get_figwidth()
    fig.suptitle(_wrap("Ownership transfers per operation (get+put pair), from socket (row) to socket (column), "
                       "counted by the coherence monitor RTL", width, 11), fontsize=11)
    fig.supxlabel(_wrap("Colour: cross-socket transfers per operation, one log scale for every panel; white: none. "
                        "Grey diagonal, with its value: same-socket transfers (between cores of one socket), left out of "
                        "the colour scale since they would swamp it.", width, 8), fontsize=8)
    return fig


def matrices(ms: list[RunMetrics], path: Path) -> Path:
    return _save(draw_matrices(ms), path)


def scaling_series(ms: list[RunMetrics]) -> dict[tuple[str, str, str, str], list[RunMetrics]]:
    """The runs without an intruder of the workloads run at more than one size, by (workload, policy, layout,
    extra flags), each in order of machine size; {} if no workload has runs at more than one size."""
    series: dict[tuple[str, str, str, str], list[RunMetrics]] = {}
    for m in ordered(ms):
        if not m.spec.intruder_period_us:
            series.setdefault((m.spec.workload, m.spec.policy, m.spec.layout, extra_text(m.spec.extra)), []).append(m)
    scaled = {k[0] for k, v in series.items() if len({m.spec.sockets for m in v}) > 1}
    return {k: v for k, v in series.items() if k[0] in scaled}


def draw_scaling(ms: list[RunMetrics]):
    """Throughput and transfers per operation against sockets: a line per policy and layout with runs at more than
    one size, a lone marker for one with runs at one size only. None if no policy has runs at more than one size."""
    series = scaling_series(ms)
    if not series:
        return None
    fig = _figure(10.5, 4.4)
    a1, a2 = fig.subplots(1, 2)
    sockets = sorted({m.spec.sockets for v in series.values() for m in v})
    cores = {m.spec.cores_per_socket for v in series.values() for m in v}
    workloads = {k[0] for k in series}
    for (workload, policy, layout, extra), v in series.items():
        xs = [m.spec.sockets for m in v]
        single = len(set(xs)) == 1
        label = (f"{policy}/{layout}" + (f" {extra}" if extra else "")
                 + (f" ({v[0].spec.sockets}x{v[0].spec.cores_per_socket} only)" if single else ""))
        label = label if workloads == {"lockref"} else f"{workload} {label}"
        kw = dict(color=policy_colour(policy), linestyle="none" if single else LAYOUT_LINE.get(layout, "-."),
                  marker="o" if layout != "shared" else "s", markersize=6 if single else 5, label=label,
                  markerfacecolor="white" if single else policy_colour(policy))
        a1.plot(xs, [m.throughput / 1e6 for m in v], **kw)
        a2.plot(xs, [m.per_op["transfers"] for m in v], **kw)
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
    a2.set_title("Ownership transfers per operation (same- and cross-socket)", fontsize=10)
    fig.suptitle("Scaling with the number of sockets (runs without an intruder); colour: policy, line: layout",
                 fontsize=11)
    fig.legend(handles=a1.get_legend_handles_labels()[0], loc="outside right center", fontsize=8)
    return fig


def scaling(ms: list[RunMetrics], path: Path) -> Path | None:
    fig = draw_scaling(ms)
    return _save(fig, path) if fig is not None else None


def checks(ms: list[RunMetrics], path: Path) -> Path:
    """Per run, the monitor's items split by their gem5 evidence: matched, explained, unexplained."""
    ms = [m for m in ms if not m.check["verdict"].startswith("not checked")]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(ms) + 2), 4))
    if not ms:
        ax.axis("off")
        ax.text(0.5, 0.5, "No run checked against gem5: the runs are event format 1 (issue-time events)\n"
                "or hold none of gem5's evidence; see the Checks table.", ha="center", va="center")
        return _save(fig, path)
    x = np.arange(len(ms))
    parts = [("matched with gem5's evidence", lambda c: c["matched"], "#4c72b0"),
             ("gem5 only, explained (before/after the trace, writeback forwards)",
              lambda c: c["ownerBeforeTrace"] + c["requesterAfterTrace"] + c["writebackForwards"], "#aaaaaa"),
             ("unexplained (monitor only + gem5 only)", lambda c: c["unexplained"], "#c44e52")]
    bottom = np.zeros(len(ms))
    for label, value, colour in parts:
        v = np.array([value(m.check) / m.run.ops for m in ms], dtype=float)
        ax.bar(x, v, 0.6, bottom=bottom, label=label, color=colour)
        bottom += v
    ax.set_xticks(x, [m.label for m in ms], rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("transfers + dirty reads per operation")
    ax.set_title("Checks: the monitor's transfers and dirty reads against gem5's own evidence")
    ax.legend(fontsize=7)
    return _save(fig, path)


def draw_intervals(ms: list[RunMetrics]):
    """Timed runs only: ops per interval over the window (will-it-scale's `total:` line), one panel per
    workload and machine size, one line per run (colour: policy, style: layout). (Per-thread min and max
    per interval are a few ops at most in a short interval, so they are in the tables, not drawn.) None
    when no run is timed."""
    from cohtb.analysis.steady import series

    timed = [(m, series(m.run)) for m in ordered(ms)]
    timed = [(m, s) for m, s in timed if s is not None]
    if not timed:
        return None
    panels: dict[str, list] = {}
    for m, s in timed:
        panels.setdefault(f"{m.spec.workload}, {size_name(m)}", []).append((m, s))
    cols = min(3, len(panels))
    rows = math.ceil(len(panels) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5.2 * cols, 3.4 * rows), squeeze=False, layout="constrained")
    for ax, (name, group) in zip(axes.flat, panels.items()):
        for i, (m, s) in enumerate(group):
            t = np.array(s.starts_us) + s.interval_us / 2
            per_us = 1 / s.interval_us
            colour = POLICY_COLOURS.get(m.spec.policy, MORE_COLOURS[i % len(MORE_COLOURS)])
            ax.plot(t, np.array(s.total) * per_us, color=colour, ls=LAYOUT_LINE.get(m.spec.layout, "-"), marker=".",
                    label=short_label(m))
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("µs into the window", fontsize=8)
        ax.set_ylabel("ops per simulated µs", fontsize=8)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=6)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle("Ops per interval over the window, all threads (will-it-scale's per-interval total); "
                 "colour: policy, line: layout", fontsize=10)
    return fig


def intervals(ms: list[RunMetrics], path: Path) -> Path | None:
    fig = draw_intervals(ms)
    return _save(fig, path) if fig is not None else None


# The monitor's counts per interval a live run's snapshots hold (live.json), one panel each.
MONITOR_SERIES = (("transfers", ("transfers",)), ("cross-socket transfers", ("crossSocketTransfers",)),
                  ("dirty reads (local + remote)", ("dirtyReadsLocal", "dirtyReadsRemote")),
                  ("invalidations", ("invalidations",)))


def monitor_series(m: RunMetrics) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """A live run's snapshots as rates: each whole interval's middle (µs from the first traced event) and, per
    panel of MONITOR_SERIES, its counts per simulated µs. The last interval ends with the stream, part way: left
    out. None for a run counted afterwards (no live.json: the report does not replay it a second time)."""
    from cohtb.monitor import live

    if not (m.run.path / "live.json").exists():
        return None
    doc = live.of_run(m.run)
    whole = doc["intervals"][:-1]
    interval_us = doc["interval_ticks"] / 1e6
    t = (np.arange(len(whole)) + 0.5) * interval_us
    return t, {name: np.array([sum(iv[k] for k in keys) for iv in whole], dtype=float) / interval_us
               for name, keys in MONITOR_SERIES}


def draw_monitor(ms: list[RunMetrics]):
    """Live runs only: the coherence monitor's snapshots over simulated time, one panel per count, one line per
    run (colour: policy, line: layout). None when no run was live."""
    got = [(m, s) for m in ordered(ms) if (s := monitor_series(m)) is not None and len(s[0])]
    if not got:
        return None
    fig, axes = plt.subplots(2, 2, figsize=(11, 6.4), squeeze=False, layout="constrained", sharex=True)
    for ax, (name, _) in zip(axes.flat, MONITOR_SERIES):
        for i, (m, (t, rates)) in enumerate(got):
            colour = POLICY_COLOURS.get(m.spec.policy, MORE_COLOURS[i % len(MORE_COLOURS)])
            ax.plot(t, rates[name], color=colour, ls=LAYOUT_LINE.get(m.spec.layout, "-"), marker=".",
                    label=f"{short_label(m)}, {size_name(m)}")
        ax.set_title(name, fontsize=9)
        ax.set_ylabel("per simulated µs", fontsize=8)
        ax.set_ylim(0, max(max(rates[name].max() for _, (_, rates) in got) * 1.12, 0.05))   # room above the top point
    for ax in axes[-1]:
        ax.set_xlabel("µs from the first traced event", fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", fontsize=7, ncol=min(3, len(labels)))   # off the data
    fig.suptitle("The coherence monitor live: its snapshots over simulated time (CSR snapshot every interval); "
                 "colour: policy, line: layout", fontsize=10)
    return fig


def monitor(ms: list[RunMetrics], path: Path) -> Path | None:
    fig = draw_monitor(ms)
    return _save(fig, path) if fig is not None else None
