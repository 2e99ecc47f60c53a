"""Figures of docs/results.md: per seed, simulated throughput of base and new with the repetitions' range
beside the published speed-up (under a shape rule, the speed-up over the sockets per curve, beside the published
range, and the time per operation by the hottest line's turns); and seed 004's series over the window, before and
after the disturbance: ops, locked share and the monitor's transfers per operation per interval. A policy's colour
and a layout's hatch: cohtb/report/palette.py, as in the report's figures; what is neither (the simulated and
published speed-ups, a declaration, a kind of turn, an arm of the turns figure) has its own ink, grey, pale yellow,
marker or hatch, none of them like a policy's or used for two things."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from cohtb.analysis import lock_queue  # noqa: E402
from cohtb.analysis.compare import CHAIN_ROWS, turns_per_op  # noqa: E402
from cohtb.analysis.steady import series  # noqa: E402
from cohtb.experiments.reproduce import SeriesResult  # noqa: E402
from cohtb.report.palette import EDGE, LAYOUT_HATCH, hatch_colour, is_kernels, spec_colour  # noqa: E402
from cohtb.report.plots import DENTRY_LAYOUTS, DPI, figure_wrap  # noqa: E402
from cohtb.run.kernels import variant, variant_dentry  # noqa: E402
from cohtb.experiments.judging import SeedResult  # noqa: E402
from cohtb.report.results import profile_figure_name, shape_figure_name, turns_figure_name  # noqa: E402
from cohtb.tables import slug  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

SIMULATED = "#222222"   # the simulated speed-up's markers: not a policy, so none of the palette's colours
# The published speed-ups' range at a socket count (the shape figure): a pale yellow no policy, kernel or grey of
# another figure is near (a light grey bar looked like the turns figure's same-core grey).
PUBLISHED_RANGE = "#f2e6a0"


def speedup_label(e) -> str:
    """The speed-up axis' label, wrapped between words only (a kernel's name such as lockref-off stays whole)."""
    return textwrap.fill(f"speed-up {e.new_name} / {e.base_name} (log)", 32, break_on_hyphens=False)


def _log_limits(values: list[float], pad: float = 0.08) -> tuple[float, float]:
    """A log axis' ends around values and 1x, with pad of its span each side: a marker at the end is not cut."""
    lo, hi = np.log(min([1.0, *values])), np.log(max([1.0, *values]))
    span = max(hi - lo, np.log(1.2))
    return float(np.exp(lo - pad * span)), float(np.exp(hi + pad * span))


# The speed-ups a tick may be labelled with, the plainest first: 1x, the 1-2-5 steps, then the steps between them.
# An axis takes them in this order while they fit (_speedup_ticks), so a short axis still gets the steps between
# 1x and 2x, and every point lies between two labels near enough to read it by; its ends are the steps next beyond
# its points (_speedup_axis), so the finer steps at the end of the list keep it from growing by half.
TICK_STEPS = (1, 2, 5, 0.5, 10, 0.2, 20, 0.1, 50, 100, 1.5, 3, 0.75, 0.3, 7, 15, 30, 70, 1.25, 2.5, 4, 0.9, 1.1,
              0.6, 1.75, 0.8, 1.4, 6, 8, 0.4, 0.7, 1.2, 1.3, 0.95, 1.05)


def _speedup_ticks(lo: float, hi: float, most: int) -> list[float]:
    """Plain speed-up ticks (1x, 1.5x, 2x ...) on a log axis from lo to hi, at most `most`, each at least a
    `most`-th of the axis from the others: 1x and the axis' ends, then as many more as fit, the plainest first."""
    gap = np.log(hi / lo) / most
    ticks: list[float] = []
    for v in (1, lo, hi, *TICK_STEPS):
        if lo <= v <= hi and all(abs(np.log(v / t)) >= gap for t in ticks):
            ticks.append(v)
    return sorted(ticks)


def _speedup_axis(ax, which: str, values: list[float], most: int) -> None:
    """ax's x or y axis (which) as a log speed-up axis around values and 1x: its ends at the plain steps beyond
    them (a point past the last label could not be read), at most `most` ticks labelled 1x, 1.5x ... between."""
    lo, hi = _log_limits(values)
    lo = max([v for v in TICK_STEPS if v <= lo], default=lo)
    hi = min([v for v in TICK_STEPS if v >= hi], default=hi)
    axis = getattr(ax, f"{which}axis")
    getattr(ax, f"set_{which}scale")("log")
    getattr(ax, f"set_{which}lim")(lo, hi)
    axis.set_ticks(_speedup_ticks(lo, hi, most))
    axis.set_minor_locator(matplotlib.ticker.NullLocator())
    axis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))


