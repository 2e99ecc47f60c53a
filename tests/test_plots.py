"""The report's figures, checked on the matplotlib objects they drew (not on pixels): each run's socket matrix at
its own size on one shared colour scale, bars by workload and machine size (one per configuration, the mean of its
repetitions) in the palette's colours, scaling's ticks at the socket counts, one bar per busy line of each object;
every figure at most as wide as the HTML column and every text inside it, with no two titles or run labels on top of
each other, for 1 run or all of them; one colour per policy; and the report's structure, its CSV of every table and
a page a few screens tall."""

import csv
import itertools
import json
import re
import subprocess
from pathlib import Path
from types import SimpleNamespace as NS

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import LogNorm, to_rgb
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.text import Text

from cohtb.analysis import compare, line_chain
from cohtb.analysis.pipeline import metrics_for
from cohtb.mainjob import REFERENCE_RUNS
from cohtb.report import html as report
from cohtb.experiments import judging
from cohtb.experiments.reproduce import point_results
from cohtb.experiments.seeds import EXPERIMENTS, HISTORY
from cohtb.run.kernels import VARIANTS
from cohtb.report import palette, plots, seed_plots
from cohtb.tables import csv_cell, slug
from cohtb.run.runs import discover

pytestmark = pytest.mark.skipif(not any(REFERENCE_RUNS.glob("*/manifest.json")), reason="no bundled reference runs")
KINDS = ("throughput", "pingpong", "fields", "matrices", "scaling", "checks", "intervals")
HTML_COLUMN_PX = 1168   # html.CSS: body max-width 1200px less its 1em padding each side


@pytest.fixture(scope="module")
def every(tmp_path_factory):
    """Every bundled run's metrics (replayed through the RTL once for the module, without the model)."""
    return metrics_for(discover([REFERENCE_RUNS]), tmp_path_factory.mktemp("analysis"), check_model=False)


@pytest.fixture(scope="module")
def ms(every):
    """The first repetition of each configuration, as the main job's report has them, and every repetition of
    two configurations (rwsem's)."""
    return [m for m in every if m.spec.seed <= 1 or m.spec.workload == "rwsem"]


@pytest.fixture(scope="module")
def one(ms):
    return [next(m for m in ms if m.spec.sockets == 2)]


@pytest.fixture(scope="module")
def drawn(ms, one):
    """Every figure drawn (layout done) for the bundled runs and for one run; closed at the end."""
    figs = {}
    for name, runs in (("all", ms), ("one", one)):
        for kind in KINDS:
            fig = getattr(plots, f"draw_{kind}")(runs)
            if fig is not None:
                fig.canvas.draw()
            figs[name, kind] = fig
    yield figs
    plt.close("all")


def panels(fig) -> dict:
    """The matrix panels by run label (the title before its "same socket" line; a long label is wrapped)."""
    return {ax.get_title().rsplit("\nsame socket", 1)[0].replace("\n", " "): ax for ax in fig.axes if ax.images}


def legend_texts(fig) -> list[str]:
    legends = [*fig.legends, *(lg for sf in fig.subfigs for lg in sf.legends)]
    return [t.get_text() for lg in legends for t in lg.get_texts()]


def test_the_bundled_runs_have_every_size(ms):
    """Seed 000's socket series (1 to 8 sockets) and seed 004's 8-socket runs are bundled."""
    assert sorted({m.spec.sockets for m in ms}) == [1, 2, 4, 8]
    assert {m.spec.workload for m in ms} >= {"open_close", "stat_path"}


def test_run_labels_are_unique(ms):
    """Every figure names runs by their label (or the label less its panel's workload and size)."""
    every = metrics_labels = [m.label for m in ms]
    assert len(set(metrics_labels)) == len(every)
    for _, g in plots.panel_groups(ms):
        short = [plots.short_label(m) for m in plots.first_repetitions(g)]
        assert len(set(short)) == len(short), short


def test_each_matrix_panel_is_the_runs_own_size(ms, drawn):
    p = panels(drawn["all", "matrices"])
    drawn_runs, _ = plots.matrix_runs(ms)
    assert set(p) == {m.label for m in drawn_runs} and len(drawn_runs) < len(ms)
    for m in drawn_runs:
        sockets = m.run.manifest.system.sockets
        arr = p[m.label].images[0].get_array()
        assert arr.shape == (sockets, sockets), m.label
        full = np.array(m.analysis.rtl.matrix, dtype=float) / m.run.region_ops   # per operation of the region
        off = ~np.eye(sockets, dtype=bool)
        # what was drawn is the monitor's matrix trimmed to the run, per operation; the diagonal is not coloured
        assert np.allclose(arr.filled(0)[off], full[:sockets, :sockets][off])
        assert arr.mask[np.eye(sockets, dtype=bool)].all()
        # and nothing was left outside the run's own sockets
        assert full.sum() == pytest.approx(full[:sockets, :sockets].sum())
    assert {arr.shape for arr in (ax.images[0].get_array() for ax in p.values())} >= {(2, 2), (4, 4), (8, 8)}


def test_matrices_of_many_runs_are_capped_and_the_figure_says_which_are_left_out(ms, drawn):
    """All the bundled runs' matrices were 256 panels, 14,000 px tall, their 8-socket diagonals unreadable: at most
    MATRIX_PANELS are drawn, every machine size and every workload, policy or kernel and layout at least once when
    they fit, and the figure counts the rest. A few runs are all drawn."""
    firsts = plots.first_repetitions(ms)
    drawn_runs, left = plots.matrix_runs(ms)
    assert len(firsts) > plots.MATRIX_PANELS >= len(drawn_runs) and left
    families = {plots.matrix_family(m) for m in firsts if m.spec.sockets > 1}
    assert families == {plots.matrix_family(m) for m in drawn_runs}
    note = drawn["all", "matrices"].subfigs[0].get_supxlabel().replace("\n", " ")
    assert "Not drawn: " in note and all(part in note for part in left)
    one = sum(m.spec.sockets == 1 for m in firsts)
    assert f"{one} one-socket configurations" in note
    some = firsts[:plots.MATRIX_PANELS]
    assert plots.matrix_runs(some) == (plots.ordered(some), [])
    assert "Not drawn" not in drawn["one", "matrices"].subfigs[0].get_supxlabel()


