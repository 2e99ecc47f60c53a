"""The main job without gem5: one line saying so, then the bundled reference runs replayed through the
monitor RTL and the model, reported and compared; it ends with the summary and the HTML report's path."""

import os
import subprocess
import sys
from html import escape as html_escape

import pytest

from cohtb.analysis import cache
from cohtb.analysis.metrics import run_label
from cohtb.places import REFERENCE_RUNS, ROOT
from cohtb.run.runs import discover

pytestmark = pytest.mark.skipif(not any(REFERENCE_RUNS.glob("*/manifest.json")), reason="no bundled reference runs yet")


def test_main_job_from_the_bundled_runs(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "GEM5"}
    env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if not os.path.exists(os.path.join(p, "gem5.opt")))
    proc = subprocess.run([sys.executable, "-m", "cohtb.cli", "run", "--out", str(tmp_path)], capture_output=True,
                          text=True, env=env, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert out.splitlines()[0].startswith("cohtb run: gem5 for the flat machine not found") and "bundled reference runs" in out.splitlines()[0]
    runs = sorted(p.name for p in REFERENCE_RUNS.iterdir() if (p / "manifest.json").exists())
    assert f"identical counters on all {len(runs)} runs" in out
    assert "Seeds: published vs simulated" in out and "are in the report (`cohtb run --verbose`" in out
    assert "Throughput, fairness and ping-pong per operation" not in out and len(out.splitlines()) < 200   # short
    html = tmp_path / "report" / "report.html"
    assert f"Report: {html}" in out and html.exists()
    page = html.read_text()
    firsts = [r for r in discover([REFERENCE_RUNS]) if r.spec.seed <= 1]   # the page's runs; the seeds' tables hold the rest
    missing = [label for label in map(run_label, firsts) if html_escape(label) not in page]
    assert len(firsts) > 30 and not missing, missing   # every configuration is named on the page
    assert (tmp_path / "report" / "plots" / "matrices.png").exists()


def test_the_analysis_cache_key_follows_the_analysis_code_only(tmp_path, monkeypatch, request):
    """Kept counters are reused by another checkout of the same code and after a change to the report; a change
    to the code that counts makes them stale."""
    copy = tmp_path / "checkout"
    for f in [*cache.analysis_files(), ROOT / "cohtb" / "report" / "plots.py"]:
        dest = copy / f.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(f.read_bytes())

    def key() -> str:
        cache._code_digest.cache_clear()
        return cache._code_digest()

    here = key()
    request.addfinalizer(cache._code_digest.cache_clear)   # left empty: the next key is the real checkout's
    monkeypatch.setattr(cache, "ROOT", copy)
    assert key() == here
    (copy / "cohtb" / "report" / "plots.py").write_text("# a figure drawn otherwise\n")
    assert key() == here
    models = copy / "cohtb" / "monitor" / "models.py"
    models.write_text(models.read_text() + "\n# a rule counted otherwise\n")
    assert key() != here