def spec_layout(spec) -> str:
    """The layout a run template's bar shows: for the guest benchmark, the dentry its kernel builds (plots.run_layout
    does the same for a recorded run, from the dentry its build had)."""
    if not is_kernels(spec):
        return spec.layout
    return DENTRY_LAYOUTS.get(variant_dentry(variant(spec.kernel)).name, spec.layout)


def _throughput_bars(res: SeedResult, points: list, ax, grouped: bool = False) -> list[Patch]:
    """Base and new throughput per point (bar: mean; whisker: min-max of the repetitions) into ax; the legend's
    handles. grouped: the points labelled by their sockets under their curve's name."""
    e = res.experiment
    x = np.arange(len(points))
    handles = []
    for k, (name, spreads, specs) in enumerate(((e.base_name, [p.base_throughput for p in points],
                                                 [p.point.base for p in points]),
                                                (e.new_name, [p.new_throughput for p in points],
                                                 [p.point.new for p in points]))):
        mean = np.array([s.mean for s in spreads]) / 1e6
        lo = mean - np.array([s.lo for s in spreads]) / 1e6
        hi = np.array([s.hi for s in spreads]) / 1e6 - mean
        # colour: the run's policy, or its kernel's (palette.spec_colour); hatch: its layout, a kernel's the dentry it
        # builds (the base and new of a layout change share a colour), as in the report's figures
        bars = ax.bar(x + (k - 0.5) * 0.38, mean, 0.38, yerr=[lo, hi], capsize=3, edgecolor=EDGE,
                      color=[spec_colour(s) for s in specs])
        for b, spec in zip(bars, specs):
            b.set_hatch(LAYOUT_HATCH.get(spec_layout(spec), ""))
            b.set_hatchcolor(hatch_colour(spec_colour(spec)))
        first = specs[0]
        # the name the seed gives, with what the colour and hatch stand for unless the name says it
        # a kernel's run: the kernel is its layout too (the spec's layout is not what its dentry has)
        what = ([] if name in (first.policy, first.kernel) else [first.policy]) + (
            [] if name == first.layout or first.kernel else [f"layout {first.layout}"])
        label = f"layout {name}" if name == first.layout else name
        handles.append(Patch(facecolor=spec_colour(first), edgecolor=EDGE, hatch=LAYOUT_HATCH.get(spec_layout(first), ""),
                             label=f"{label} ({', '.join(what)})" if what else label))
    if grouped:   # each point by its sockets, each curve's name under its group
        ax.set_xticks(x, [f"{n} socket{'s' * (n > 1)}" for n in (p.point.base.sockets for p in points)], fontsize=8)
        groups = {}
        for i, p in enumerate(points):
            groups.setdefault(p.point.curve, []).append(i)
        names = ax.secondary_xaxis(-0.09)
        names.set_xticks([float(np.mean(i)) for i in groups.values()], [textwrap.fill(c, 60) for c in groups],
                         fontsize=8)
        names.tick_params(length=0)
        names.spines["bottom"].set_visible(False)
    else:
        ax.set_xticks(x, [textwrap.fill(p.point.label, 14) for p in points], fontsize=8)
    ax.set_xlim(-0.6, len(points) - 0.4)
    means = [p.base_throughput.mean for p in points] + [p.new_throughput.mean for p in points]
    if max(means) > 10 * min(means):    # a bar ten times another's would flatten it: log scale
        ax.set_yscale("log")
        bottom = 10 ** np.floor(np.log10(min(means) / 1e6))   # a decade under the lowest: a bar, not a sliver
        ax.set_ylim(bottom=bottom)
        steps = [m * bottom * 10 ** k for k in range(6) for m in (1, 2, 5) if m * bottom * 10 ** k <= max(means) / 1e6 * 1.2]
        ax.set_yticks(steps, [f"{v:g}" for v in steps])   # plain numbers at 1-2-5 steps, not 2x10^-1
        ax.yaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_ylabel("operations per simulated µs" + (" (log)" if ax.get_yscale() == "log" else ""))
    ax.set_title(f"Simulated throughput ({e.repetitions} repetitions: mean, min-max)", fontsize=10)
    return handles


LABEL_LINE_IN = 0.13   # a line of the speed-up panel's row labels (7 pt, 0.12 in a line), with room to spare