def test_a_matrix_cell_is_as_large_as_its_value(drawn):
    """The 8-socket matrices' cells held their diagonal values in 5.5-point text, past their edges: each cell at
    least as wide as its text at the page's size."""
    fig = drawn["all", "matrices"]
    r = drawn_at_page_dpi(fig)
    for ax in panels(fig).values():
        n = ax.images[0].get_array().shape[0]
        cell = ax.get_window_extent(r).width / n
        assert cell >= 30   # px: 0.27 in at DPI
        for t in ax.texts:
            assert t.get_window_extent(r).width < cell - 4, (ax.get_title(), t.get_text())


def test_matrices_share_one_log_scale_that_holds_every_cell(ms, drawn):
    images = [ax.images[0] for ax in panels(drawn["all", "matrices"]).values()]
    norms = {(im.norm.vmin, im.norm.vmax) for im in images}
    assert len(norms) == 1 and all(isinstance(im.norm, LogNorm) for im in images)
    assert len({id(im.cmap) for im in images}) == 1
    (vmin, vmax), = norms
    cells = np.concatenate([im.get_array().compressed() for im in images])
    assert cells.size and vmin <= cells.min() and cells.max() <= vmax


def test_matrix_diagonal_is_annotated_and_explained(ms, drawn):
    fig = drawn["all", "matrices"]
    p = panels(fig)
    for m in plots.matrix_runs(ms)[0]:
        mat = plots.socket_matrix(m)
        texts = {t.get_position(): t.get_text() for t in p[m.label].texts}
        assert all(texts[(k, k)] == plots._diag_text(mat[k, k]) for k in range(len(mat))), m.label
        assert "same socket" in p[m.label].get_title()
        assert p[m.label].get_xlabel() == "to socket" and p[m.label].get_ylabel() == "from socket"
    # one colour bar, labelled with its unit, its ticks apart
    bars = [ax for ax in fig.axes if not ax.images and "per operation" in ax.get_xlabel()]
    assert len(bars) == 1 and "cross-socket transfers per operation" in bars[0].get_xlabel()
    assert "log scale" in bars[0].get_xlabel()
    assert "same-socket" in fig.subfigs[0].get_supxlabel()
    r = drawn_at_page_dpi(fig)
    ticks = [t for t in bars[0].get_xticklabels() if t.get_text()]
    assert len(ticks) >= 2
    for a, b in zip(ticks, ticks[1:]):
        assert not overlaps(a.get_window_extent(r), b.get_window_extent(r)), (a.get_text(), b.get_text())


def bar_panels(fig, ms) -> list:
    """The bar panels of a figure with the configurations (first repetitions) each shows, in order; a panel too
    wide for a row comes in parts ("(1 of 2)")."""
    groups = plots.panel_groups(plots.first_repetitions(ms))
    parts = [part for row in plots._pack(groups) for part in row]
    titles = [name.replace(", ", "\n", 1) for name, _ in parts]
    axes = [ax for ax in fig.axes if ax.get_title() in titles]
    assert [ax.get_title() for ax in axes] == titles
    assert [m for _, g in parts for m in g] == [m for _, g in groups for m in g]
    return [(ax, g) for ax, (_, g) in zip(axes, parts)]


def test_throughput_one_bar_per_configuration_in_its_policy_or_kernel_colour(ms, drawn):
    fig = drawn["all", "throughput"]
    reps = plots.repetitions(ms)
    several = 0
    for ax, runs in bar_panels(fig, ms):
        assert [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()] == [plots.short_label(m) for m in runs]
        bars = ax.patches
        assert len(bars) == len(runs)
        for b, m in zip(bars, runs):
            every = reps[plots.config_key(m)]
            several += len(every) > 1
            assert b.get_height() == pytest.approx(np.mean([r.throughput / 1e6 for r in every]))
            assert np.allclose(b.get_facecolor()[:3], to_rgb(palette.spec_colour(m.spec)))
            assert (b.get_hatch() or "") == palette.LAYOUT_HATCH[plots.run_layout(m)]
    assert several >= 2     # the rwsem pair: three repetitions each, one bar each
    texts = legend_texts(fig)
    assert {m.spec.policy for m in ms if not palette.is_kernels(m.spec)} <= set(texts)
    assert {f"kernel {m.spec.kernel}" for m in ms if palette.is_kernels(m.spec)} <= set(texts)
    assert {"layout shared", "layout pre611", "layout split"} <= set(texts)
    # each panel its own scale: stat_counter's percpu runs (~200 ops/µs) do not flatten the lockref panels
    tops = [ax.get_ylim()[1] for ax, _ in bar_panels(fig, ms)]
    assert max(tops) / min(tops) > 20
    for ax, runs in bar_panels(fig, ms):
        assert ax.get_ylim()[1] < 1.5 * max(b.get_height() for b in ax.patches) + 1e-9


def test_a_kernel_s_bars_are_its_colour_and_its_dentry_s_hatch(ms, drawn):
    """Full-system stat_file bars were retry100's green (their spec's policy is the kernel's) and a pre611 kernel's
    hatched as layout shared (its spec's word for a dentry before 6.11), where SE stat_path's pre611, the same
    dentry, is hatched \\\\: a kernel's bars take its own colour, no policy's, and the hatch of the dentry it was
    built with."""
    fig = drawn["all", "throughput"]
    bars = {m.label: b for ax, runs in bar_panels(fig, ms) for b, m in zip(ax.patches, runs)}
    kernels = [m for m in plots.first_repetitions(ms) if palette.is_kernels(m.spec)]
    assert {"stock-6.12", "pre611"} <= {m.spec.kernel for m in kernels}
    policies = [to_rgb(c) for c in palette.POLICY_COLOURS.values()]
    for m in kernels:
        colour = tuple(bars[m.label].get_facecolor()[:3])
        assert np.allclose(colour, to_rgb(palette.KERNEL_COLOURS[m.spec.kernel])) and colour not in policies
    built = {plots.run_layout(m): m for m in kernels if m.spec.kernel == "pre611"}
    se = next(m for m in ms if m.spec.workload == "stat_path" and m.spec.layout == "pre611")
    assert "pre611" in built and built["pre611"].spec.layout == "shared"
    assert bars[built["pre611"].label].get_hatch() == bars[se.label].get_hatch() == palette.LAYOUT_HATCH["pre611"]
    # a pre611 built with the 184-byte dentry says so in its label and its hatch
    for layout, m in built.items():
        assert (layout == "hybrid184") == ("built as hybrid184" in m.label)


