"""Outputs: cohtb never deletes a file it did not write, and an output it cannot write is one line on stderr
naming it, with exit status 2 and no traceback, for every verb that writes.

A read-only place and a full disk are tmpfs mounts (the tests run as root, whom chmod does not stop); they
skip, saying why, where mounting is not permitted. Each mount is undone by its fixture."""

from __future__ import annotations

import contextlib
import errno
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from cohtb import cli, mainjob, toolchain
from cohtb.report import pages
from cohtb.atomic import MARKER, atomic_dir, owned, write_text_atomic
from cohtb.errors import CohtbError
from cohtb.fpga import ecp5
from cohtb.run import gem5
from cohtb.se import native
from cohtb.run.spec import RunSpec
from run_fixtures import make_run, seed_with_runs_to_record

FAKE_GEM5 = Path(__file__).with_name("fake_gem5.py")


# --- helpers -------------------------------------------------------------------------------------------------

def plant(d: Path) -> dict[Path, str]:
    """Files of the user's in d: a note and a file in a subdirectory."""
    files = {d / "notes.txt": "my notes\n", d / "sub" / "data.csv": "a,b\n1,2\n"}
    for p, text in files.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return files


def intact(files: dict[Path, str]) -> bool:
    return all(p.is_file() and p.read_text() == text for p, text in files.items())


def run_cli(capsys, *argv) -> tuple[int, list[str]]:
    """The CLI in this process (an uncaught exception fails the test with its traceback); exit code, stderr lines
    (a progress line redrawn with \\r counts as one line per drawing)."""
    code = cli.main([str(a) for a in argv])
    return code, capsys.readouterr().err.replace("\r", "\n").strip().splitlines()


def run_cli_process(*argv) -> tuple[int, list[str]]:
    """The CLI in a process of its own (launch's progress line keeps the stderr it was imported with)."""
    proc = subprocess.run([sys.executable, "-m", "cohtb.cli", *map(str, argv)], capture_output=True, text=True)
    return proc.returncode, proc.stderr.replace("\r", "\n").strip().splitlines()


def refused(capsys, verb: str, path: Path, *argv) -> str:
    """The verb fails with exit 2 and one line `cohtb VERB: error: ...` naming path, its last word on stderr (after
    its progress lines, if any) and no traceback; returns the line."""
    code, err = run_cli_process(verb, *argv) if capsys is None else run_cli(capsys, verb, *argv)
    # launch's progress line ends without a newline when a run's failure stops it: the error follows it on its line
    errors = [line[line.index(f"cohtb {verb}: error: "):] for line in err if f"cohtb {verb}: error: " in line]
    assert code == 2 and len(errors) == 1 and errors[0] in err[-1] and not any("Traceback" in line for line in err), err
    assert str(path) in errors[0], errors[0]
    return errors[0]


@contextlib.contextmanager
def tmpfs(d: Path, options: str):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root (chmod cannot make a place unwritable for root, so these run as root)")
    d.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(d)], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here (no CAP_SYS_ADMIN?): {proc.stderr.strip()}")
    try:
        yield d
    finally:
        if subprocess.run(["umount", str(d)]).returncode != 0:
            subprocess.run(["umount", "-l", str(d)], check=True)


