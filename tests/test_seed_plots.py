"""docs/results.md's seed figures (cohtb/report/seed_plots.py), checked on the matplotlib objects they drew, at the
page's size: every speed-up readable between two labelled ticks near it, no two row labels on top of each other,
one swatch per meaning (no two alike in a legend, none of the turns' or the shape figure's like a policy's or a
kernel's), and the series figures' panels over the same stretch of the window, titled by what they draw. Runs are
made up (the test is of the drawing, not of a result) but for the series figures, drawn from the bundled runs."""

import itertools
from types import SimpleNamespace as NS

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import to_rgb
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from cohtb.analysis import compare, line_chain
from cohtb.analysis.pipeline import metrics_for
from cohtb.experiments import judging, profile_band
from cohtb.experiments.reproduce import point_results
from cohtb.experiments.seeds import EXPERIMENTS, HISTORY
from cohtb.run.kernels import VARIANTS
from cohtb.mainjob import REFERENCE_RUNS
from cohtb.report import palette, plots, seed_plots
from cohtb.run.runs import kept


@pytest.fixture(autouse=True)
def _closed():
    yield
    plt.close("all")


def made_up_run(spec, throughput: float) -> NS:
    """A run as the figures read it: its throughput and, for the turns figure, a chain over a 1 ms window whose
    region is the window: each kind of turn a share of the time (more across sockets the more sockets)."""
    ops = round(throughput * 1e-3)
    time_ps = 1e12 / throughput * ops
    gaps = [line_chain.Gaps(count=ops, ticks=round(time_ps * f)) for f in (0.4 * spec.sockets / 8, 0.25, 0.15)]
    chain = line_chain.LineChain(line=1, span_ticks=sum(g.ticks for g in gaps), other_socket=gaps[0],
                                 same_socket=gaps[1], same_core=gaps[2])
    return NS(spec=spec, throughput=throughput, analysis=NS(chain=chain),
              run=NS(ops=ops, region_ops=ops, roi_seconds=1e-3, measured_seconds=1e-3))


def made_up(e, gain) -> judging.SeedResult:
    """e's points with every repetition run: the new arm gain(point) times the base's, 1% apart per repetition."""
    ms = []
    for p in e.points:
        for spec in e.specs():
            if spec.repetition_of in (p.base.repetition_of, p.new.repetition_of):
                g = gain(p) if spec.repetition_of == p.new.repetition_of else 1.0
                ms.append(made_up_run(spec, 1e6 * g * (1 + 0.01 * spec.seed)))
    return judging.SeedResult(e, point_results(e.points, ms, e.repetitions), [], [])


def rendered(fig):
    fig.set_dpi(plots.DPI)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def overlaps(a, b) -> bool:
    return a.x0 < b.x1 - 1 and b.x0 < a.x1 - 1 and a.y0 < b.y1 - 1 and b.y0 < a.y1 - 1


def labelled_ticks(axis) -> list[float]:
    lo, hi = sorted(axis.get_view_interval())
    return sorted(t.get_loc() for t in axis.get_major_ticks() if t.label1.get_text() and lo <= t.get_loc() <= hi)


def assert_readable(axis, values, r) -> None:
    """Every value within 5% of a labelled tick or between two at most 2x apart (1x, 1.5x, 2x, 3x ...), none
    further past the last label; the labels apart."""
    ticks = labelled_ticks(axis)
    for v in values:
        if min(abs(np.log(v / t)) for t in ticks) <= np.log(1.05):
            continue
        assert ticks[0] <= v <= ticks[-1], (v, ticks)
        i = np.searchsorted(ticks, v)
        assert v == ticks[i] or ticks[i] / ticks[i - 1] <= 2.0 + 1e-9, (v, ticks)
    boxes = [t.label1.get_window_extent(r) for t in axis.get_major_ticks() if t.label1.get_text()
             and t.get_loc() in ticks]
    assert not any(overlaps(a, b) for a, b in itertools.combinations(boxes, 2)), ticks