def test_pingpong_panels_with_their_legend(ms, drawn):
    fig = drawn["all", "pingpong"]
    assert {p[0] for p in plots.PINGPONG_PARTS} <= set(legend_texts(fig))
    assert all("dirty reads" not in t or "(HITM)" in t for t in legend_texts(fig))
    reps = plots.repetitions(ms)
    for ax, runs in bar_panels(fig, ms):
        for i, m in enumerate(runs):
            top = max(b.get_y() + b.get_height() for b in ax.patches if b.get_x() < i < b.get_x() + b.get_width())
            every = reps[plots.config_key(m)]
            assert top == pytest.approx(np.mean([r.per_op["transfers"] + r.per_op["dirtyReads"] for r in every]))


def test_scaling_ticks_are_sockets_and_every_series_is_drawn(ms, drawn):
    fig = drawn["all", "scaling"]
    series = plots.scaling_series(ms)
    sockets = sorted({m.spec.sockets for v in series.values() for m in v})
    assert len(sockets) > 1
    for ax in fig.axes:
        assert list(ax.get_xticks()) == sockets
        assert [t.get_text() for t in ax.get_xticklabels()] == [str(n) for n in sockets]
        cores = {m.spec.cores_per_socket for v in series.values() for m in v}
        assert ax.get_xlabel() == (f"sockets ({cores.pop()} cores each)" if len(cores) == 1 else "sockets")
        assert ax.get_ylabel()
        lines = ax.get_lines()
        assert len(lines) == len(series)
        for line, ((workload, policy, layout, kernel, extra, declaration), v) in zip(lines, series.items()):
            # each line is its series' (full-system runs are named by kernel, the others by policy/layout)
            assert (kernel or f"{policy}/{layout}") in line.get_label()
            assert f"[{declaration}]" in line.get_label() + "[]"
            assert line.get_color() == palette.spec_colour(v[0].spec)
            dashes = Line2D([], [], linestyle=palette.layout_line(plots.run_layout(v[0]))).get_linestyle()
            assert line.get_linestyle() == dashes
            xs = [m.spec.sockets for m in v]
            assert list(line.get_xdata()) == xs and len(set(xs)) == len(xs) > 1   # one point per size, two or more
    assert any(len(l.get_xdata()) == len(sockets) for l in fig.axes[0].get_lines())


def looks(line) -> tuple:
    """What tells a line (or a legend's line) from another: colour, dashes, marker and its fill."""
    return (to_rgb(line.get_color()), line.get_linestyle(), line.get_marker(), str(line.get_markerfacecolor()))


def test_scaling_tells_every_line_apart_and_draws_compared_ones_alike_but_for_their_arm(ms, drawn):
    """15 lines had 5 identical orange and 5 identical blue legend entries (colour by policy, line by layout, and
    both runs' configurations differing only in lock model or declaration): each line its own look, in the legend
    too; the lines of one compared configuration (locked and cmpxchg of one lock model and declaration) share a
    marker, which no other configuration's lines have."""
    fig = drawn["all", "scaling"]
    series = plots.scaling_series(ms)
    lines = fig.axes[0].get_lines()
    assert len(lines) == len(series) >= 10
    assert len({looks(line) for line in lines}) == len(lines)
    (legend,) = fig.legends
    assert len({looks(h) for h in legend.legend_handles}) == len(legend.legend_handles) == len(lines)
    markers: dict[tuple, set] = {}
    for line, (k, v) in zip(lines, series.items()):
        hollow = str(line.get_markerfacecolor()) == "white"
        markers.setdefault(plots.compared_configuration(k, v[0]), set()).add((line.get_marker(), hollow))
    assert all(len(m) == 1 for m in markers.values())
    assert len({m for ms_ in markers.values() for m in ms_}) == len(markers)
    assert any(len([k for k in series if plots.compared_configuration(k, series[k][0]) == c]) > 1 for c in markers)


def test_scaling_leaves_out_a_configuration_run_at_one_size_and_says_so(ms):
    """Of two configurations run at several sizes, keep one's runs and the other's at its first size alone: one line,
    and the figure counts the other."""
    (k1, drawn), (k2, cut) = list(plots.scaling_series(ms).items())[:2]
    fig = plots.draw_scaling([*drawn, cut[0]])
    label = plots.short_label(drawn[0])
    assert [line.get_label() for line in fig.axes[0].get_lines()] == [label if k1[0] == "lockref" else f"{k1[0]} {label}"]
    assert fig.legends[0].get_title().get_text().replace("\n", " ") == (
        "not drawn: 1 configuration run at one size only (the throughput figure has them)")
    plt.close(fig)
    fig = plots.draw_scaling(drawn)
    assert not fig.legends[0].get_title().get_text()
    plt.close(fig)


def test_scaling_needs_runs_at_more_than_one_size(one, tmp_path):
    assert plots.draw_scaling(one) is None and plots.scaling(one, tmp_path / "s.png") is None