def fill(d: Path) -> None:
    """Writes into d until its file system is full."""
    fd = os.open(d / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as e:
        assert e.errno == errno.ENOSPC
    finally:
        os.close(fd)


UNWRITABLE = ["read-only mount point", "in a read-only directory", "full disk"]


@pytest.fixture(params=UNWRITABLE)
def unwritable(request, tmp_path):
    """An output path cohtb cannot write: a read-only mount point itself, a path inside one, one on a full disk."""
    if request.param == "full disk":
        with tmpfs(tmp_path / "full", "size=64k") as d:
            fill(d)
            yield d / "out"
        return
    with tmpfs(tmp_path / "ro", "ro,size=1m") as d:
        yield d if request.param == "read-only mount point" else d / "out"


@pytest.fixture
def runs(tmp_path) -> list[Path]:
    return [make_run(tmp_path / "runs", layout, 10, 1e-6, 3) for layout in ("shared", "split")]


# --- the writing helpers themselves --------------------------------------------------------------------------

def test_a_replaced_output_keeps_what_cohtb_did_not_write(tmp_path):
    out = tmp_path / "out"
    with atomic_dir(out) as tmp:
        (tmp / "a.txt").write_text("1")
        (tmp / "old").mkdir()
        (tmp / "old" / "b.txt").write_text("1")
    assert owned(out) == {"a.txt", "old/b.txt"}
    mine = plant(out)
    (out / "old" / "mine.txt").write_text("mine")   # the user's file inside a directory cohtb made
    with atomic_dir(out) as tmp:
        (tmp / "a.txt").write_text("2")
    assert (out / "a.txt").read_text() == "2" and not (out / "old" / "b.txt").exists()   # the earlier output's
    assert intact(mine) and (out / "old" / "mine.txt").read_text() == "mine"
    assert owned(out) == {"a.txt"} and sorted(p.name for p in out.iterdir()) == [MARKER, "a.txt", "notes.txt", "old", "sub"]


def test_a_failed_output_leaves_the_directory_as_it_was(tmp_path):
    out = tmp_path / "out"
    mine = plant(out)
    with pytest.raises(RuntimeError), atomic_dir(out) as tmp:
        (tmp / "a.txt").write_text("1")
        raise RuntimeError("failed part-way")
    assert intact(mine) and sorted(p.name for p in out.iterdir()) == ["notes.txt", "sub"]


def test_a_name_held_by_something_else_is_refused_before_anything_moves(tmp_path):
    out = tmp_path / "out"
    (out / "a.txt").mkdir(parents=True)   # the user's directory where cohtb's file would go
    with pytest.raises(CohtbError, match="a.txt: cohtb's output needs this name"), atomic_dir(out) as tmp:
        (tmp / "a.txt").write_text("1")
        (tmp / "b.txt").write_text("1")
    assert sorted(p.name for p in out.iterdir()) == ["a.txt"]


def test_a_file_of_the_users_at_a_name_cohtb_writes_is_never_replaced(tmp_path):
    out = tmp_path / "out"
    with atomic_dir(out) as tmp:
        (tmp / "a.txt").write_text("1")
    (out / "report.md").write_text("the user's")   # not in the marker: not cohtb's, whatever its name
    with pytest.raises(CohtbError, match="report.md: cohtb's output needs this name"), atomic_dir(out) as tmp:
        (tmp / "a.txt").write_text("2")
        (tmp / "report.md").write_text("cohtb's")
    assert (out / "report.md").read_text() == "the user's" and (out / "a.txt").read_text() == "1"


def test_nothing_is_written_or_deleted_through_a_symbolic_link(tmp_path):
    """A directory of the output replaced by a link to somewhere else: cohtb neither writes through it nor deletes
    the files its marker lists behind it."""
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    with atomic_dir(out) as tmp:
        (tmp / "sub").mkdir()
        (tmp / "sub" / "a.txt").write_text("1")
        (tmp / "sub" / "b.txt").write_text("1")
    (out / "sub").rename(elsewhere)
    (out / "sub").symlink_to(elsewhere)
    assert owned(out) == set()   # the listed paths now lead out of out
    with pytest.raises(CohtbError, match="cohtb's output needs this name"), atomic_dir(out) as tmp:
        (tmp / "sub").mkdir()
        (tmp / "sub" / "a.txt").write_text("2")
    assert (elsewhere / "a.txt").read_text() == "1" and (elsewhere / "b.txt").read_text() == "1"
    with atomic_dir(out) as tmp:   # an output that does not need the name leaves the link and its files alone
        (tmp / "c.txt").write_text("3")
    assert (out / "sub").is_symlink() and sorted(p.name for p in elsewhere.iterdir()) == ["a.txt", "b.txt"]


def test_an_interrupted_install_leaves_every_moved_file_listed(tmp_path, monkeypatch):
    out = tmp_path / "out"
    with atomic_dir(out) as tmp:
        (tmp / "a.txt").write_text("1")
    moves = []
    real_replace = os.replace

    def dies_on_the_second_file(src, dst):
        if Path(src).name.endswith(".txt"):
            moves.append(dst)
            if len(moves) == 2:
                raise KeyboardInterrupt
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", dies_on_the_second_file)
    with pytest.raises(KeyboardInterrupt), atomic_dir(out) as tmp:
        for name in ("a.txt", "b.txt", "c.txt"):
            (tmp / name).write_text("2")
    monkeypatch.undo()
    assert (out / "a.txt").read_text() == "2" and owned(out) >= {"a.txt", "b.txt", "c.txt"}
    with atomic_dir(out) as tmp:   # and the next output takes over without complaint
        (tmp / "b.txt").write_text("3")
    assert owned(out) == {"b.txt"} and sorted(p.name for p in out.iterdir()) == [MARKER, "b.txt"]


def test_writers_of_one_file_do_not_share_a_temporary(tmp_path):
    """A fixed `NAME.tmp` made concurrent writers rename each other's temporaries away (FileNotFoundError)."""
    path, errors = tmp_path / "counters.json", []

    def writer(n: int) -> None:
        try:
            for _ in range(200):
                write_text_atomic(path, str(n) * 1000)
        except Exception as e:   # noqa: BLE001 (collected, asserted below)
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and path.read_text() in {str(n) * 1000 for n in range(4)}
    assert [p.name for p in tmp_path.iterdir()] == ["counters.json"]


def test_a_failed_write_leaves_no_temporary(tmp_path, monkeypatch):
    (tmp_path / "f.json.tmp").write_text("another writer's")   # the old fixed name is not cohtb's to take

    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(CohtbError, match=f"^{tmp_path / 'f.json'}: cannot write: No space left on device$"):
        write_text_atomic(tmp_path / "f.json", "{}")
    assert [p.name for p in tmp_path.iterdir()] == ["f.json.tmp"]


# --- report (runs and bare event files) ----------------------------------------------------------------------

def test_report_keeps_foreign_files(tmp_path, capsys, runs):
    out = tmp_path / "out"
    mine = plant(out)
    line = refused(capsys, "report", out, *runs, "--out", out, "--analysis", tmp_path / "a")
    assert "holds files cohtb did not write (notes.txt, sub/data.csv)" in line and "--force" in line
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "sub"]
    assert run_cli(capsys, "report", *runs, "--out", out, "--analysis", tmp_path / "a", "--force")[0] == 0
    assert intact(mine) and (out / "report.html").exists() and "notes.txt" not in owned(out)
    (out / "tables" / "stale.csv").write_text("x")   # as if an earlier report had written it
    (out / MARKER).write_text((out / MARKER).read_text() + "tables/stale.csv\n")
    refused(capsys, "report", out, *runs, "--out", out)   # still not without --force
    assert run_cli(capsys, "report", *runs, "--out", out, "--analysis", tmp_path / "a", "--force")[0] == 0
    assert intact(mine) and not (out / "tables" / "stale.csv").exists()


