"""Inputs are never written to, and every damaged input is one clear line and exit status 2, never a traceback:
manifests and event files damaged field by field, truncated at every record boundary, the bundled runs read-only."""

import gzip
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cohtb import cli
from cohtb.atomic import MARKER
from cohtb.contract import HEADER_FIELDS
from cohtb.places import REFERENCE_RUNS
from run_fixtures import make_run

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "reference-runs"


def tree(path: Path) -> dict:
    """Every file and directory below path with its size, mode and modification time."""
    return {str(p.relative_to(path)): (p.stat().st_size, p.stat().st_mode, p.stat().st_mtime_ns)
            for p in sorted(path.rglob("*"))}


def run_cli(capsys, *argv: str) -> tuple[int, list[str]]:
    """The CLI in this process: an uncaught exception (a traceback) fails the test by itself."""
    code = cli.main(list(argv))
    return code, capsys.readouterr().err.strip().splitlines()


def damaged_manifests(doc: dict):
    """(what, damaged copy) for every field: dropped, of the wrong type, out of range."""
    def walk(d, path):
        items = d.items() if isinstance(d, dict) else enumerate(d)
        for k, v in items:
            yield path + [k], v
            if isinstance(v, (dict, list)) and v:
                yield from walk(v, path + [k])

    for path, value in list(walk(doc, [])):
        variants = [("dropped", None)]
        if isinstance(value, bool) or isinstance(value, (int, float)):
            variants += [("a string", "x"), ("negative", -5)]
        elif isinstance(value, str):
            variants += [("a number", 7), ("a list", [1])]
        elif isinstance(value, (dict, list)):
            variants += [("a string", "x")]
        for how, new in variants:
            d = json.loads(json.dumps(doc))
            parent = d
            for k in path[:-1]:
                parent = parent[k]
            if how == "dropped":
                if isinstance(parent, list):
                    continue
                del parent[path[-1]]
            else:
                parent[path[-1]] = new
            yield f"{'.'.join(map(str, path))} {how}", d


def test_damaged_manifests_are_one_line_errors(tmp_path, capsys):
    run = make_run(tmp_path / "runs", "shared", 10, 1e-6, 3)
    good = json.loads((run / "manifest.json").read_text())
    tried = errors = 0
    for what, doc in damaged_manifests(good):
        (run / "manifest.json").write_text(json.dumps(doc))
        before = tree(run)
        code, err = run_cli(capsys, "replay", str(run), "--out", str(tmp_path / "out"), "--lines", "0")
        tried += 1
        assert code in (0, 2), what
        if code == 2:
            errors += 1
            assert len(err) == 1 and str(run) in err[0], (what, err)
        assert tree(run) == before, what           # nothing written into the run
    assert tried > 100 and errors > tried / 2      # most damage is an error; extra or optional fields are not


@pytest.mark.parametrize("field", [n for n, _ in HEADER_FIELDS])
def test_damaged_event_file_header_fields(tmp_path, capsys, field):
    run = make_run(tmp_path / "runs", "shared", 10, 1e-6, 3)
    data = bytearray((run / "events.cohtb").read_bytes())
    offset = sum(size for n, size in HEADER_FIELDS[:[n for n, _ in HEADER_FIELDS].index(field)])
    size = dict(HEADER_FIELDS)[field]
    data[offset:offset + size] = b"\xff" * size if field != "reserved" else b"\x01" * size
    (run / "events.cohtb").write_bytes(bytes(data))
    code, err = run_cli(capsys, "replay", str(run), "--out", str(tmp_path / "out"), "--lines", "0")
    if field == "reserved":
        assert code == 0                          # reserved: ignored by readers
    else:
        assert code == 2 and len(err) == 1 and "events.cohtb" in err[0], err