def test_fields_grouped_by_object_busy_lines_only(ms, drawn):
    fig = drawn["all", "fields"]
    rows = plots.field_rows(ms)
    parts = [part for row in rows for part in row]
    axes = [ax for ax in fig.axes if ax.get_title().startswith("object ")]
    assert [ax.get_title() for ax in axes] == [title for title, *_ in parts]
    objects = {o for _, o, _, _ in parts}
    assert {"file", "parent"} <= objects
    for ax, (_, o, runs, kinds) in zip(axes, parts):
        lines = [line for m in runs for line in plots.object_lines(m)[o]]
        solid = [b for b in ax.patches if not b.get_hatch()]
        assert len(solid) == len(lines)       # one bar of transfers per busy line, however many fields it holds
        assert [b.get_height() for b in solid] == pytest.approx([f["transfers"] for _, f in lines])
        assert all(plots.busy(f) for _, f in lines)
        assert len(kinds) <= len(plots.LINE_COLOURS)
    # a line without traffic is not drawn (no bar of zero, no "0")
    idle = [(m, names) for m in plots.first_repetitions(ms) for names, f in plots.field_lines(m) if not plots.busy(f)]
    assert idle and not [t for ax in axes for t in ax.texts if t.get_text() == "0"]
    shared, split = (next(m for m in ms if m.spec.workload == "stat_path" and m.spec.layout == layout
                          and not m.spec.intruder_period_us) for layout in ("shared", "split"))

    def shares(m):   # the file's count word on a line of its name's
        return m.fields["file.d_lockref"]["lines"][0] in m.fields["file.d_iname"]["lines"]

    assert shares(shared) and not shares(split)   # before the reorder, not after it
    # legend entries name the object where a row holds several, and no entry appears twice in a row's legend
    for sf in fig.subfigs[1:]:
        texts = [t.get_text() for lg in sf.legends for t in lg.get_texts()]
        assert len(texts) == len(set(texts)), texts
    texts = [t.replace("\n", " ") for t in legend_texts(fig)]
    # (which objects share a row, and so carry their name in it, depends on how many runs are bundled)
    assert any(t.split(": ")[-1].startswith("line of d_lockref") for t in texts)
    assert any(t.split(": ")[-1] == "line of d_iname (part 2 of 2), d_lockref, d_sb" for t in texts)
    assert {"transfers (solid)", "dirty reads (HITM) (dotted)"} <= set(texts)


def test_each_line_is_drawn_once_and_a_field_on_two_is_named_on_both(ms):
    """d_iname, across two lines, had a bar of its own ("line of d_iname") as tall as the bar of the line it shares
    with d_lockref: that line counted twice. Each line once, named by every field on it; a field's counts are its
    lines' together."""
    straddling = 0
    for m in plots.first_repetitions(ms):
        lines = plots.field_lines(m)
        named = [n for names, _ in lines for n in names]
        assert len(named) == sum(len(f.get("lines") or []) for f in m.fields.values())   # each field on each line
        for name, f in m.fields.items():
            if len(f.get("lines") or []) < 2:
                continue
            straddling += 1
            parts = [(names, c) for names, c in lines if any(n.startswith(f"{name} (part ") for n in names)]
            assert len(parts) == len(f["lines"])
            for key in ("transfers", "dirtyReads"):
                assert sum(c[key] for _, c in parts) == pytest.approx(f[key])
        for names, c in lines:   # a field alone on one line: the line's counts are the field's
            for n in names:
                if "(part " not in n:
                    assert c["transfers"] == pytest.approx(m.fields[n]["transfers"])
    assert straddling


def test_intervals_colour_by_policy_and_every_line_told_apart(ms, drawn):
    fig = drawn["all", "intervals"]
    panels_ = plots.interval_panels(ms)
    axes = [ax for ax in fig.axes if ax.get_lines()]
    assert [ax.get_title() for ax in axes] == [name.replace(", ", "\n", 1) for name, _ in panels_]
    for ax, (_, group) in zip(axes, panels_):
        lines = ax.get_lines()
        assert [l.get_color() for l in lines] == [palette.spec_colour(m.spec) for m, _ in group]
        looks_ = [(l.get_color(), l.get_linestyle(), l.get_marker()) for l in lines]
        assert len(set(looks_)) == len(looks_) <= len(plots.MARKERS)
    assert "least" not in fig.get_suptitle() and "total" in fig.get_suptitle()


def test_intervals_keep_the_arms_of_a_declared_comparison_in_one_panel(ms, drawn):
    """Panels of a workload and size were filled round-robin: seed 000's locked and cmpxchg runs of one declaration
    landed in different panels. The arms of one point (or series) of a declaration, at one home socket and
    placement, are in one panel, and the figure's panels hold more than one arm of some."""
    arms = judging.declared_arms()
    where: dict[tuple, list[int]] = {}
    for i, (_, group) in enumerate(plots.interval_panels(ms)):
        for m, _ in group:
            where.setdefault(plots.comparison(m, arms), []).append(i)
    declared = {k: v for k, v in where.items() if len(k) == 3}   # (declaration and point, home socket, placement)
    # one panel each, but a comparison of more runs than a panel holds
    assert all(len(set(v)) == 1 for v in declared.values() if len(v) <= len(plots.MARKERS))
    assert sum(len(v) > 1 for v in declared.values()) >= 5
    # seed 000's open_close arms, one declaration and size: locked beside cmpxchg
    locked = next(m for m in plots.first_repetitions(ms) if m.spec.declaration == "000v3" and m.spec.policy == "locked"
                  and m.spec.sockets == 2 and not m.spec.home_socket)
    panel = next(g for _, g in plots.interval_panels(ms) if locked in [m for m, _ in g])
    assert {m.spec.policy for m, _ in panel if m.spec.declaration == "000v3"} == {"locked", "cmpxchg"}


def test_an_interval_legend_sits_below_its_panel_s_x_label(drawn):
    """The legend under each panel touched the panel's x label when the panel was short."""
    for runs in ("all", "one"):
        fig = drawn[runs, "intervals"]
        r = drawn_at_page_dpi(fig)
        for ax in fig.axes:
            legend = ax.get_legend()
            if legend is None:
                continue
            label = ax.xaxis.label.get_window_extent(r)
            assert legend.get_window_extent(r).y1 < label.y0 - 2, (runs, ax.get_title())