def test_report_replaces_its_own_only_with_force(tmp_path, capsys, runs):
    out = tmp_path / "out"
    assert run_cli(capsys, "report", *runs, "--out", out, "--analysis", tmp_path / "a")[0] == 0
    assert "a report is there already" in refused(capsys, "report", out, *runs, "--out", out)
    assert run_cli(capsys, "report", *runs, "--out", out, "--analysis", tmp_path / "a", "--force")[0] == 0


def test_report_of_event_files_keeps_foreign_files(tmp_path, capsys, runs):
    out = tmp_path / "out"
    mine = plant(out)
    events = runs[0] / "events.cohtb"
    refused(capsys, "report", out, events, "--out", out)
    assert run_cli(capsys, "report", events, "--out", out, "--force")[0] == 0
    assert intact(mine) and (out / "report.html").exists()


def test_report_into_a_writable_mount_point(tmp_path, capsys, runs):
    """A mount point can be neither renamed nor removed: the report's files move into it."""
    with tmpfs(tmp_path / "mnt", "size=16m") as out:
        mine = plant(out)
        assert run_cli(capsys, "report", *runs, "--out", out, "--analysis", tmp_path / "a", "--force")[0] == 0
        assert intact(mine) and (out / "report.html").exists()


def test_report_makes_missing_directories(tmp_path, capsys, runs):
    out = tmp_path / "a" / "b" / "report"
    assert run_cli(capsys, "report", *runs, "--out", out, "--analysis", tmp_path / "a")[0] == 0
    assert (out / "report.html").exists()


def test_report_unwritable(tmp_path, capsys, runs, unwritable):
    refused(capsys, "report", unwritable, *runs, "--out", unwritable, "--analysis", tmp_path / "a")
    refused(capsys, "report", unwritable, runs[0] / "events.cohtb", "--out", unwritable)


# --- replay, compare (no --out: its counters go to --analysis or the cache) ----------------------------------

def test_replay_keeps_foreign_files(tmp_path, capsys, runs):
    out = tmp_path / "out"
    mine = plant(out)
    assert run_cli(capsys, "replay", *runs, "--check", "--out", out, "--lines", "0")[0] == 0
    assert intact(mine) and all((out / r.name / "counters.json").exists() for r in runs)