def _label_rows(labels: list[str]) -> tuple[np.ndarray, float]:
    """Each row's place on the speed-up panel, in lines of label text from its top, and the panel's height in
    lines: a row is as tall as its label wraps to and half a line's gap, so no two labels overlap however many
    lines each has (a row per label at equal steps put three-line labels on top of each other)."""
    heights = np.array([lab.count("\n") + 1.5 for lab in labels], dtype=float)
    return np.cumsum(heights) - heights / 2, float(heights.sum())


def draw_seed(res: SeedResult):
    """Left: throughput of base and new per configuration (bar: mean; whisker: min-max of the repetitions).
    Right: the simulated speed-up (range) beside each published one, on a log scale; under a shape rule the
    speed-ups are the shape figure's (draw_shape), and the throughput stands alone, its points grouped by curve."""
    e = res.experiment
    points = [p for p in res.points if p.complete]
    curves = shape_curves(res)
    if curves:
        fig, ax = plt.subplots(figsize=(10, 4.4), layout="constrained")
        handles = _throughput_bars(res, points, ax, grouped=True)
        fig.legend(handles=handles, loc="outside lower center", ncol=4, fontsize=8)
        fig.suptitle(figure_wrap(f"Seed {e.seed}, declaration {e.declaration.id}: {e.title}", fig.get_figwidth(), 11),
                     fontsize=11)
        return fig
    labels, sim, sim_lo, sim_hi, pub = [], [], [], [], []
    for p in points:
        for pb in p.point.published:
            labels.append(textwrap.fill(f"{p.point.label}: {pb.configuration}", 34))
            sim.append(p.ratio.mean)
            sim_lo.append(p.ratio.mean - p.ratio.lo)
            sim_hi.append(p.ratio.hi - p.ratio.mean)
            pub.append(pb.ratio)
    y, lines = _label_rows(labels)
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(10, max(3.8, lines * LABEL_LINE_IN + 1.8)), layout="constrained",
                                 gridspec_kw={"width_ratios": [3, 2]})
    handles = _throughput_bars(res, points, ax)
    bx.errorbar(sim, y, xerr=[sim_lo, sim_hi], fmt="o", color=SIMULATED, capsize=3, label="simulated speed-up (range)")
    bx.plot(pub, y, "D", color="#333333", markerfacecolor="white", label="published speed-up")
    bx.axvline(1, color="#999999", lw=1)
    # a narrow panel's axis: fewer labels than an axis up a panel, which are a line tall, not 5 characters wide
    _speedup_axis(bx, "x", [*pub, *(m - d for m, d in zip(sim, sim_lo)), *(m + d for m, d in zip(sim, sim_hi))], 6)
    bx.set_ylim(lines, 0)    # top to bottom
    bx.set_yticks(y, labels, fontsize=7)
    bx.set_xlabel(speedup_label(e))
    bx.set_title("Speed-up: simulated vs published", fontsize=10)
    # one legend for both panels, under them: never over a bar or a marker, and no empty band beside a panel
    fig.legend(handles=handles + bx.get_legend_handles_labels()[0], loc="outside lower center", ncol=4, fontsize=8)
    fig.suptitle(figure_wrap(f"Seed {e.seed}, declaration {e.declaration.id}: {e.title}", fig.get_figwidth(), 11),
                 fontsize=11)
    return fig


def shape_curves(res: SeedResult) -> list[str]:
    """The curves a shape rule judges (points over the socket counts), in the experiment's order; none under
    another rule."""
    return list(res.curves)