def offered(flag: str) -> set[str]:
    """The choices of a flag (policy, layout) every workload drawn as throughput offers (workloads/*.c: its binary's
    --describe, where cohtb reads them)."""
    root = Path(__file__).resolve().parent.parent
    out = set()
    for src in (root / "workloads").glob("*.c"):   # stat_file.c is built for the guest only, and has no --policy
        binary = root / "build" / "workloads" / src.stem
        if binary.exists():
            flags = json.loads(subprocess.run([str(binary), "--describe"], capture_output=True, text=True,
                                              check=True).stdout)["flags"]
            if next(f["default"] for f in flags if f["name"] == "ops") != "0":
                continue   # fixed work only (cclat's latency cells): never drawn as throughput, no policy colours
            out |= {c for f in flags if f["name"] == flag for c in f["choices"]}
    return out


def test_one_colour_per_policy_and_per_kernel():
    """Every policy a workload offers or a seed runs, and every kernel variant, has a colour of its own, far enough
    from every other's (CIELAB distance) to be told apart; a kernel's is no policy's (full-system runs were drawn in
    retry100's), nor like the figures' other inks (ping-pong's and the checks' parts, the fields' lines)."""
    policies = offered("policy")
    used = {s.policy for e in EXPERIMENTS.values() for s in e.specs() if not palette.is_kernels(s)}
    assert {"locked", "cmpxchg", "retry100", "trywait", "unified", "batched", "sleep", "spin", "shared",
            "percpu"} <= policies
    assert policies | used <= set(palette.POLICY_COLOURS)
    assert set(VARIANTS) <= set(palette.KERNEL_COLOURS)
    colours = [*palette.POLICY_COLOURS.values(), *palette.KERNEL_COLOURS.values(), palette.UNKNOWN]
    for a, b in itertools.combinations(colours, 2):
        assert np.linalg.norm(palette.cielab(a) - palette.cielab(b)) >= 25, (a, b)
    others = [c for *_, c in (*plots.PINGPONG_PARTS, *plots.CHECK_PARTS)] + list(plots.LINE_COLOURS)
    for a, b in itertools.product(palette.KERNEL_COLOURS.values(), others):
        assert np.linalg.norm(palette.cielab(a) - palette.cielab(b)) >= 25, (a, b)


def test_one_hatch_and_one_line_style_per_layout():
    """Every layout a workload offers, and every kernel's dentry, has a hatch and a line style no other layout has
    ("layout private" had split's plain swatch; an unknown layout had pre611's dash-dot), and no layout has the seed
    figures' base-arm hatch."""
    layouts = offered("layout") | set(plots.DENTRY_LAYOUTS.values())
    assert {"shared", "pre611", "split", "padded", "packed", "private"} <= layouts
    assert layouts <= set(palette.LAYOUT_HATCH) and layouts <= set(palette.LAYOUT_LINE)
    hatches = [*palette.LAYOUT_HATCH.values(), palette.UNKNOWN_HATCH]
    assert len(set(hatches)) == len(hatches) and seed_plots.BASE_HATCH not in hatches
    styles = [str(ls) for ls in (*palette.LAYOUT_LINE.values(), palette.UNKNOWN_LINE)]
    assert len(set(styles)) == len(styles), styles


def overlaps(a, b) -> bool:
    return a.x0 < b.x1 - 1 and b.x0 < a.x1 - 1 and a.y0 < b.y1 - 1 and b.y0 < a.y1 - 1


def texts_of(fig) -> list[Text]:
    """Every visible text of the figure but tick labels (an axis makes some outside its view, never drawn: the
    axes' tight box holds the drawn ones)."""
    ticks = {id(label) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
             for tick in axis.get_major_ticks() + axis.get_minor_ticks() for label in (tick.label1, tick.label2)}
    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip() and id(t) not in ticks]


@pytest.mark.parametrize("runs", ["all", "one"])
@pytest.mark.parametrize("kind", KINDS)
def test_nothing_clipped_at_the_size_the_page_shows(drawn, runs, kind, tmp_path):
    """Saved at DPI, every figure is at most the HTML column wide, so the page shows it at its own size; there,
    every text lies inside the figure, no two axes titles or run labels overlap, and no legend covers the data."""
    fig = drawn[runs, kind]
    if fig is None:
        assert kind == "scaling" and runs == "one"
        return
    assert fig.get_layout_engine() is not None
    assert fig.get_figwidth() * plots.DPI <= HTML_COLUMN_PX
    r = drawn_at_page_dpi(fig)
    assert_inside(fig, r, [ax for ax in fig.axes if ax.axison], (kind, runs))
    titles = [ax.title for ax in fig.axes if ax.get_title()]
    for a, b in itertools.combinations(titles, 2):
        assert not overlaps(a.get_window_extent(r), b.get_window_extent(r)), (kind, runs, a.get_text(), b.get_text())
    for ax in fig.axes:
        lo, hi = sorted(ax.get_xlim())
        ticks = [t for t in ax.get_xticklabels() if t.get_text() and lo <= t.get_position()[0] <= hi]
        for a, b in zip(ticks, ticks[1:]):
            assert not overlaps(a.get_window_extent(r), b.get_window_extent(r)), (kind, runs, a.get_text())
    legends = [*fig.legends, *(lg for sf in fig.subfigs for lg in sf.legends),
               *(c for ax in fig.axes for c in ax.get_children() if isinstance(c, Legend))]
    for lg in legends:
        for ax in fig.axes:
            assert not overlaps(lg.get_window_extent(r), ax.get_window_extent(r)), (kind, runs)
    # and the file is what was checked: as wide as drawn
    path = tmp_path / "f.png"
    fig.savefig(path, dpi=plots.DPI)
    assert int.from_bytes(path.read_bytes()[16:20], "big") <= HTML_COLUMN_PX


def swatch(handle) -> tuple:
    """What a legend entry shows: a line's colour, dashes and marker (looks), or a patch's fill and hatch."""
    if isinstance(handle, Line2D):
        return ("line", *looks(handle))
    return ("patch", tuple(np.round(handle.get_facecolor(), 3)), handle.get_hatch() or "")


