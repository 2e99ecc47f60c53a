"""Every figure the README's results block states is what the bundled runs give (`cohtb readme` writes it)."""

from pathlib import Path

import pytest

from cohtb.analysis.pipeline import metrics_for
from cohtb.report import readme
from cohtb.sim.runs import discover

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bundled(tmp_path_factory):
    return metrics_for(discover([ROOT / "reference-runs"]), tmp_path_factory.mktemp("analysis"), check_model=False)


def test_readme_results_are_current(bundled):
    assert readme.update(ROOT / "README.md", bundled, check=True), "README results are stale: run `cohtb readme`"


def test_a_changed_figure_is_caught(bundled, tmp_path):
    copy = tmp_path / "README.md"
    copy.write_text((ROOT / "README.md").read_text().replace("+389%", "+390%", 1))
    assert not readme.update(copy, bundled, check=True)
    readme.update(copy, bundled, check=False)
    assert readme.update(copy, bundled, check=True) and "+389%" in copy.read_text()
