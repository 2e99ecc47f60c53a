"""Manifests name no machine's directories: paths under the repository, the kernel cache, the gem5 build and
the run's own directory are written relative to them ({repo}, {kernel_cache}, {gem5}, {run})."""

import json
from pathlib import Path

import pytest

from cohtb.places import kernel_cache
from cohtb import launch
from cohtb.places import REFERENCE_RUNS
from cohtb.run.spec import RunSpec
from cohtb.run.portable import portable, roots
from cohtb.toolchain import ROOT

FAKE = Path(__file__).with_name("fake_gem5.py")


def strings(o):
    if isinstance(o, dict):
        for v in o.values():
            yield from strings(v)
    elif isinstance(o, list):
        for v in o:
            yield from strings(v)
    elif isinstance(o, str):
        yield o


def test_a_recorded_manifest_names_no_directory_of_this_machine(monkeypatch, tmp_path):
    monkeypatch.setenv("GEM5", str(FAKE))
    monkeypatch.setenv("COHTB_KERNEL_CACHE", str(tmp_path / "kernels"))
    runs = tmp_path / "runs"
    runs.mkdir()
    [o] = launch.launch([RunSpec("lockref", "locked", "split", 2, 2, 50)], runs, jobs=1)
    assert o.status == "done", o.error
    m = json.loads((runs / o.spec.id / "manifest.json").read_text())
    text = list(strings(m))
    for place in (ROOT, FAKE.parent, tmp_path):
        assert not [s for s in text if str(place) in s], place
    cmd = m["gem5"]["command"]
    assert cmd[0] == "{gem5}/fake_gem5.py" and "{repo}/gem5-configs/cohtb_se.py" in cmd
    assert "--outdir={run}/gem5" in cmd


@pytest.mark.parametrize("manifest", sorted(REFERENCE_RUNS.glob("*/manifest.json")), ids=lambda p: p.parent.name)
def test_bundled_manifests_name_no_machine_path(manifest):
    text = manifest.read_text()
    for machine_path in ('"/work/', '"/root/', '"/opt/', '"/home/', "=/work/", "=/root/"):
        assert machine_path not in text


def test_only_whole_paths_are_replaced():
    places = {"{repo}": Path("/src/cohtb"), "{run}": Path("/src/cohtb/results/runs/.r.x1")}
    doc = {"a": ["/src/cohtb/x", "/src/cohtbx/y", "--outdir=/src/cohtb/results/runs/.r.x1/gem5", "/src/cohtb",
                 "/other/src/cohtb/z"]}
    assert portable(doc, places) == {"a": ["{repo}/x", "/src/cohtbx/y", "--outdir={run}/gem5", "{repo}",
                                           "/other/src/cohtb/z"]}


def test_the_kernel_cache_is_a_place(monkeypatch, tmp_path):
    monkeypatch.setenv("COHTB_KERNEL_CACHE", str(tmp_path))
    assert roots(tmp_path / "run", None)["{kernel_cache}"] == kernel_cache() == tmp_path
