"""The report's figures, checked on the matplotlib objects they drew (not on pixels): each run's socket matrix at
its own size on one shared colour scale, bars grouped by machine size with a legend of every policy, scaling's
ticks at 2, 4, 8 sockets, one bar per line (not per field), nothing clipped and no legend over the data for 1 run
or 18; and the report's structure and its CSV of every table."""

import csv
import json
import re

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.colors import LogNorm
from matplotlib.legend import Legend

from cohtb.analysis.pipeline import metrics_for
from cohtb.mainjob import REFERENCE_RUNS
from cohtb.report import html as report
from cohtb.report import plots
from cohtb.report.tables import csv_cell, slug
from cohtb.sim.runs import discover

pytestmark = pytest.mark.skipif(not any(REFERENCE_RUNS.glob("*/manifest.json")), reason="no bundled reference runs")

@pytest.fixture(scope="module")
def ms(tmp_path_factory):
    """The bundled runs' metrics, first repetition of each configuration as the main job's report has them
    (replayed through the RTL once for the module, without the model)."""
    runs = [r for r in discover([REFERENCE_RUNS]) if r.spec.seed <= 1]
    return metrics_for(runs, tmp_path_factory.mktemp("analysis"), check_model=False)


@pytest.fixture(scope="module")
def SIZES(ms):
    return [name for name, _ in plots.size_groups(ms)]


@pytest.fixture(scope="module")
def one(ms):
    return [next(m for m in ms if m.spec.sockets == 2)]


@pytest.fixture(scope="module")
def drawn(ms, one):
    """Every figure drawn (layout done) for the bundled runs and for one run; closed at the end."""
    figs = {}
    for name, runs in (("all", ms), ("one", one)):
        for kind in ("throughput", "pingpong", "fields", "matrices", "scaling"):
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
    return [t.get_text() for lg in fig.legends for t in lg.get_texts()]


def test_the_bundled_runs_have_every_size(ms):
    """Seed 000's socket series (1 to 8 sockets) and seed 004's 8-socket runs are bundled."""
    assert sorted({m.spec.sockets for m in ms}) == [1, 2, 4, 8]
    assert {m.spec.workload for m in ms} >= {"open_close", "stat_path"}


def test_each_matrix_panel_is_the_runs_own_size(ms, drawn):
    p = panels(drawn["all", "matrices"])
    assert set(p) == {m.label for m in ms}
    for m in ms:
        sockets = m.run.manifest.system.sockets
        arr = p[m.label].images[0].get_array()
        assert arr.shape == (sockets, sockets), m.label
        full = np.array(m.analysis.rtl.matrix, dtype=float) / m.run.ops
        off = ~np.eye(sockets, dtype=bool)
        # what was drawn is the monitor's matrix trimmed to the run, per operation; the diagonal is not coloured
        assert np.allclose(arr.filled(0)[off], full[:sockets, :sockets][off])
        assert arr.mask[np.eye(sockets, dtype=bool)].all()
        # and nothing was left outside the run's own sockets
        assert full.sum() == pytest.approx(full[:sockets, :sockets].sum())
    assert any(arr.shape == (2, 2) for arr in (ax.images[0].get_array() for ax in p.values()))


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
    for m in ms:
        mat = plots.socket_matrix(m)
        texts = {t.get_position(): t.get_text() for t in p[m.label].texts}
        assert all(texts[(k, k)] == plots._diag_text(mat[k, k]) for k in range(len(mat))), m.label
        assert "same socket" in p[m.label].get_title()
        assert p[m.label].get_xlabel() == "to socket" and p[m.label].get_ylabel() == "from socket"
    # one colour bar, labelled with its unit
    bars = [ax for ax in fig.axes if not ax.images and "per operation" in ax.get_ylabel()]
    assert len(bars) == 1 and "cross-socket transfers per operation" in bars[0].get_ylabel()
    assert "same-socket" in fig.get_supxlabel() and "log scale" in fig.get_supxlabel()


def bar_axes(fig, sizes) -> list:
    return [ax for ax in fig.axes if ax.get_title() in sizes]


def test_throughput_grouped_by_size_coloured_by_policy(ms, drawn, SIZES):
    fig = drawn["all", "throughput"]
    axes = bar_axes(fig, SIZES)
    assert [ax.get_title() for ax in axes] == SIZES
    assert axes[0].get_ylabel() == "operations per simulated µs"
    for ax, (size, runs) in zip(axes, plots.size_groups(ms)):
        assert all(plots.size_name(m) == size for m in runs)
        assert [t.get_text() for t in ax.get_xticklabels()] == [plots.short_label(m) for m in runs]
        bars = ax.patches
        assert len(bars) == len(runs)
        for b, m in zip(bars, runs):
            assert b.get_height() == pytest.approx(m.throughput / 1e6)
            assert np.allclose(b.get_facecolor()[:3], plt.matplotlib.colors.to_rgb(plots.policy_colour(m.spec.policy)))
            assert (b.get_hatch() or "") == plots.LAYOUT_HATCH[m.spec.layout]
    texts = legend_texts(fig)
    assert {m.spec.policy for m in ms} <= set(texts) and {"layout shared", "layout split"} <= set(texts)