def test_replay_unwritable(capsys, runs, unwritable):
    refused(capsys, "replay", unwritable, runs[0], "--check", "--out", unwritable, "--lines", "0")
    refused(capsys, "replay", unwritable, runs[0] / "events.cohtb", "--out", unwritable, "--lines", "0")


def test_compare_keeps_foreign_files_in_its_analysis_directory(tmp_path, capsys, runs):
    analysis = tmp_path / "a"
    mine = plant(analysis)
    assert run_cli(capsys, "compare", *runs, "--analysis", analysis)[0] == 0
    assert intact(mine)


def test_compare_unwritable_analysis(capsys, runs, unwritable):
    refused(capsys, "compare", unwritable, *runs, "--analysis", unwritable)


# --- run (the main job, here on two small runs standing in for the bundled ones) ------------------------------

@pytest.fixture
def small_main_job(tmp_path, monkeypatch, runs):
    monkeypatch.setattr(gem5, "find", lambda: None)
    monkeypatch.setattr(mainjob, "ROOT", tmp_path)
    monkeypatch.setattr(mainjob, "REFERENCE_RUNS", tmp_path / "runs")


def test_run_keeps_foreign_files(tmp_path, capsys, small_main_job):
    out = tmp_path / "out"
    mine = plant(out) | plant(out / "report")
    code, err = run_cli(capsys, "run", "--out", out)
    assert code == 0, err
    assert intact(mine) and (out / "report" / "report.html").exists()


def test_run_unwritable(capsys, small_main_job, unwritable):
    refused(capsys, "run", unwritable, "--out", unwritable)


# --- results (docs/ of the checkout: here a copy standing in for it) ----------------------------------------

@pytest.fixture
def docs_root(tmp_path, monkeypatch):
    root = tmp_path / "checkout"
    (root / "docs" / "results").mkdir(parents=True)
    for page in ("README.md", "docs/machine.md", "docs/workloads.md", "docs/counting-rules.md"):   # with a results block
        (root / page).write_text((toolchain.ROOT / page).read_text())
    monkeypatch.setattr(pages, "ROOT", root)
    monkeypatch.setattr(pages, "REFERENCE_RUNS", tmp_path / "no-runs")   # every seed's runs missing: a quick page
    (tmp_path / "no-runs").mkdir()
    return root


def test_results_keeps_foreign_files(capsys, docs_root):
    mine = plant(docs_root / "docs") | plant(docs_root / "docs" / "results")
    assert run_cli(capsys, "results")[0] == 0
    assert intact(mine) and (docs_root / "docs" / "results.md").exists()


def test_results_unwritable(tmp_path, capsys, docs_root):
    with tmpfs(docs_root / "docs", "ro,size=1m") as d:
        refused(capsys, "results", d)


# --- bundle --------------------------------------------------------------------------------------------------

def test_bundle_keeps_foreign_files(tmp_path, capsys, runs):
    into = tmp_path / "ref"
    mine = plant(into) | plant(into / runs[0].name)
    assert run_cli(capsys, "bundle", *runs, "--into", into)[0] == 0
    assert run_cli(capsys, "bundle", *runs, "--into", into)[0] == 0   # again: the bundled runs replaced
    assert intact(mine) and owned(into / runs[0].name) == {"events.cohtb.gz", "manifest.json"}


def test_bundle_unwritable(capsys, runs, unwritable):
    refused(capsys, "bundle", unwritable, runs[0], "--into", unwritable)


# --- synth --keep (the output directory only: synthesis is a stand-in that stops after its first file) -------

@pytest.fixture
def synthesis_stand_in(monkeypatch):
    called = []

    def synthesize(variant, netlist, log):
        called.append(netlist)
        netlist.write_text("{}")
        raise CohtbError("stand-in synthesis stops here")

    monkeypatch.setattr(ecp5, "synthesize", synthesize)
    return called


def test_synth_keep_keeps_foreign_files(tmp_path, capsys, synthesis_stand_in):
    keep = tmp_path / "keep"
    mine = plant(keep)
    assert "stand-in synthesis stops here" in refused(capsys, "synth", "", "--target", "ecp5", "--keep", keep)
    assert intact(mine) and (keep / "default.json").exists()