@pytest.mark.parametrize("runs", ["all", "one"])
@pytest.mark.parametrize("kind", KINDS)
def test_no_legend_shows_two_alike_entries(drawn, runs, kind):
    """A legend's entries stand for different things, so none looks like another (scaling had five identical orange
    lines, throughput a plain white swatch for two layouts) or repeats another's name."""
    fig = drawn[runs, kind]
    if fig is None:
        return
    legends = [*fig.legends, *(lg for sf in fig.subfigs for lg in sf.legends),
               *(c for ax in fig.axes for c in ax.get_children() if isinstance(c, Legend))]
    for lg in legends:
        shown = [swatch(h) for h in lg.legend_handles]
        names = [t.get_text() for t in lg.get_texts()]
        assert len(set(shown)) == len(shown), (kind, runs, names)
        assert len(set(names)) == len(names), (kind, runs, names)


def drawn_at_page_dpi(fig):
    fig.set_dpi(plots.DPI)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def assert_inside(fig, r, axes, where) -> None:
    """Every text of the figure, and every axes with its labels, lies within the figure (1 px of rounding)."""
    box = fig.bbox
    for what, e in [*((t.get_text(), t.get_window_extent(r)) for t in texts_of(fig)),
                    *((ax.get_title() or "axes", ax.get_tightbbox(r)) for ax in axes)]:
        assert box.x0 - 1 <= e.x0 and e.x1 <= box.x1 + 1 and box.y0 - 1 <= e.y0 and e.y1 <= box.y1 + 1, (where, what)


def test_seed_figures_keep_every_text_and_marker_inside(every):
    """docs/results.md's figures: text within the figure, the legend over no panel, every speed-up marker and its
    range inside its axes, and bars in their policy's or kernel's colour."""
    history = judging.seed_history(every)
    done = [r for r in (judging.shown(v) for v in history.values()) if r is not None]
    assert {r.experiment.seed for r in done} >= {"000", "003", "004", "004-fs"}
    assert "000" in seed_plots.history_figure_names(history)   # seed 000's two lock models, side by side
    for seed in seed_plots.history_figure_names(history):
        fig = seed_plots.draw_declarations(history[seed])
        assert_inside(fig, drawn_at_page_dpi(fig), fig.axes, f"{seed} declarations")
        plt.close(fig)
    for res in done:
        assert_seed_figures(res)


def assert_seed_figures(res) -> None:
    shaped = bool(seed_plots.shape_curves(res))
    figs = (([seed_plots.draw_seed(res)] if res.points else []) + ([seed_plots.draw_shape(res)] if shaped else [])
            + ([seed_plots.draw_turns(res)] if seed_plots.turn_curves(res) else [])
            + [seed_plots.draw_series(s) for s in res.series])
    for fig in figs:
        r = drawn_at_page_dpi(fig)
        assert_inside(fig, r, fig.axes, res.experiment.seed)
        for lg in [*fig.legends, *(c for ax in fig.axes for c in ax.get_children() if isinstance(c, Legend))]:
            for ax in fig.axes:
                assert not overlaps(lg.get_window_extent(r), ax.get_window_extent(r)), res.experiment.seed
    if not res.points:   # a seed of series alone (004-collapse-fs): no speed-up figure
        plt.close("all")
        return
    # under a shape rule the speed-ups are the shape figure's, one panel per curve
    bars, speedups = (figs[0].axes[0], figs[1].axes) if shaped else (figs[0].axes[0], figs[0].axes[1:])
    for speedup in speedups:
        r = drawn_at_page_dpi(speedup.figure)
        markers = [line for line in speedup.get_lines() if line.get_marker() not in (None, "", "None")]
        assert len(markers) >= 2       # the simulated and published speed-ups (and the range's caps)
        for line in markers:           # inside, with room for their size (1x's line is not a marker)
            for x, y in zip(line.get_xdata(), line.get_ydata()):
                px, py = speedup.transData.transform((x, y))
                inner = speedup.get_window_extent(r)
                assert inner.x0 + 4 <= px <= inner.x1 - 4 and inner.y0 + 4 <= py <= inner.y1 - 4, (res.experiment.seed, x, y)
    meanings = [*palette.POLICY_COLOURS.values(), *palette.KERNEL_COLOURS.values()]   # a kernel's run: its kernel's
    for b in bars.patches:
        assert b.get_facecolor()[:3] in [to_rgb(c) for c in meanings]
    plt.close("all")