def draw_shape(res: SeedResult):
    """One panel per curve of a shape rule: the simulated speed-up at each socket count (mean; whisker: min-max over
    the pairs of repetitions) beside the published ones (a bar: their range over the seed's configurations at that
    count), the minimum effect shaded around 1x: the series the rule judges, not its points one by one."""
    e, d = res.experiment, res.declaration
    verdicts = res.curves
    names = shape_curves(res)
    fig, axes = plt.subplots(1, len(names), figsize=(4.6 * len(names), 4.2), layout="constrained", sharey=True,
                             squeeze=False)
    every = [r for p in res.points for r in (p.ratio.lo, p.ratio.hi, *(q.ratio for q in p.point.published))]
    for ax, name in zip(axes[0], names):
        ps = sorted((p for p in res.points if p.point.curve == name), key=lambda p: p.point.base.sockets)
        n = [p.point.base.sockets for p in ps]
        told = [p for p in ps if p.point.published]   # a count the seed published nothing for has no bar
        published = [[q.ratio for q in p.point.published] for p in told]
        # the minimum effect's edges as lines: a light grey band would look like the turns figure's same-core grey
        for edge in (1 - d.min_effect, 1 + d.min_effect):
            ax.axhline(edge, color="#999999", lw=1, ls="--", zorder=1,
                       label=f"the minimum effect (±{d.min_effect:.0%})" if edge > 1 else None)
        ax.axhline(1, color="#999999", lw=1, zorder=1)
        at = [p.point.base.sockets for p in told]
        ax.vlines(at, [min(v) for v in published], [max(v) for v in published], color=PUBLISHED_RANGE, lw=9,
                  zorder=2, label="published (range over its configurations)")
        ax.plot(at, [np.exp(np.mean(np.log(v))) for v in published], "D", color="#333333", markerfacecolor="white",
                zorder=3, label="published (geometric mean)")
        ax.errorbar(n, [p.ratio.mean for p in ps], yerr=[[p.ratio.mean - p.ratio.lo for p in ps],
                                                         [p.ratio.hi - p.ratio.mean for p in ps]],
                    fmt="o-", color=SIMULATED, capsize=3, zorder=4, label="simulated (mean, min-max)")
        ax.set_xscale("log", base=2)
        ax.set_xticks(n, [str(k) for k in n])
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.set_xlim(min(n) / 1.4, max(n) * 1.4)
        ax.set_xlabel("sockets")
        _speedup_axis(ax, "y", every, 10)
        said = "reproduced" if verdicts[name].reproduced else "not reproduced"
        ax.set_title(textwrap.fill(f"{name}: {said}", 44), fontsize=9)
    axes[0][0].set_ylabel(speedup_label(e))
    fig.legend(handles=axes[0][0].get_legend_handles_labels()[0], loc="outside lower center", ncol=2, fontsize=8)
    fig.suptitle(figure_wrap(f"Seed {e.seed}, declaration {d.id}: the speed-up over the sockets, judged as a series "
                             f"({d.rule})", fig.get_figwidth(), 11), fontsize=11)
    return fig


# Each kind of turn's grey, darkest first from the bar's foot (CHAIN_ROWS' order), and the time the line's turns
# leave white: greys, so that no policy's colour is spent on something that is not a policy, and none of them
# percpu's dark grey (#444444), which a bar of seed 003 means.
TURN_GREYS = {"other_socket": "#000000", "same_socket": "#8c8c8c", "same_core": "#c8c8c8"}
NOT_TURNS = ("not on the line's turns", "white")
# The base arm's bars; the new arm's are plain. Not a layout's hatch (palette.LAYOUT_HATCH): "///" says "layout
# shared" on every other bar of the page.
BASE_HATCH = "xx"


def turn_curves(res: SeedResult) -> list[str]:
    """The curves of a shape rule whose every run has its hottest line's chain: a turns figure's panels."""
    every = [m for p in res.points for m in (*p.base, *p.new)]
    return shape_curves(res) if every and all(turns_per_op(m) for m in every) else []