def test_pingpong_grouped_with_its_legend(ms, drawn, SIZES):
    fig = drawn["all", "pingpong"]
    assert [ax.get_title() for ax in bar_axes(fig, SIZES)] == SIZES
    assert set(legend_texts(fig)) == {p[0] for p in plots.PINGPONG_PARTS}
    tops = {}
    for ax, (_, runs) in zip(bar_axes(fig, SIZES), plots.size_groups(ms)):
        for i, m in enumerate(runs):
            tops[m.label] = max(b.get_y() + b.get_height() for b in ax.patches if b.get_x() < i < b.get_x() + b.get_width())
    for m in ms:
        assert tops[m.label] == pytest.approx(m.per_op["transfers"] + m.per_op["dirtyReads"])


def test_scaling_ticks_are_sockets_and_every_series_is_drawn(ms, drawn):
    fig = drawn["all", "scaling"]
    series = plots.scaling_series(ms)
    sockets = sorted({m.spec.sockets for v in series.values() for m in v})
    assert len(sockets) > 1
    for ax in fig.axes:
        assert list(ax.get_xticks()) == sockets
        assert [t.get_text() for t in ax.get_xticklabels()] == [str(n) for n in sockets]
        assert ax.get_xlabel() == "sockets (4 cores each)" and ax.get_ylabel()
        lines = ax.get_lines()
        assert len(lines) == len(series)
        for line, ((workload, policy, layout, extra), v) in zip(lines, series.items()):
            assert policy + "/" + layout in line.get_label()
            xs = [m.spec.sockets for m in v]
            assert list(line.get_xdata()) == xs
            assert (line.get_linestyle() == "None") == (len(set(xs)) == 1)
    assert any(len(l.get_xdata()) == len(sockets) for l in fig.axes[0].get_lines())


def test_scaling_needs_runs_at_more_than_one_size(one, tmp_path):
    assert plots.draw_scaling(one) is None and plots.scaling(one, tmp_path / "s.png") is None


def test_fields_one_bar_per_line_named_by_its_fields(ms, drawn, SIZES):
    fig = drawn["all", "fields"]
    axes = bar_axes(fig, SIZES)
    assert [ax.get_title() for ax in axes] == SIZES
    for ax, (_, runs) in zip(axes, plots.size_groups(ms)):
        lines = [line for m in runs for line in plots.field_lines(m)]
        solid = [b for b in ax.patches if not b.get_hatch()]
        assert len(solid) == len(lines)       # one bar of transfers per line, however many fields it holds
        assert [b.get_height() for b in solid] == pytest.approx([f["transfers"] for _, f in lines])
    shared, split = (next(m for m in ms if m.spec.workload == "stat_path" and m.spec.layout == layout
                          and not m.spec.intruder_period_us) for layout in ("shared", "split"))

    def shares(m):   # the file's count word on a line of its name's
        return m.fields["file.d_lockref"]["lines"][0] in m.fields["file.d_iname"]["lines"]

    assert shares(shared) and not shares(split)   # before the reorder, not after it
    texts = [t.replace("\n", " ") for t in legend_texts(fig)]
    assert any(t.startswith("line of d_lockref (layout") and "split" in t for t in texts)
    assert {"transfers", "dirty reads"} <= set(texts)
    assert axes[0].get_ylabel()


def overlaps(a, b) -> bool:
    return a.x0 < b.x1 - 1 and b.x0 < a.x1 - 1 and a.y0 < b.y1 - 1 and b.y0 < a.y1 - 1


@pytest.mark.parametrize("runs", ["all", "one"])
@pytest.mark.parametrize("kind", ["throughput", "pingpong", "fields", "matrices", "scaling"])
def test_nothing_clipped_and_no_legend_over_the_data(drawn, runs, kind):
    fig = drawn[runs, kind]
    if fig is None:
        assert kind == "scaling" and runs == "one"
        return
    assert fig.get_layout_engine() is not None
    r = fig.canvas.get_renderer()
    box = fig.bbox
    texts = [t for t in (fig._suptitle, fig._supxlabel) if t is not None and t.get_text()]
    # each axes with what is drawn around it (title, labels, tick labels), each legend and figure-wide text
    for what, e in [*((ax.get_title() or "axes", ax.get_tightbbox(r)) for ax in fig.axes),
                    *(("legend", lg.get_window_extent(r)) for lg in fig.legends),
                    *((t.get_text(), t.get_window_extent(r)) for t in texts)]:
        assert box.x0 - 1 <= e.x0 and e.x1 <= box.x1 + 1 and box.y0 - 1 <= e.y0 and e.y1 <= box.y1 + 1, (kind, runs, what)
    legends = fig.legends + [c for ax in fig.axes for c in ax.get_children() if isinstance(c, Legend)]
    for lg in legends:
        for ax in fig.axes:
            assert not overlaps(lg.get_window_extent(r), ax.get_window_extent(r)), (kind, runs)
    if fig._suptitle is not None:
        top = fig._suptitle.get_window_extent(r)
        for ax in fig.axes:
            assert not overlaps(top, ax.get_tightbbox(r)), (kind, runs, "title over an axes")


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
def test_every_table_has_its_csv(written, which):
    out = written[which]
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
        assert f"]({t['csv']})" in md and f"href='{t['csv']}'" in page


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