def swatch_fill(handle):
    """The colour a legend handle shows as a filled box: a patch's fill, or a line thick enough to read as a bar
    (vlines' bands); None for a marker, a thin line or an empty box."""
    if isinstance(handle, Patch):
        return tuple(to_rgb(handle.get_facecolor())) if handle.get_fill() else None
    return tuple(to_rgb(handle.get_color())) if isinstance(handle, Line2D) and handle.get_linewidth() >= 5 else None


def legend_swatches(fig) -> list[tuple[str, tuple | None, str]]:
    """Each swatch of the figure's legends: its label, fill (swatch_fill) and hatch."""
    legends = [*fig.legends, *(c for ax in fig.axes for c in ax.get_children() if isinstance(c, Legend))]
    return [(t.get_text(), swatch_fill(h), (h.get_hatch() or "") if isinstance(h, Patch) else "")
            for lg in legends for h, t in zip(lg.legend_handles, lg.get_texts())]


def alike(a, b, apart: float = 25) -> bool:
    """Closer than palette.py keeps its policies (25): a reader could take one for the other across figures."""
    return np.linalg.norm(palette.cielab(a) - palette.cielab(b)) < apart


def meaning_colours() -> list[str]:
    """Every colour a bar or line of a policy or a kernel variant is drawn in (palette.py)."""
    kernel = getattr(palette, "kernel_colour", None)
    return [*palette.POLICY_COLOURS.values(), *([kernel(v) for v in VARIANTS] if kernel else [])]


# -- speed-ups readable, labels apart

def test_the_speed_up_panel_s_row_labels_do_not_overlap():
    """Seed 000's rows wrap to one, two or three lines (its control's to three): each row as tall as its label."""
    res = made_up(EXPERIMENTS["000"], lambda p: 2.0)
    fig = seed_plots.draw_seed(res)
    r = rendered(fig)
    speedup = fig.axes[1]
    labels = [t for t in speedup.get_yticklabels() if t.get_text()]
    assert max(t.get_text().count("\n") for t in labels) >= 2
    for a, b in itertools.combinations(labels, 2):
        assert not overlaps(a.get_window_extent(r), b.get_window_extent(r)), (a.get_text(), b.get_text())


@pytest.mark.parametrize("gain", [1.1, 1.45, 2.7, 6.5, 0.4])
def test_every_speed_up_of_a_seed_figure_reads_between_two_labels(gain):
    res = made_up(EXPERIMENTS["001"], lambda p: gain)
    fig = seed_plots.draw_seed(res)
    speedup = fig.axes[1]
    values = [x for line in speedup.get_lines() for x in line.get_xdata()]
    assert_readable(speedup.xaxis, [v for v in values if v != 1], rendered(fig))


def test_every_speed_up_of_a_declarations_figure_reads_between_two_labels():
    """Seed 001's declarations, whose first (3.4x) sat above the last label (2x) of an axis labelled 1x and 2x."""
    gains = iter([3.4, 1.6, 1.17, 2.7, 1.3])
    history = [made_up(e, lambda p, g=next(gains): g) for e in HISTORY["001"]]
    fig = seed_plots.draw_declarations(history)
    ax = fig.axes[0]
    values = [y for line in ax.get_lines() for y in line.get_ydata() if line.get_marker() not in (None, "", "None")]
    assert len(values) >= 3
    assert_readable(ax.yaxis, values, rendered(fig))


def test_every_speed_up_of_a_shape_figure_reads_between_two_labels():
    gains = {1: 1.0, 2: 1.6, 4: 3.5, 8: 3.9}
    fig = seed_plots.draw_shape(made_up(EXPERIMENTS["000-fs"], lambda p: gains[p.base.sockets]))
    r = rendered(fig)
    for ax in fig.axes:
        values = [y for line in ax.get_lines() for y in line.get_ydata() if line.get_marker() not in (None, "", "None")]
        assert_readable(ax.yaxis, values, r)