def draw_turns(res: SeedResult):
    """One panel per curve of a shape rule, each on its own scale (the curves are different workloads): per socket
    count, base (hatched) then new, each bar the mean simulated time per operation (1 / throughput) stacked by the
    hottest line's turns per operation (cohtb/analysis/compare.py, turns_per_op), means over the repetitions, and
    the rest of the time; whisker: the extremes of the time per operation."""
    e, d = res.experiment, res.declaration
    names = turn_curves(res)
    fig, axes = plt.subplots(1, len(names), figsize=(4.6 * len(names), 4.4), layout="constrained", squeeze=False)
    for ax, name in zip(axes[0], names):
        ps = sorted((p for p in res.points if p.point.curve == name), key=lambda p: p.point.base.sockets)
        for i, p in enumerate(ps):
            for k, runs in enumerate((p.base, p.new)):
                x = i * 2.6 + k
                ts = [turns_per_op(m) for m in runs]
                time = [t.time_ns_per_op for t in ts]
                heights = [float(np.mean([t.ns_per_op[kind] for t in ts])) for _, kind in CHAIN_ROWS]
                rest = float(np.mean(time)) - sum(heights)
                # a line's span is at most the trace's region, whose share of each operation is the time per operation
                assert rest > -1e-6 * np.mean(time), f"{name}: the hottest line's turns outlast the runs"
                colours = [TURN_GREYS[kind] for _, kind in CHAIN_ROWS] + [NOT_TURNS[1]]
                bottoms = np.cumsum([0.0, *heights])
                for h, bottom, colour in zip([*heights, max(rest, 0.0)], bottoms, colours):
                    ax.bar(x, h, 0.8, bottom=bottom, color=colour, edgecolor=EDGE, lw=0.6,
                           hatch=BASE_HATCH if k == 0 else "", hatchcolor=hatch_colour(colour))
                ax.errorbar(x, np.mean(time), yerr=[[np.mean(time) - min(time)], [max(time) - np.mean(time)]],
                            fmt="none", color=EDGE, capsize=3)
        ax.set_xticks([i * 2.6 + 0.5 for i in range(len(ps))],
                      [f"{p.point.base.sockets} socket{'s' * (p.point.base.sockets > 1)}" for p in ps], fontsize=8)
        ax.set_title(textwrap.fill(name, 44), fontsize=9)
        ax.set_ylabel("simulated ns per operation\n(1 / throughput, all threads)", fontsize=9)
    handles = [Patch(facecolor=TURN_GREYS[kind], edgecolor=EDGE, label=label) for label, kind in CHAIN_ROWS]
    handles.append(Patch(facecolor=NOT_TURNS[1], edgecolor=EDGE, label=NOT_TURNS[0]))
    # the arms: one swatch, the base's hatch (a plain white one would look like the time off the line's turns)
    handles.append(Patch(facecolor="white", edgecolor=EDGE, hatch=BASE_HATCH,
                         label=f"hatched: {e.base_name} (left of each pair; {e.new_name} right, plain)"))
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=8, title="the hottest line went to",
               title_fontsize=8)
    fig.suptitle(figure_wrap(f"Seed {e.seed}, declaration {d.id}: the time per operation by where the hottest line "
                             f"went ({e.repetitions} repetitions: mean, min-max)", fig.get_figwidth(), 11), fontsize=11)
    return fig


