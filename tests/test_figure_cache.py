"""A report's figures drawn once for the same runs and drawing code (cohtb/report/figure_cache.py)."""

from cohtb.analysis.pipeline import metrics_for
from cohtb.report import figure_cache
from cohtb.run.runs import discover

from run_fixtures import make_run


def test_the_same_runs_draw_their_figures_once_and_other_runs_draw_again(tmp_path, monkeypatch):
    monkeypatch.setenv("COHTB_CACHE", str(tmp_path / "cache"))   # no figures another test drew of the same runs
    calls = []

    def draw(ms, d):
        calls.append(len(ms))
        (d / "a.png").write_bytes(f"{len(ms)} runs".encode())
        return {"a": d / "a.png", "b": None}   # b: nothing to draw

    one = metrics_for(discover([make_run(tmp_path / "runs", "shared", 10, 1e-6, 3)]), tmp_path / "an")
    two = one + metrics_for(discover([make_run(tmp_path / "runs2", "split", 10, 1e-6, 3)]), tmp_path / "an")
    outs = [tmp_path / f"out{i}" for i in range(3)]
    for o in outs:
        o.mkdir()
    figures, cached = figure_cache.drawn(one, outs[0], draw)
    assert not cached and calls == [1] and figures == {"a": outs[0] / "a.png", "b": None}
    figures, cached = figure_cache.drawn(one, outs[1], draw)   # the same runs: copied, not drawn
    assert cached and calls == [1] and figures == {"a": outs[1] / "a.png", "b": None}
    assert (outs[1] / "a.png").read_bytes() == b"1 runs"
    figures, cached = figure_cache.drawn(two, outs[2], draw)   # another set of runs: drawn
    assert not cached and calls == [1, 2] and (outs[2] / "a.png").read_bytes() == b"2 runs"