def test_a_shape_rule_s_seed_has_its_series_figure_one_panel_per_curve():
    """Seed 000-fs is judged by the shape of each curve over the sockets: its figures are the throughput, grouped by
    curve, and the speed-up per curve over the sockets beside the published range (runs made up here: the test is
    of the drawing, not of a result)."""
    e = EXPERIMENTS["000-fs"]
    made_up = {1: 1.0, 2: 1.6, 4: 2.1, 8: 2.3}
    ms = []
    for p in e.points:
        for spec in e.specs():
            if spec.repetition_of in (p.base.repetition_of, p.new.repetition_of):
                gain = made_up[spec.sockets] if spec.repetition_of == p.new.repetition_of else 1.0
                ms.append(made_up_run(spec, 1e6 * gain * (1 + 0.01 * spec.seed)))
    res = judging.SeedResult(e, point_results(e.points, ms, e.repetitions), [], [])
    assert seed_plots.figure_names([res])["000-fs"] == ["seed-000-fs.png", "seed-000-fs-shape.png",
                                                        "seed-000-fs-turns.png"]
    shape = seed_plots.draw_shape(res)
    titles = [ax.get_title().replace("\n", " ") for ax in shape.axes]
    assert len(titles) == 2 and all(t.startswith(f"{c}: ") for t, c in zip(titles, seed_plots.shape_curves(res)))
    plt.close(shape)
    # the turns figure: per curve and socket count, base (hatched) then new, each stack from the bottom the means of
    # the kinds' ns per operation in CHAIN_ROWS' greys, then the rest of the mean time per operation (white)
    turns = seed_plots.draw_turns(res)
    assert [ax.get_title().replace("\n", " ") for ax in turns.axes] == seed_plots.turn_curves(res)
    for ax, name in zip(turns.axes, seed_plots.turn_curves(res)):
        stacks = {}
        for bar in ax.patches:
            stacks.setdefault(round(bar.get_x(), 6), []).append(bar)
        ps = sorted((p for p in res.points if p.point.curve == name), key=lambda p: p.point.base.sockets)
        arms = [(k, runs) for p in ps for k, runs in enumerate((p.base, p.new))]
        assert len(stacks) == len(arms)
        whiskers = [c for c in ax.collections if c.get_segments()]
        for (x, bars), (k, runs), whisker in zip(sorted(stacks.items()), arms, whiskers):
            time = [1e9 / m.throughput for m in runs]
            parts = [np.mean([m.analysis.chain.model_dump()[kind]["ticks"] / 1000 / m.run.ops for m in runs])
                     for _, kind in compare.CHAIN_ROWS]
            assert [b.get_height() for b in bars] == pytest.approx([*parts, np.mean(time) - sum(parts)])
            assert [b.get_y() for b in bars] == pytest.approx(np.cumsum([0, *parts]))
            assert [b.get_facecolor()[:3] for b in bars] == [
                to_rgb(c) for c in [*(seed_plots.TURN_GREYS[kind] for _, kind in compare.CHAIN_ROWS), "white"]]
            assert all(b.get_hatch() == (seed_plots.BASE_HATCH if k == 0 else "") for b in bars)
            (_, lo), (_, hi) = whisker.get_segments()[0]
            assert (lo, hi) == pytest.approx((min(time), max(time)))
    plt.close(turns)
    assert_seed_figures(res)
    ms[0].analysis.chain = None   # a run without a chain: no turns figure
    res = judging.SeedResult(e, point_results(e.points, ms, e.repetitions), [], [])
    assert "seed-000-fs-turns.png" not in seed_plots.figure_names([res])["000-fs"]


def made_up_run(spec, throughput: float) -> NS:
    """A run as the figures read it: its throughput and, for the turns figure, a chain over a 1 ms window whose
    region is the window: a turn of each kind per operation, the kinds 40%, 25% and 15% of the time (more across
    sockets the more sockets), the rest not on the line's turns."""
    ops = round(throughput * 1e-3)
    time_ps = 1e12 / throughput * ops
    shares = (0.4 * spec.sockets / 8, 0.25, 0.15)
    gaps = [line_chain.Gaps(count=ops, ticks=round(time_ps * f)) for f in shares]
    chain = line_chain.LineChain(line=1, span_ticks=sum(g.ticks for g in gaps), other_socket=gaps[0],
                                 same_socket=gaps[1], same_core=gaps[2])
    return NS(spec=spec, throughput=throughput, analysis=NS(chain=chain),
              run=NS(ops=ops, region_ops=ops, roi_seconds=1e-3, measured_seconds=1e-3, profile=lambda: None))


def test_figures_and_headings_say_hitm(drawn):
    for (runs, kind), fig in drawn.items():
        if fig is not None:
            for t in texts_of(fig):
                assert "dirty read" not in t.get_text().replace("\n", " ") or "HITM" in t.get_text(), (kind, t.get_text())


def test_split_title():
    title = "cohtb: lockref on simulated multi-socket x86 (bundled reference runs (reference-runs/, recorded with gem5))"
    assert report.split_title(title) == ("cohtb: lockref on simulated multi-socket x86",
                                         "bundled reference runs (reference-runs/, recorded with gem5)")
    assert report.split_title("cohtb report") == ("cohtb report", None)
    assert report.split_title("a (b)", "c") == ("a (b)", "c")
    assert report.split_title("(only)") == ("(only)", None)


@pytest.fixture(scope="module")
def written(ms, one, tmp_path_factory):
    root = tmp_path_factory.mktemp("reports")
    title = "cohtb: lockref on simulated multi-socket x86 (bundled reference runs (reference-runs/, recorded with gem5))"
    return {"all": report.write(ms, root / "all", title=title).parent, "one": report.write(one, root / "one").parent}


@pytest.mark.parametrize("which", ["all", "one"])
def test_every_table_has_its_csv(written, which, ms, one):
    out = written[which]
    idle = {f"Per field: {m.label}" for m in {"all": ms, "one": one}[which] if not report.has_traffic(m)}
    doc = json.loads((out / "report.json").read_text())
    md = (out / "report.md").read_text()
    page = (out / "report.html").read_text()
    files = sorted(p.name for p in (out / "tables").iterdir())
    assert len(files) == len(doc["tables"]) >= 5
    for title, t in doc["tables"].items():
        path = out / t["csv"]
        assert path.exists() and path.name == f"{slug(title)}.csv"
        rows = list(csv.reader(path.open(newline="")))
        assert rows[0] == t["header"]
        assert rows[1:] == [[csv_cell(c) for c in r] for r in t["rows"]]
        zeros = title in idle
        assert not zeros or all(c in ("0.000", "-") for r in t["rows"] for c in r[3:])
        # every table is on the page, but per-field tables of zeros, which are only in tables/ (and report.json)
        assert (f"]({t['csv']})" in md and f"href='{t['csv']}'" in page) != zeros, title


def test_csv_cells():
    assert csv_cell("1,234") == "1234" and csv_cell("-1,234,567.5") == "-1234567.5"
    assert csv_cell("1 (±0)") == "1 (±0)" and csv_cell("d_name, d_lockref") == "d_name, d_lockref"
    assert csv_cell("12.5%") == "12.5%" and csv_cell("0x2f9f") == "0x2f9f"