def draw_series(s: SeriesResult):
    """Over the window, one line per policy or kernel (mean over the repetitions, band: min-max; dashed: a control
    without the intruder), the disturbance marked: ops per interval (will-it-scale's total), the share of lockref
    updates that took the lock (the SE workloads count it; in a kernel's runs, the share that queued for it, read
    from the kernel's MCS nodes: cohtb/analysis/lock_queue.py), and the monitor's transfers per operation in each
    interval (its snapshots: cohtb/monitor/live.py)."""
    fig, (ax, lx, tx) = plt.subplots(3, 1, figsize=(9, 9), layout="constrained", sharex=True)
    templates = s.series.labelled()
    controls = {c for _, c in s.series.controls}
    # the middle panel: the kernel's queued acquisitions, or the workload's own count of locked updates
    kernel_side = lock_queue.counted([m for runs in s.runs.values() for m in runs])
    listed = False        # the top panel marks the lister's takes of the lock, read from the trace
    for label, runs in s.runs.items():
        kept = [m for m in runs if series(m.run) and m.analysis.series and m.analysis.series["origin_tick"] is not None]
        got = [(m.run, series(m.run), m.analysis.series) for m in kept]
        queues = [m.analysis.lock_queue for m in kept]
        if not got:
            continue
        interval_us = got[0][1].interval_us
        n = min(len(w.total) for _, w, _ in got)
        ops = np.array([w.total[:n] for _, w, _ in got], dtype=float)
        t = (np.arange(n) + 0.5) * interval_us
        colour = spec_colour(templates[label])   # a kernel's run: its kernel's colour
        # dashed: a control without the intruder (in the kernel's runs the lister is there, its first listing
        # after the run's end: only the series' controls say which they are)
        style = "--" if label in controls or not templates[label].intruder_period_us else "-"

        def band(axis, x, rows):
            axis.plot(x, rows.mean(axis=0), color=colour, ls=style, label=label, marker="o", ms=3,
                      mfc="white" if style == "--" else colour)   # a control's markers hollow: its dashes are short
            axis.fill_between(x, rows.min(axis=0), rows.max(axis=0), color=colour, alpha=0.2)

        band(ax, t, ops / interval_us)   # ops per simulated µs
        # a share of the lockref updates (a stat does a get and a put), not of the operations
        per_op = np.array([(r.manifest.workload.lockref_updates or 2 * r.ops) / max(r.ops, 1) for r, _, _ in got])
        if not kernel_side and all(w.locked for _, w, _ in got):
            locked = np.array([w.locked[:n] for _, w, _ in got], dtype=float)
            band(lx, t, locked / np.maximum(ops * per_op[:, None], 1) * 100)
        # The monitor's intervals start at the run's first traced event, which follows the traced region's start
        # (thread 0's first operation in the window); each run's are placed at their own offset from it. As many as
        # the workload's, so that every panel ends where the top one does: the last is where the trace ends, a
        # little before the window's end or after it (a further sliver of an interval is left out).
        k = min(n, *(len(mon["intervals"]) for _, _, mon in got))
        mon_ops = [np.interp((np.arange(k) + 0.5) * interval_us + (mon["origin_tick"] - r.manifest.roi.begin_tick) / 1e6,
                             t, w.total[:n]) * traced_share(r, mon, k, interval_us) for r, w, mon in got]
        transfers = np.array([[iv["transfers"] for iv in mon["intervals"][:k]] for _, _, mon in got], dtype=float)
        offset = np.mean([(mon["origin_tick"] - r.manifest.roi.begin_tick) / 1e6 for r, _, mon in got])
        band(tx, (np.arange(k) + 0.5) * interval_us + offset, transfers / np.maximum(np.array(mon_ops), 1))
        # where the lister took the file's lock, as the trace shows it (the declared times are its own clock's)
        takes = [((v.first_write_tick or v.first_tick) - m.run.manifest.roi.begin_tick) / 1e6
                 for m in kept for v in m.analysis.lister_visits or []]
        if takes:
            ax.plot(takes, [0.92] * len(takes), "v", color=colour, ms=5, transform=ax.get_xaxis_transform())
            listed = True
        if kernel_side:
            queued = np.array([q[:k] for q in queues], dtype=float)
            band(lx, (np.arange(k) + 0.5) * interval_us + offset,
                 queued / np.maximum(np.array(mon_ops) * per_op[:, None], 1) * 100)
    for axis in (ax, lx, tx):
        axis.axvline(s.series.event_at_us, color="#333333", ls=":", lw=1)
        axis.set_ylim(bottom=0)
    ax.set_ylim(top=ax.get_ylim()[1] * 1.15)   # a band above the data for the markers and the label
    ax.text(s.series.event_at_us, ax.get_ylim()[1], f" {s.series.event}" + (" (declared; ▼: the lister's takes "
            "of the lock in the trace)" if listed else ""), va="top", fontsize=8)
    ax.set_ylabel("ops per simulated µs")
    lx.set_ylabel("updates that queued\nfor the lock (%)" if kernel_side else "updates that took\nthe lock (%)")
    tx.set_ylabel("monitor: line transfers\nper operation")
    tx.set_xlabel("µs into the window (simulated)")
    # above the panels, not in one: the recovery runs through every corner of the top panel
    fig.legend(handles=ax.get_legend_handles_labels()[0], loc="outside upper center", ncol=len(s.runs), fontsize=8,
               title=f"{'kernel' if s.series.labels else 'policy'} ({s.repetitions} repetitions: line: mean, band: min-max)", title_fontsize=8)
    # what is drawn, not the series' declared name ("collapse"): whether anything collapses is the verdict's to say
    pub = s.series.published[0]
    ax.set_title(f"will-it-scale's total per interval (published for {', '.join(published_labels(s))}: "
                 f"{pub.base:,.0f} -> {pub.new:,.0f} {pub.unit.split()[0]})", fontsize=10)
    lx.set_title("the share of lockref updates that queued for the spinlock, per interval (the kernel's MCS-node "
                 "lines in the trace,\nover the operations interpolated to the monitor's intervals: a step may "
                 "overshoot 100% by a few)" if kernel_side else
                 "the share of lockref updates that took the spinlock, per interval (the workload's count)", fontsize=9)
    tx.set_title("cache-line transfers per operation, per interval (the monitor's counters over simulated time, from "
                 "the traced region's start)", fontsize=9)
    return fig


def traced_share(run, mon: dict, k: int, interval_us: float) -> np.ndarray:
    """Of each of the monitor's first k intervals, the share the trace covers (the last ends where the trace does):
    its operations are counted for that share, so the last interval's transfers are per operation like the rest."""
    start = mon["origin_tick"] + np.arange(k) * interval_us * 1e6   # ticks: picoseconds
    return np.clip((run.manifest.roi.end_tick - start) / (interval_us * 1e6), 0, 1)


# The policy the published series is of: lockref's 100 cmpxchg tries before the lock (seed 004's cover letter); a
# kernel's runs stand for it by the policy they have (stock-6.12's).
PUBLISHED_POLICY = "retry100"