# -- one swatch per meaning

def test_the_declarations_are_told_apart_by_marker_in_the_simulated_speed_up_s_ink():
    """Their colours were each near a policy's (a teal by retry100's green, an ochre by trywait's orange): a
    declaration is a method, and its markers are the simulated speed-up, drawn as the seed figure draws it."""
    history = [made_up(e, lambda p: 1.5) for e in HISTORY["000"]]
    ax = seed_plots.draw_declarations(history).axes[0]
    simulated = [line for line in ax.get_lines() if line.get_marker() in seed_plots.DECLARATION_MARKERS]
    assert len({line.get_marker() for line in simulated}) == len(seed_plots._distinct_runs(history)) >= 3
    assert {line.get_color() for line in simulated} == {seed_plots.SIMULATED}
    seed = seed_plots.draw_seed(made_up(EXPERIMENTS["000"], lambda p: 1.5))
    assert {line.get_color() for line in seed.axes[1].get_lines() if line.get_marker() == "o"} == {seed_plots.SIMULATED}


def shape_and_turns():
    res = made_up(EXPERIMENTS["000-fs"], lambda p: {1: 1.0, 2: 1.6, 4: 2.1, 8: 2.3}[p.base.sockets])
    return seed_plots.draw_shape(res), seed_plots.draw_turns(res)


def test_the_turns_legend_has_a_swatch_of_its_own_for_each_meaning():
    """The time off the line's turns and the new arm's bars were both a plain white swatch."""
    _, turns = shape_and_turns()
    swatches = legend_swatches(turns)
    assert len(swatches) == len(compare.CHAIN_ROWS) + 2   # each kind, the rest, the hatched base arm
    looks = [(fill, hatch) for _, fill, hatch in swatches]
    assert len(set(looks)) == len(looks) and None not in [fill for fill, _ in looks], swatches
    # the base arm's hatch is no layout's: "///" is "layout shared" on the throughput figures' bars
    assert seed_plots.BASE_HATCH not in palette.LAYOUT_HATCH.values()
    assert any(hatch == seed_plots.BASE_HATCH for _, _, hatch in swatches)


def test_no_swatch_of_the_turns_or_shape_figure_looks_like_a_policy_s_or_another_meaning_s():
    """percpu's dark grey bar (seed 003) and the turns' other-socket grey were alike; the shape figure's published
    range and minimum effect were light greys like the turns' same-core one."""
    shape, turns = shape_and_turns()
    boxes = [(label, fill) for fig in (shape, turns) for label, fill, hatch in legend_swatches(fig)
             if fill is not None and not hatch]
    assert len(boxes) >= 5
    for label, fill in boxes:
        assert not any(alike(fill, c) for c in meaning_colours()), label
    # side by side in a legend and a bar's stack, greys told apart at less than the palette's distance
    for (a, fa), (b, fb) in itertools.combinations(boxes, 2):
        assert not alike(fa, fb, 15), (a, b)


# -- the series figures, from the bundled runs

@pytest.fixture(scope="module")
def series_results(tmp_path_factory):
    """Seed 004's SE series and 004-collapse-fs's, each of its latest declaration with runs of every label kept."""
    if not any(REFERENCE_RUNS.glob("*/manifest.json")):
        pytest.skip("no bundled reference runs")
    out = []
    for seed in ("004", "004-collapse-fs"):
        for e in reversed(HISTORY[seed]):
            specs = [s for series in e.series for t in series.runs for s in e.repeat(t)]
            runs, missing = kept(specs, [REFERENCE_RUNS])
            if runs and not missing:
                ms = metrics_for(runs, tmp_path_factory.mktemp(seed), check_model=False)
                out.append(judging.seed_result(e, ms).series[0])
                break
    if len(out) < 2:
        pytest.skip("no declaration of seed 004 or 004-collapse-fs with every series run bundled")
    return out


