"""A report is written whole or not at all: a write that fails part-way (a plot that raises after others were
written, a disk that fills at the last file) leaves neither the report nor a temporary directory behind, and an
earlier report in its place survives; the full disk is one error naming the report's directory."""

import errno
from pathlib import Path

import pytest

from cohtb.analysis import pipeline
from cohtb.atomic import MARKER
from cohtb.errors import CohtbError
from cohtb.report import html as report
from cohtb.run.runs import load
from run_fixtures import make_run


@pytest.fixture
def metrics(tmp_path):
    runs = [make_run(tmp_path / "runs", layout, 10, 1e-6, 3) for layout in ("shared", "split")]
    return pipeline.metrics_for([load(r) for r in runs], tmp_path / "analysis")


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith("."))


def test_a_plot_that_raises_part_way(tmp_path, metrics, monkeypatch):
    def broken(ms, path):
        raise RuntimeError("plot failed")

    monkeypatch.setitem(report.FIGURES, "matrices", broken)   # the other figures are drawn beside it
    monkeypatch.setenv("COHTB_CACHE", str(tmp_path / "cache"))   # no figures kept from an earlier report
    with pytest.raises(RuntimeError):
        report.write(metrics, tmp_path / "out" / "report")
    assert not (tmp_path / "out" / "report").exists() and leftovers(tmp_path / "out") == []


def test_a_full_disk_at_the_last_file_keeps_the_old_report(tmp_path, metrics, monkeypatch):
    out = tmp_path / "out" / "report"
    report.write(metrics, out)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    real = Path.write_text

    def full_disk(self, *a, **kw):
        if self.name == "report.html":
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, *a, **kw)

    monkeypatch.setattr(Path, "write_text", full_disk)
    with pytest.raises(CohtbError, match=f"^{out}: cannot write: No space left on device$"):
        report.write(metrics, out)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert leftovers(out.parent) == [] and leftovers(out) == [MARKER]   # the temporary beside it or inside it gone
