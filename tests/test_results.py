"""docs/results.md and the README's results block are what `cohtb results` writes from the kept runs: a
change that moves a figure (or a run that is re-recorded) fails here until the page is written again."""

import subprocess
import sys

from cohtb.report import results
from cohtb.toolchain import ROOT


def test_results_page_and_readme_block_are_current():
    proc = subprocess.run([sys.executable, "-m", "cohtb.cli", "results", "--check"], capture_output=True, text=True,
                          cwd=ROOT, timeout=3000)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "match the kept runs" in proc.stdout


def test_the_page_names_every_seed_and_how_it_was_made():
    page = (ROOT / "docs" / "results.md").read_text()
    assert f"Written by `{results.COMMAND}`" in page
    for seed in ("000", "001", "002", "003", "004"):
        assert f"## Seed {seed}:" in page
    readme = (ROOT / "README.md").read_text()
    assert results.BEGIN in readme and "docs/results.md" in readme.split(results.BEGIN, 1)[1]