def drawn_lines(ax) -> list:
    """The mean lines of a panel (a marker at each interval), not the disturbance's line or the lister's takes."""
    return [line for line in ax.get_lines() if line.get_marker() == "o"]


def test_the_series_panels_cover_the_same_stretch_of_the_window(series_results):
    """The transfers panel ended an interval before the ops panel (its last interval was left out as partial)."""
    for s in series_results:
        fig = seed_plots.draw_series(s)
        interval = s.series.runs[0].interval_us
        assert len({ax.get_xlim() for ax in fig.axes}) == 1
        for ax in fig.axes:
            for line in drawn_lines(ax):
                x = line.get_xdata()
                assert x[0] == pytest.approx(interval / 2, abs=0.05 * interval), (ax.get_ylabel(), line.get_label())
                assert x[-1] == pytest.approx(s.series.runs[0].window_us - interval / 2, abs=0.05 * interval)


def test_a_series_figure_s_titles_name_only_what_its_legend_shows(series_results):
    """004-collapse-fs's title said "retry100", a policy its legend (its kernels) never shows; seed 004's began
    "collapse:", the series' declared name, over a retry100 that does not collapse (its verdict: no)."""
    names = set(palette.POLICY_COLOURS) | set(VARIANTS)
    for s in series_results:
        fig = seed_plots.draw_series(s)
        shown = {t.get_text() for lg in fig.legends for t in lg.get_texts()}
        assert shown == set(s.runs)
        for ax in fig.axes:
            title = ax.get_title()
            said = {n for n in names if f"{n}:" in title or f"{n} " in title or f"{n}," in title}
            assert said <= shown, (title, said - shown)
            assert "collapse" not in title.lower()
        assert seed_plots.published_labels(s) and set(seed_plots.published_labels(s)) <= shown


# -- the profile figure

def test_the_profile_figure_draws_each_arm_beside_its_published_profile_within_the_figure(monkeypatch):
    """Seed 004-fs's latest declaration with made-up profiles on every run: a panel per arm; the judged arm's rows
    are the declared functions, its band drawn around each; every text inside the figure, titles apart."""
    e = EXPERIMENTS["004-fs"]
    if not e.declaration.profile_functions:
        pytest.skip("004-fs's latest declaration has no profile band")
    res = made_up(e, lambda p: 1.5)
    share = {"base": 0.05, "new": 0.04}
    monkeypatch.setattr(profile_band, "of", lambda run: run)
    monkeypatch.setattr(profile_band, "share_of", lambda run, s: share[run.arm] * (1 + 0.01 * run.spec.seed))
    for p in res.points:
        for arm, runs in (("base", p.base), ("new", p.new)):
            for m in runs:
                m.arm = m.run.arm = arm
                m.run.spec = m.spec
    panels = seed_plots.profile_panels(res)
    assert [c.arm for _, c in panels] == ["base", "new"]
    fig = seed_plots.draw_profile(res)
    r = rendered(fig)
    base_ax = fig.axes[0]
    assert [t.get_text() for t in base_ax.get_yticklabels()] == list(e.declaration.profile_functions)
    whole = fig.bbox
    texts = [t for ax in fig.axes for t in (ax.title, *ax.get_yticklabels(), ax.xaxis.label)] + \
            [t for lg in fig.legends for t in lg.get_texts()]
    for t in texts:
        b = t.get_window_extent(r)
        assert whole.x0 - 1 <= b.x0 and b.x1 <= whole.x1 + 1 and whole.y0 - 1 <= b.y0 and b.y1 <= whole.y1 + 1, t
    assert not overlaps(fig.axes[0].title.get_window_extent(r), fig.axes[1].title.get_window_extent(r))
    assert seed_plots.profile_figure_name("004-fs") in seed_plots.figure_names([res])["004-fs"]