def test_event_file_truncated_at_every_record_boundary(tmp_path, capsys):
    run = make_run(tmp_path / "runs", "shared", 10, 1e-6, 3)
    whole = (run / "events.cohtb").read_bytes()
    header_len = int.from_bytes(whole[10:12], "little")
    cuts = list(range(0, header_len, 7)) + list(range(header_len, len(whole), 12))
    for cut in cuts:
        (run / "events.cohtb").write_bytes(whole[:cut])
        code, err = run_cli(capsys, "replay", str(run), "--out", str(tmp_path / "out"), "--lines", "0")
        assert code == 2 and len(err) == 1 and "events.cohtb" in err[0], (cut, err)
        assert sorted(p.name for p in run.iterdir()) == ["events.cohtb", "manifest.json"]


def test_truncated_compressed_event_file(tmp_path, capsys):
    run = make_run(tmp_path / "runs", "shared", 10, 1e-6, 30)
    packed = gzip.compress((run / "events.cohtb").read_bytes())
    (run / "events.cohtb").unlink()
    for cut in (10, len(packed) // 2, len(packed) - 4):
        (run / "events.cohtb.gz").write_bytes(packed[:cut])
        code, err = run_cli(capsys, "replay", str(run), "--out", str(tmp_path / "out"), "--lines", "0")
        assert code == 2 and len(err) == 1 and "events.cohtb.gz" in err[0], (cut, err)
        assert sorted(p.name for p in run.iterdir()) == ["events.cohtb.gz", "manifest.json"]


@pytest.mark.skipif(not REFERENCE.exists(), reason="no bundled runs")
def test_report_and_compare_leave_a_read_only_copy_of_the_bundled_runs_untouched(tmp_path, capsys):
    ref = tmp_path / "reference-runs"
    ids = layout_pair_and_one_more()
    for i in ids:
        shutil.copytree(REFERENCE / i, ref / i)
    for p in [ref, *ref.rglob("*")]:
        p.chmod(p.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    before = tree(ref)
    try:
        code, _ = run_cli(capsys, "report", str(ref), "--out", str(tmp_path / "report"))
        assert code == 0
        code, _ = run_cli(capsys, "compare", str(ref / ids[0]), str(ref / ids[1]))
        assert code == 0
        code, _ = run_cli(capsys, "compare", "--by", "layout=shared,split", str(ref))
        assert code == 0
    finally:
        for p in [ref, *ref.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    assert tree(ref) == {k: (v[0], v[1] | stat.S_IWUSR, v[2]) for k, v in before.items()}
    mode = (tmp_path / "report").stat().st_mode & 0o777
    assert mode == 0o777 & ~_umask() and (tmp_path / "report" / "report.html").stat().st_mode & 0o044


def layout_pair_and_one_more() -> list[str]:
    """Three bundled runs of the smallest machine: a shared/split layout pair, and another run of that size."""
    from dataclasses import replace

    from cohtb.run.runs import discover

    specs = sorted((r.spec for r in discover([REFERENCE])), key=lambda s: (s.cores, s.id))
    ids = {s.id for s in specs}
    for s in specs:
        if not s.kernel and s.layout == "shared" and replace(s, layout="split").id in ids:   # SE: the layout is in the id
            third = next(o.id for o in specs if o.cores == s.cores and o.id not in (s.id, replace(s, layout="split").id))
            return [s.id, replace(s, layout="split").id, third]
    raise AssertionError("the bundled runs hold no shared/split pair")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_report_keeps_an_existing_report_unless_forced(tmp_path, capsys):
    run = make_run(tmp_path / "runs", "shared", 10, 1e-6, 3)
    out = tmp_path / "report"
    assert run_cli(capsys, "report", str(run), "--out", str(out))[0] == 0
    code, err = run_cli(capsys, "report", str(run), "--out", str(out))
    assert code == 2 and len(err) == 1 and "a report is there already" in err[0]
    assert run_cli(capsys, "report", str(run), "--out", str(out), "--force")[0] == 0


def test_compare_of_different_machines_and_of_a_run_with_itself(tmp_path, capsys):
    a = make_run(tmp_path / "runs", "shared", 10, 1e-6, 3)
    b = tmp_path / "other" / a.name
    shutil.copytree(a, b)
    doc = json.loads((b / "manifest.json").read_text())
    doc["spec"]["workload"] = "dget_parent"
    (b / "manifest.json").write_text(json.dumps(doc))
    code, err = run_cli(capsys, "compare", str(a), str(b), "--analysis", str(tmp_path / "an"))
    assert code == 2 and "differ in workload lockref vs dget_parent" in err[-1]
    assert run_cli(capsys, "compare", str(a), str(b), "--allow-mismatch", "--analysis", str(tmp_path / "an"))[0] == 0
    code, err = run_cli(capsys, "compare", str(a), str(a), "--analysis", str(tmp_path / "an"))
    assert code == 0 and any("compared with itself" in e for e in err)
    code, err = run_cli(capsys, "compare", "--by", "foo=a,b", str(tmp_path / "runs"))
    assert code == 2 and len(err) == 1 and "runs have no 'foo'" in err[0]


def test_a_closed_pipe_is_not_a_traceback(tmp_path):
    runs = tmp_path / "runs"
    make_run(runs, "shared", 10, 1e-6, 3)
    make_run(runs, "split", 10, 1e-6, 3)
    env = dict(os.environ, COHTB_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run(f"'{sys.executable}' -m cohtb.cli compare --by layout=shared,split '{runs}' | head -1",
                          shell=True, capture_output=True, text=True, env=env, cwd=ROOT)
    assert "Traceback" not in proc.stderr and "Error" not in proc.stderr, proc.stderr
    assert len(proc.stdout.splitlines()) == 1


def test_runs_by_id_and_version(capsys, monkeypatch, tmp_path):
    run = make_run(tmp_path / "results" / "runs", "shared", 10, 1e-6, 3)
    monkeypatch.chdir(tmp_path)
    code, _ = run_cli(capsys, "replay", run.name, "--out", str(tmp_path / "out"), "--lines", "0")
    assert code == 0
    code, err = run_cli(capsys, "replay", "no-such-run", "--lines", "0")
    assert code == 2 and len(err) == 1 and "nor a run of that id in results/runs or reference-runs/" in err[0]
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0 and capsys.readouterr().out.startswith("cohtb ")


def test_bundle_and_native_through_the_cli(tmp_path, capsys):
    """The verbs without their own test file: bundle (a run into a bundle that reads back) and native."""
    run = make_run(tmp_path / "runs", "shared", 10, 1e-6, 3)
    code, _ = run_cli(capsys, "bundle", str(run), "--into", str(tmp_path / "ref"))
    assert code == 0
    bundled = tmp_path / "ref" / run.name
    assert sorted(p.name for p in bundled.iterdir()) == [MARKER, "events.cohtb.gz", "manifest.json"]
    assert (bundled / MARKER).read_text() == "events.cohtb.gz\nmanifest.json\n"   # what bundle wrote
    assert gzip.decompress((bundled / "events.cohtb.gz").read_bytes()) == (run / "events.cohtb").read_bytes()
    assert run_cli(capsys, "replay", str(bundled), "--out", str(tmp_path / "out"), "--lines", "0")[0] == 0
    code, err = run_cli(capsys, "native", "lockref", "--threads", "2", "--ops", "200", "--repeat", "1", "--out", "")
    assert code == 0, err
    code, err = run_cli(capsys, "native", "nosuch", "--out", "")
    assert code == 2 and len(err) == 1 and "unknown workload 'nosuch'" in err[0]


def test_compare_of_runs_of_different_gem5_builds(tmp_path, capsys):
    a = make_run(tmp_path / "runs", "shared", 10, 1e-6, 3)
    b = tmp_path / "other" / a.name
    shutil.copytree(a, b)
    for run, build in ((a, "1111111111111111"), (b, "2222222222222222")):
        doc = json.loads((run / "manifest.json").read_text())
        doc["gem5"]["build"] = build
        (run / "manifest.json").write_text(json.dumps(doc))
    code, err = run_cli(capsys, "compare", str(a), str(b), "--analysis", str(tmp_path / "an"))
    assert code == 2 and "gem5 build 1111111111111111 vs 2222222222222222" in err[-1]
    assert run_cli(capsys, "compare", str(a), str(b), "--allow-mismatch", "--analysis", str(tmp_path / "an"))[0] == 0


@pytest.mark.parametrize("field, value", [("all_ops", "1200"), ("elapsed_s", "0.5"), ("flags", ["--op", "stat"]),
                                          ("layout_map", "objects"), ("ops", "200"), ("threads", "2")])
def test_a_workload_field_the_report_reads_of_the_wrong_type_is_refused(tmp_path, capsys, field, value):
    """The workload's own fields that the report reads are typed: a number written as a string, flags or a layout
    map of another shape are one line naming the field, exit 2, and no report."""
    run = make_run(tmp_path / "runs", "shared", 10, 1e-6, 3)
    doc = json.loads((run / "manifest.json").read_text())
    doc["workload"][field] = value
    (run / "manifest.json").write_text(json.dumps(doc))
    code, err = run_cli(capsys, "report", str(run), "--out", str(tmp_path / "report"), "--analysis", str(tmp_path / "a"))
    assert code == 2 and len(err) == 1 and f"field 'workload.{field}'" in err[0] and str(run) in err[0], err
    assert not (tmp_path / "report" / "report.html").exists()


def test_a_timed_run_whose_two_windows_disagree_is_refused(tmp_path, capsys):
    """A timed run stores its window twice, as asked (spec.window_us) and as measured (workload.measure.window_ns):
    labels read one and throughput the other, so a manifest where they differ is refused, naming the field."""
    run = tmp_path / "runs" / "pause-pause-private-1x2-warm20-win100-int10"
    shutil.copytree(REFERENCE_RUNS / run.name, run)
    assert run_cli(capsys, "replay", str(run), "--out", str(tmp_path / "ok"), "--lines", "0")[0] == 0
    doc = json.loads((run / "manifest.json").read_text())
    doc["workload"]["measure"]["window_ns"] += 1000
    (run / "manifest.json").write_text(json.dumps(doc))
    code, err = run_cli(capsys, "replay", str(run), "--out", str(tmp_path / "out"), "--lines", "0")
    assert code == 2 and len(err) == 1 and "field 'workload.measure.window_ns'" in err[0] and str(run) in err[0], err


def test_a_manifest_that_is_not_json_says_so(tmp_path, capsys):
    run = make_run(tmp_path / "runs", "shared", 10, 1e-6, 3)
    (run / "manifest.json").write_text('{"cohtb_run": 1, "id": ')
    code, err = run_cli(capsys, "replay", str(run), "--lines", "0")
    assert code == 2 and len(err) == 1 and "manifest.json: not valid JSON" in err[0] and "field ''" not in err[0], err


@pytest.mark.parametrize("argv, said", [
    (["replay", "--lines", "-1", "x"], "argument --lines: -1 is negative"),
    (["soak", "--variant", "nosuch", "--events", "10"], "unknown monitor variant (known: default, small, lru"),
    (["synth", "--variant", "nosuch"], "unknown monitor variant (known: default, small, lru"),
])
def test_an_option_out_of_its_range_is_refused_naming_it(capsys, argv, said):
    try:
        code = cli.main(argv)
    except SystemExit as e:   # argparse's own refusal
        code = e.code
    captured = capsys.readouterr()
    assert code == 2 and said in captured.err and "Traceback" not in captured.err
    assert "synthesizing" not in captured.out   # refused before anything starts


def test_help_says_what_is_true(capsys):
    """A flag shows no stored default; a description prints its percent sign once."""
    for verb, absent, present in [("report", "(default: True)", "--no-compare"), ("compare", "%%", "% change")]:
        with pytest.raises(SystemExit):
            cli.main([verb, "--help"])
        out = capsys.readouterr().out
        assert absent not in out and present in out, verb