def published_labels(s: SeriesResult) -> list[str]:
    """The drawn labels with the published series' lockref, controls aside: retry100, or the kernel that has it."""
    controls = {c for _, c in s.series.controls}
    return [label for label, t in s.series.labelled().items()
            if t.policy == PUBLISHED_POLICY and label not in controls and s.runs.get(label)]


# Each declaration's marker in the declarations figure, all in the simulated speed-up's ink: a colour of their own
# each would be near a policy's (a declaration is a method, not a policy). No diamond: that is the published one.
DECLARATION_MARKERS = "os^v<>p"


def draw_declarations(versions: list[SeedResult]):
    """One seed's speed-up per configuration under each declaration whose runs are all kept (mean, whisker: the
    range over every pair of repetitions), beside the published speed-ups: e.g. seed 000's lock models."""
    done = _distinct_runs(versions)
    labels = list(dict.fromkeys(p.point.label for r, _ in done for p in r.points))
    fig, ax = plt.subplots(figsize=(10, 4.6), layout="constrained")
    x = np.arange(len(labels))
    width = 0.7 / (len(done) + 1)
    values = []
    for k, (r, ids) in enumerate(done):
        d = r.declaration
        at = {p.point.label: p for p in r.points if p.complete}
        xs = [i for i, lab in enumerate(labels) if lab in at]
        ratios = [at[labels[i]].ratio for i in xs]
        values += [v for q in ratios for v in (q.lo, q.hi)]
        ax.errorbar(x[xs] + (k - len(done) / 2) * width, [q.mean for q in ratios],
                    yerr=[[q.mean - q.lo for q in ratios], [q.hi - q.mean for q in ratios]],
                    fmt=DECLARATION_MARKERS[k % len(DECLARATION_MARKERS)], ms=7, capsize=3, color=SIMULATED,
                    label=f"{ids}: {d.lock}, {d.repetitions} repetitions, {d.run_machine()} machine")
    pubs = [(i, pub.ratio) for i, lab in enumerate(labels)
            for pub in next(p.point.published for r, _ in done for p in r.points if p.point.label == lab)]
    values += [v for _, v in pubs]
    ax.plot([x[i] + (len(done) / 2) * width for i, _ in pubs], [v for _, v in pubs], "D", color="#333333",
            markerfacecolor="white", label="published speed-ups (each row of the seed's table)")
    ax.axhline(1, color="#999999", lw=1)
    _speedup_axis(ax, "y", values, 10)
    ax.set_xticks(x, [textwrap.fill(lab, 22) for lab in labels], fontsize=8)
    e = done[-1][0].experiment
    ax.set_ylabel(f"speed-up {e.new_name} / {e.base_name} (log)")
    ax.set_title(f"Seed {e.seed}: the simulated speed-up under each declaration whose runs are kept", fontsize=10)
    fig.legend(loc="outside lower center", ncol=2, fontsize=8)
    return fig


def _distinct_runs(versions: list[SeedResult]) -> list[tuple[SeedResult, str]]:
    """The complete declarations with points, one per set of runs (a rule change judges the same runs again),
    each with the ids of the declarations that share its runs."""
    out: dict[tuple, tuple[SeedResult, list[str]]] = {}
    for r in versions:
        if r.complete and r.points:
            key = tuple(sorted(s.id for s in r.experiment.specs()))
            out.setdefault(key, (r, []))[1].append(r.declaration.id)
    return [(r, ", ".join(ids)) for r, ids in out.values()]


def history_figure_names(history: dict[str, list[SeedResult]]) -> dict[str, str]:
    """seed -> its declarations figure, for the seeds with runs kept under two declarations or more."""
    return {seed: f"seed-{seed}-declarations.png" for seed, versions in history.items()
            if len(_distinct_runs(versions)) >= 2}


def profile_panels(res: SeedResult) -> list[tuple[str, object]]:
    """(point label, check) of every arm held to or shown beside a published profile, once every run has one."""
    out = []
    for p in res.points:
        for c in res.profile_checks(p):
            if c.complete:
                out.append((p.point.label, c))
    return out