@pytest.mark.parametrize("which", ["all", "one"])
def test_report_structure(written, which):
    out = written[which]
    md = (out / "report.md").read_text()
    page = (out / "report.html").read_text()
    headings = re.findall(r"^(#+) (.*)$", md, re.M)
    h12 = [text for level, text in headings if len(level) <= 2]
    assert len(h12) == len(set(h12)), "a heading appears twice"
    assert [text for level, text in headings].count("Checks") == 1
    assert "Figures" not in h12
    assert "((" not in md and "))" not in page.split("</h1>")[0]
    assert page.count("<h2>Checks</h2>") == 1 and "<h3>Checks</h3>" not in page
    pngs = sorted(p.name for p in (out / "plots").iterdir())
    # every plot once in each document, captioned
    for name in pngs:
        assert md.count(f"(plots/{name})") == 1
    assert page.count("data:image/png;base64,") == len(pngs) == page.count("<figcaption>Figure ")
    if which == "all":
        assert headings[0] == ("#", "cohtb: lockref on simulated multi-socket x86")
        assert "<p class='subtitle'>bundled reference runs (reference-runs/, recorded with gem5)</p>" in page
        assert "scaling.png" in pngs


def unfolded(page: str) -> str:
    """The page as it first shows: without what <details> fold."""
    return re.sub(r"<details>.*?</details>", "<details></details>", page, flags=re.S)


@pytest.mark.parametrize("which", ["all", "one"])
def test_the_page_is_a_few_screens_tall(written, which):
    """Estimated at 1400 px wide: every figure shown at its own height (none is wider than the column), a table
    row 24 px, a paragraph or heading 40 px. Per-run tables and long tables are folded (<details>); the per-field
    tables of zeros are left out of the page. The bundled runs' page, measured in chromium, is about 9,100 px."""
    out = written[which]
    page = (out / "report.html").read_text()
    shown = unfolded(page)
    heights = [int.from_bytes(__import__("base64").b64decode(d)[20:24], "big")
               for d in re.findall(r"src='data:image/png;base64,([^']+)'", shown)]
    estimate = sum(heights) + 24 * shown.count("<tr>") + 40 * (shown.count("<p") + shown.count("<h") +
                                                                shown.count("<details>"))
    assert estimate < 10 * 1000, estimate
    assert page.count("<details>") >= 2 and "Per field, per run" in page
    if which == "all":
        assert shown.count("<tr>") < page.count("<tr>") / 3   # most rows are folded


def test_a_kernels_collapse_figure_shows_the_queued_share_and_the_listers_takes_from_the_trace(every):
    """004-collapse-fs's series figure, of its latest declaration with runs of every arm bundled: the middle panel is
    the kernel's queued share (cohtb/analysis/lock_queue.py), not left empty, and the top panel marks each listing's
    take."""
    drawn = [res for res in (judging.seed_result(e, every) for e in reversed(HISTORY["004-collapse-fs"]))
             if all(res.series[0].runs.get(label) for label in res.series[0].series.labelled())]
    if not drawn:
        pytest.skip("no 004-collapse-fs declaration with runs of every arm bundled")
    res = drawn[0]
    listed = [m for runs in res.series[0].runs.values() for m in runs if m.analysis.lister_visits]
    fig = seed_plots.draw_series(res.series[0])
    top, middle, _ = fig.axes
    assert "queued" in middle.get_title() and "MCS" in middle.get_title()
    shares = np.concatenate([line.get_ydata() for line in middle.get_lines() if line.get_marker() == "o"])
    assert shares.max() > 50 and shares.min() < 5     # lockless before the first listing, queued after it
    takes = [x for line in top.get_lines() if line.get_marker() == "v" for x in line.get_xdata()]
    assert len(takes) == sum(len(m.analysis.lister_visits) for m in listed)
    assert all(0 < x < res.experiment.declaration.window_us for x in takes)
    # the controls (the lister there, its first listing after the run) dashed, hollow; the kernels that list solid
    controls = {c for _, c in res.series[0].series.controls}
    curves = [line for line in top.get_lines() if line.get_marker() == "o"]
    assert {line.get_label() for line in curves} & controls
    for line in curves:
        control = line.get_label() in controls
        assert (line.get_linestyle() == "--", line.get_markerfacecolor() == "white") == (control, control), line
    assert_inside(fig, drawn_at_page_dpi(fig), fig.axes, "004-collapse-fs series")
    plt.close(fig)


def test_a_panel_wider_than_a_row_is_cut_into_parts_and_the_next_one_follows_its_last():
    def run(i):
        return NS(label=f"r{i}", spec=NS(sockets=1, cores_per_socket=4, workload="w"))
    wide, narrow = [run(i) for i in range(30)], [run(i) for i in range(3)]
    rows = plots._pack([("wide", wide), ("narrow", narrow)])   # a row holds 24 one-slot bars and a panel's axis
    assert [[(name, len(g)) for name, g in row] for row in rows] == [[("wide (1 of 2)", 24)],
                                                                     [("wide (2 of 2)", 6), ("narrow", 3)]]
    assert [m for row in rows for _, g in row for m in g] == wide + narrow


def test_every_fixed_ink_of_the_report_is_a_meaning_of_its_own():
    """The checks' 'matched' blue was 9 (CIELAB) from cmpxchg's, its grey 6 from an unknown policy's, and the
    ping-pong parts were the fields' line colours: each fixed ink at least 25 from every policy's and kernel's
    colour, the seed figures' inks and every other."""
    inks = {**{f"ping-pong {label}": c for label, _, c in plots.PINGPONG_PARTS},
            **{f"checks {label}": c for label, _, c in plots.CHECK_PARTS},
            **{f"fields line {i}": c for i, c in enumerate(plots.LINE_COLOURS)}}
    meanings = {**{f"policy {k}": v for k, v in palette.POLICY_COLOURS.items()},
                **{f"kernel {k}": v for k, v in palette.KERNEL_COLOURS.items()}, "unknown": palette.UNKNOWN,
                "simulated": seed_plots.SIMULATED, "published range": seed_plots.PUBLISHED_RANGE,
                **{f"turn {k}": v for k, v in seed_plots.TURN_GREYS.items()}, "edge": palette.EDGE, "white": "#ffffff"}
    everything = list({**inks, **meanings}.items())
    for (a, ca), (b, cb) in itertools.combinations(everything, 2):
        if a in inks or b in inks:
            assert np.linalg.norm(palette.cielab(ca) - palette.cielab(cb)) >= 25, (a, b)