def test_synth_keep_unwritable(capsys, synthesis_stand_in, unwritable):
    refused(capsys, "synth", unwritable, "--target", "ecp5", "--keep", unwritable)
    assert synthesis_stand_in == [] or "full" in str(unwritable)   # refused before synthesis, but on a full disk


def test_synth_json_unwritable(capsys, synthesis_stand_in, unwritable):
    if "full" in str(unwritable):
        pytest.skip("the stand-in stops before a report is written (write_json_atomic on a full disk: see above)")
    out = unwritable / "reports.json"
    refused(capsys, "synth", out, "--target", "ecp5", "--json", out)
    assert synthesis_stand_in == []   # refused before synthesis


# --- native --out (the workloads stand in: each run is a constant) -----------------------------------------

@pytest.fixture
def quick_native(monkeypatch):
    monkeypatch.setattr(native, "run_native", lambda w, threads, n, policy, layout: {"ops": n, "ops_per_s": 1.0})


def test_native_keeps_foreign_files(tmp_path, capsys, quick_native):
    mine = plant(tmp_path / "out")
    assert run_cli(capsys, "native", "lockref", "--out", tmp_path / "out" / "native.json", "--repeat", "1")[0] == 0
    assert run_cli(capsys, "native", "lockref", "--out", tmp_path / "new" / "dir" / "native.json")[0] == 0
    assert intact(mine) and (tmp_path / "out" / "native.json").exists() and (tmp_path / "new" / "dir").exists()


def test_native_unwritable(capsys, quick_native, unwritable):
    refused(capsys, "native", unwritable, "lockref", "--out", unwritable / "native.json", "--repeat", "1")


# --- ingest OUT (the native tool writes it; it does not make missing directories) ---------------------------

@pytest.fixture
def trace(tmp_path) -> Path:
    t = tmp_path / "t.txt"
    t.write_text("".join(f"{10 * i:15d} {i % 2:3d} {'L1Cache':>10s}{'Store':>20s} {'E':>6s}>{'M':<6s} "
                         f"[0x40, line 0x40] \n" for i in range(1, 5)))
    return t


def test_ingest_keeps_foreign_files(tmp_path, capsys, trace):
    mine = plant(tmp_path / "out")
    assert run_cli(capsys, "ingest", trace, tmp_path / "out" / "t.cohtb", "--cores-per-socket", "1")[0] == 0
    assert intact(mine)


def test_ingest_unwritable(tmp_path, capsys, trace, unwritable):
    out = unwritable / "t.cohtb"
    refused(capsys, "ingest", out, trace, out, "--cores-per-socket", "1")


def test_ingest_missing_directory(tmp_path, capsys, trace):
    out = tmp_path / "missing" / "t.cohtb"
    refused(capsys, "ingest", out, trace, out, "--cores-per-socket", "1")


# --- launch --runs, seeds --runs (gem5 is tests/fake_gem5.py) -----------------------------------------------

# --allow-dirty: these tests are about outputs, not provenance, and pass in a checkout being changed too
LAUNCH = ("--workload", "lockref", "--policy", "locked", "--layout", "split", "--ops", "50", "--jobs", "1",
          "--allow-dirty")


def test_launch_keeps_foreign_files(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE_GEM5))
    runs_dir = tmp_path / "runs"
    leftover = runs_dir / RunSpec("lockref", "locked", "split", 2, 2, 50).id   # a run directory without a manifest
    mine = plant(runs_dir) | plant(leftover)
    assert run_cli_process("launch", *LAUNCH, "--runs", runs_dir)[0] == 0
    assert intact(mine) and (leftover / "manifest.json").exists() and "notes.txt" not in owned(leftover)


def test_launch_unwritable(capsys, monkeypatch, unwritable):
    monkeypatch.setenv("GEM5", str(FAKE_GEM5))
    refused(None, "launch", unwritable, *LAUNCH, "--runs", unwritable)


def test_seeds_launch_unwritable(capsys, monkeypatch, unwritable):
    if "full" in str(unwritable):
        pytest.skip("a full disk is found by the seed's runs, as by launch's (above): a whole seed of runs to wait for")
    # a seed with runs still to record on the flat machine (a launch with nothing to record writes nothing)
    seed = seed_with_runs_to_record("flat")
    if seed is None:
        pytest.skip("every flat-machine declaration has all its runs kept")
    monkeypatch.setenv("GEM5", str(FAKE_GEM5))
    refused(None, "seeds", unwritable, "--seed", seed, "--launch", "--runs", unwritable, "--jobs", "1",
            "--allow-dirty")