def draw_profile(res: SeedResult):
    """One panel per arm with a published profile: each function the seed's profile names (on the judged arm, those
    the declaration holds to the band), its published share of
    the time (pale bar) beside the simulated one (dark bar: the mean over the repetitions; whisker: their extremes);
    on the judged arm, the declared band around each published share (hatched)."""
    e, d = res.experiment, res.declaration
    panels = profile_panels(res)
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.6), layout="constrained", squeeze=False,
                             sharex=True)
    for ax, (label, c) in zip(axes[0], panels):
        names = [s for s, _ in c.published.functions if s in c.shares]   # the judged arm: the declared ones
        y = np.arange(len(names))
        published = [100 * c.published.share(s) for s in names]
        ax.barh(y + 0.2, published, 0.4, color=PUBLISHED_RANGE, edgecolor=EDGE, lw=0.6, label="published")
        mean = [100 * c.mean(s) if c.shares.get(s) else 0.0 for s in names]
        lo = [100 * min(c.shares[s]) if c.shares.get(s) else 0.0 for s in names]
        hi = [100 * max(c.shares[s]) if c.shares.get(s) else 0.0 for s in names]
        ax.barh(y - 0.2, mean, 0.4, color=SIMULATED, edgecolor=EDGE, lw=0.6, label="simulated")
        ax.errorbar(mean, y - 0.2, xerr=[np.subtract(mean, lo), np.subtract(hi, mean)], fmt="none", color=EDGE,
                    capsize=3)
        if c.judged:
            for yi, share in zip(y, published):
                ax.barh(yi, 2 * c.points, 0.95, left=share - c.points, color="none", edgecolor=EDGE, lw=0.4,
                        hatch="...", hatchcolor=EDGE, zorder=0)
        ax.set_yticks(y, names, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("share of every core's window (%)", fontsize=9)
        arm = e.base_name if c.arm == "base" else e.new_name
        ax.set_title(textwrap.fill(f"{label}: {c.arm} arm ({arm}), {c.verdict}", 52), fontsize=9)
    handles = [Patch(facecolor=PUBLISHED_RANGE, edgecolor=EDGE, label="published (perf)"),
               Patch(facecolor=SIMULATED, edgecolor=EDGE, label="simulated: mean, whisker min-max"),
               Patch(facecolor="none", edgecolor=EDGE, hatch="...", label=f"the declared band (+-{d.profile_band_points:g} "
                                                                          "points, judged arm)")]
    fig.legend(handles=handles, loc="outside lower center", ncol=min(3, len(panels)), fontsize=8)
    fig.suptitle(figure_wrap(f"Seed {e.seed}, declaration {d.id}: where the window's time went, simulated beside "
                             "published", fig.get_figwidth(), 11), fontsize=11)
    return fig


def save(fig, path: Path) -> Path:
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return path


def figure_names(results: list[SeedResult]) -> dict[str, list[str]]:
    """seed -> the file names of its figures (complete seeds only): what write_all writes and the page shows. A
    seed of series alone (004-collapse-fs) has no speed-up figure; one judged by a shape rule (000-fs) has its
    shape figure after it, and its turns figure if every run has a chain, and its profile figure once an arm's every
    run has a profile; the series' figures come last."""
    return {r.experiment.seed: [f"seed-{r.experiment.seed}.png"] * bool(r.points) +
            [shape_figure_name(r.experiment.seed)] * bool(shape_curves(r)) +
            [turns_figure_name(r.experiment.seed)] * bool(turn_curves(r)) +
            [profile_figure_name(r.experiment.seed)] * bool(profile_panels(r)) +
            [f"seed-{r.experiment.seed}-{slug(s.series.label)}.png" for s in r.series] for r in results if r.complete}


def write_all(results: list[SeedResult], into: Path, history: dict[str, list[SeedResult]] | None = None
              ) -> dict[str, list[str]]:
    """Every complete seed's figures into `into` (and each declarations figure of history); returns
    figure_names."""
    into.mkdir(parents=True, exist_ok=True)
    for seed, name in history_figure_names(history or {}).items():
        save(draw_declarations(history[seed]), into / name)
    names = figure_names(results)
    for res in results:
        if res.experiment.seed in names:
            names_of = names[res.experiment.seed]
            first_series = len(names_of) - len(res.series)   # figure_names' order: the series' figures come last
            for name in names_of[:first_series]:   # the speed-up figure, if the seed has points, and its shape's
                draw = {shape_figure_name(res.experiment.seed): draw_shape,
                        turns_figure_name(res.experiment.seed): draw_turns,
                        profile_figure_name(res.experiment.seed): draw_profile}.get(name, draw_seed)
                save(draw(res), into / name)
            for s, name in zip(res.series, names_of[first_series:]):
                save(draw_series(s), into / name)
    return names

