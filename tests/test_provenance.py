"""Every run names the code, host and time that recorded it; a checkout with uncommitted changes records only when
asked to, and then keeps its diff beside the run (cohtb/run/provenance.py). gem5 is tests/fake_gem5.py."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from cohtb import cli, launch
from cohtb.errors import CohtbError
from cohtb.experiments import declarations
from cohtb.places import REFERENCE_RUNS
from cohtb.run import provenance
from cohtb.run.bundle import bundle
from cohtb.run.manifest import load as load_manifest
from cohtb.run.runs import load
from cohtb.run.spec import RunSpec
from run_fixtures import seed_with_runs_to_record

FAKE = Path(__file__).with_name("fake_gem5.py")
SPEC = RunSpec("lockref", "locked", "split", 2, 2, 50)
DIRTY = provenance.Checkout("0" * 40, "diff --git a/cohtb/x.py b/cohtb/x.py\n--- a/cohtb/x.py\n+++ b/cohtb/x.py\n")


def git_repo(path: Path) -> Path:
    def git(*args):
        subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)
    path.mkdir()
    git("init", "-q")
    (path / "tracked.txt").write_text("one\n")
    git("add", "tracked.txt")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    return path


def test_a_checkout_is_clean_until_a_tracked_file_changes(tmp_path):
    repo = git_repo(tmp_path / "repo")
    (repo / "untracked.txt").write_text("not code cohtb runs\n")
    clean = provenance.checkout_of(repo)
    assert not clean.changed and re.fullmatch(r"[0-9a-f]{40}", clean.commit)
    provenance.require_clean(False, clean)
    (repo / "tracked.txt").write_text("two\n")
    dirty = provenance.checkout_of(repo)
    assert dirty.changed and dirty.commit == clean.commit and "+two" in dirty.diff
    outside = provenance.checkout_of(tmp_path)   # not a checkout at all: not known to be clean, so not clean
    assert outside.commit == "unknown" and outside.changed
    with pytest.raises(CohtbError, match="git cannot say which commit"):
        provenance.require_clean(False, outside)
    provenance.require_clean(True, outside)
    assert clean.identity == clean.commit and dirty.identity.startswith(dirty.commit + "+")


def test_a_dirty_checkout_is_refused_in_one_line_naming_the_changed_file():
    with pytest.raises(CohtbError, match=r"uncommitted changes \(cohtb/x.py\).*--allow-dirty") as e:
        provenance.require_clean(False, DIRTY)
    assert "\n" not in str(e.value)
    provenance.require_clean(True, DIRTY)


@pytest.mark.parametrize("verb", [["launch", "--workload", "lockref", "--ops", "50"], ["seeds", "--launch"]])
def test_launching_from_a_dirty_checkout_is_refused_before_anything_is_written(verb, tmp_path, capsys, monkeypatch):
    if verb[0] == "seeds":   # a seed with runs to record on the flat machine, whose stand-in gem5 needs no patches
        seed = seed_with_runs_to_record("flat")
        if seed is None:
            pytest.skip("every flat-machine declaration has all its runs kept")
        verb = [*verb, "--seed", seed]
    monkeypatch.setenv("GEM5", str(FAKE))
    monkeypatch.setenv("GEM5_CHI", str(FAKE))
    monkeypatch.setattr(provenance, "checkout", lambda: DIRTY)
    monkeypatch.setattr(declarations, "committed", lambda experiment: "2" * 40)   # whatever the declarations' state
    runs = tmp_path / "runs"
    code = cli.main([*verb, "--runs", str(runs)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "uncommitted changes" in err[0], err
    assert not runs.exists()


def test_every_run_keeps_where_and_when_it_was_recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE))
    monkeypatch.setattr(provenance, "checkout", lambda: provenance.Checkout("1" * 40, ""))
    [o] = launch.launch([SPEC], tmp_path, jobs=1)
    m = load_manifest(tmp_path / SPEC.id / "manifest.json")
    assert o.status == "done" and m.cohtb == {"commit": "1" * 40, "changed": False}
    assert m.recorded.host == provenance.host()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", m.recorded.started) and m.recorded.started <= m.recorded.ended
    assert not (tmp_path / SPEC.id / provenance.DIFF).exists()


def test_a_run_recorded_from_a_dirty_checkout_keeps_its_diff(tmp_path, monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE))
    monkeypatch.setattr(provenance, "checkout", lambda: DIRTY)
    [o] = launch.launch([SPEC], tmp_path, jobs=1)
    run = tmp_path / SPEC.id
    doc = json.loads((run / "manifest.json").read_text())
    assert o.status == "done" and doc["cohtb"]["changed"] is True
    assert doc["files"]["cohtb_diff"] == provenance.DIFF and (run / provenance.DIFF).read_text() == DIRTY.diff


def test_a_failure_record_names_no_path_of_the_recording_machine(tmp_path, monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE))
    monkeypatch.setenv("FAKE_GEM5_FAIL_POLICY", "locked")
    [o] = launch.launch([SPEC], tmp_path, jobs=1)
    doc = json.loads((tmp_path / f"{SPEC.id}.failed.json").read_text())
    assert o.status == "failed" and doc["recorded"]["host"] == provenance.host()
    assert doc["command"][0] == "{gem5}/" + FAKE.name
    assert not any(str(tmp_path) in part or str(FAKE.parent.parent) in part for part in [*doc["command"], doc["error"]])


def test_no_kept_failure_record_names_a_path_of_the_machine_that_recorded_it():
    records = sorted(REFERENCE_RUNS.glob("*.failed.json"))
    absolute = re.compile(r"""(?:^|[\s=:('"])/[A-Za-z]""")   # a path from the root, in any string of the record
    assert records

    def strings(o):
        return [x for v in (o.values() if isinstance(o, dict) else o) for x in strings(v)] \
            if isinstance(o, (dict, list)) else [o] if isinstance(o, str) else []
    for path in records:
        found = [s for s in strings(json.loads(path.read_text())) if absolute.search(s)]
        assert not found, (path.name, found[:1])


def test_bundling_a_run_recorded_from_a_dirty_checkout_keeps_its_diff(tmp_path, monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE))
    monkeypatch.setattr(provenance, "checkout", lambda: DIRTY)
    launch.launch([SPEC], tmp_path / "runs", jobs=1)
    bundle([load(tmp_path / "runs" / SPEC.id)], tmp_path / "bundled")
    kept = tmp_path / "bundled" / SPEC.id
    assert (kept / provenance.DIFF).read_text() == DIRTY.diff
    assert load(kept).manifest.files.model_extra["cohtb_diff"] == provenance.DIFF
