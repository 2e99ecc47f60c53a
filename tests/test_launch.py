"""cohtb launch: parallel runs, atomic results, failures recorded, re-runs skip what is done.
The orchestration is tested with a stand-in for gem5 (tests/fake_gem5.py); test_gem5.py runs the real one."""

import errno
import hashlib
import io
import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cohtb.trace import events as ev
from cohtb import launch
from cohtb.errors import CohtbError
from cohtb.places import REFERENCE_RUNS
from cohtb.run import gem5 as gem5_tool
from cohtb.run import machines
from cohtb.run import claim as claim_module
from cohtb.run.claim import claim
from cohtb.run import cost
from cohtb.run.scheduler import Progress
from cohtb.run.manifest import MANIFEST_VERSION, Manifest, load as load_manifest
from cohtb.run.spec import RunSpec

FAKE = Path(__file__).with_name("fake_gem5.py")


@pytest.fixture
def fake_gem5(monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE))


def specs(*policies):
    return [RunSpec("lockref", p, "split", 2, 2, 50) for p in policies]


def test_runs_are_written_whole_and_reruns_skip(fake_gem5, tmp_path):
    outcomes = launch.launch(specs("locked", "cmpxchg", "retry100"), tmp_path, jobs=2)
    assert [o.status for o in outcomes] == ["done"] * 3
    for o in outcomes:
        run = tmp_path / o.spec.id
        m = json.loads((run / "manifest.json").read_text())
        assert m["spec"]["policy"] == o.spec.policy and m["roi"]["seconds"] > 0
        assert m["gem5"]["version"].startswith("24.0.0.1")
        assert m["workload"]["threads"] == 4 and m["workload"]["final_count"] == 1
        h, recs = ev.read_all(run / "events.cohtb")
        assert h.num_cores == 4 and h.num_sockets == 2 and len(recs) == m["ingest"]["events"] > 0
        lref = next(f for f in m["layout"] if f["name"] == "d_lockref")
        assert lref["how"] == "tlb" and lref["paddr"] == lref["vaddr"] + 0x100000
        assert (run / "trace.gz").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no temporary directories left"
    again = launch.launch(specs("locked", "cmpxchg", "retry100"), tmp_path, jobs=2)
    assert [o.status for o in again] == ["skipped"] * 3


def test_a_run_on_the_socket_machine_uses_the_chi_build(fake_gem5, tmp_path, monkeypatch):
    """Each machine has its own gem5 build (GEM5 the flat machine's, GEM5_CHI the socket machine's): a launch that
    needs one that is missing says which, before anything runs; a run records the machine it ran on."""
    spec = RunSpec("atomicity", "xchg", "line", 2, 2, 50, machine="socket", traced=False)
    monkeypatch.delenv("GEM5_CHI", raising=False)
    with pytest.raises(CohtbError, match="gem5 for the socket machine not found: set GEM5_CHI"):
        launch.launch([spec], tmp_path, jobs=1)
    assert not list(tmp_path.iterdir())
    monkeypatch.setenv("GEM5_CHI", str(FAKE))
    [o] = launch.launch([spec], tmp_path, jobs=1)
    assert o.status == "done", o.error
    m = load_manifest(tmp_path / spec.id / "manifest.json")
    assert spec.id.endswith("-socketmachine-untraced") and m.spec.machine == "socket"
    assert m.system.machine == "socket" and m.gem5.command[m.gem5.command.index("--machine") + 1] == "socket"
    assert m.workload.model_dump()["invariants"] == "ok"


def test_a_failed_run_is_recorded_and_the_rest_go_on(fake_gem5, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_GEM5_FAIL_POLICY", "cmpxchg")
    outcomes = launch.launch(specs("locked", "cmpxchg", "retry100"), tmp_path, jobs=2)
    assert [o.status for o in outcomes] == ["done", "failed", "done"]
    bad = specs("cmpxchg")[0]
    record = json.loads((tmp_path / f"{bad.id}.failed.json").read_text())
    assert "fatal: fake failure for the test" in record["error"]
    assert not (tmp_path / bad.id).exists()
    monkeypatch.delenv("FAKE_GEM5_FAIL_POLICY")
    retry = launch.launch(specs("locked", "cmpxchg", "retry100"), tmp_path, jobs=2)
    assert [o.status for o in retry] == ["skipped", "done", "skipped"]
    assert not (tmp_path / f"{bad.id}.failed.json").exists()


def test_a_hanging_run_times_out(fake_gem5, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_GEM5_HANG_POLICY", "locked")
    hung, done = specs("locked", "cmpxchg")
    [outcome] = launch.launch([hung], tmp_path, jobs=1, timeout=3)       # its own short timeout
    assert outcome.status == "failed" and "timeout" in outcome.error
    [outcome] = launch.launch([done], tmp_path, jobs=1, timeout=300)     # and a generous one for the run that finishes
    assert outcome.status == "done"


def test_without_gem5_launch_says_what_is_missing(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "GEM5": ""}
    proc = subprocess.run([sys.executable, "-m", "cohtb.cli", "launch", "--matrix", "smoke", "--runs",
                           str(tmp_path / "runs")], capture_output=True, text=True, env=env)
    assert proc.returncode == 2 and not (tmp_path / "runs").exists()   # refused before anything is written
    assert "runs into" not in proc.stdout
    assert "gem5 for the flat machine not found: set GEM5 to the path of a gem5.opt, or put gem5.opt on PATH" in proc.stderr


def test_a_timed_run_measures_its_window(fake_gem5, tmp_path):
    """A seed experiment's kind of run: warm-up, window, intervals and the start seed reach the workload, and the
    run's throughput is over the window."""
    spec = RunSpec("stat_path", "retry100", "split", 2, 2, warmup_us=2000, window_us=6000, interval_us=2000, seed=2)
    assert spec.id == "stat_path-retry100-split-2x2-warm2000-win6000-int2000-s2"
    assert spec.repetition_of == "stat_path-retry100-split-2x2-warm2000-win6000-int2000"
    [o] = launch.launch([spec], tmp_path, jobs=1)
    assert o.status == "done", o.error
    from cohtb.analysis.steady import fairness, series
    from cohtb.run.runs import load

    run = load(tmp_path / spec.id)
    w = run.manifest.workload
    assert run.timed and w.measure.window_ns == 6_000_000 and w.measure.seed == 2 and w.measure.intervals == 3
    assert run.measured_seconds == pytest.approx(0.006) and run.throughput == pytest.approx(w.ops / 0.006)
    assert sum(series(run).total) == w.ops == sum(w.per_thread_ops)
    f = fairness(run)
    assert f.thread_min == min(w.per_thread_ops) and f.thread_max == max(w.per_thread_ops)


def test_a_declared_run_keeps_its_declarations_record(fake_gem5, tmp_path):
    """A run declared under a seed's declaration needs the declaration's record, taken before the launch (the
    experiments layer takes it: cohtb seeds --launch); the manifest keeps it as given."""
    spec = RunSpec("lockref", "locked", "split", 2, 2, 50, declaration="003v2")
    with pytest.raises(CohtbError, match="need the declaration's record"):
        launch.launch([spec], tmp_path, jobs=1)
    rec = {"id": "003v2", "digest": "0123456789abcdef", "commit": "f" * 40}
    [o] = launch.launch([spec], tmp_path, jobs=1, declared={"003v2": rec})
    assert o.status == "done"
    assert json.loads((tmp_path / spec.id / "manifest.json").read_text())["declaration"] == rec


def without_prose(schema):
    """A JSON schema without its titles and descriptions (docstrings, strings), its fields and their types kept
    (a field named "description" is a schema, not a string)."""
    if isinstance(schema, dict):
        return {k: without_prose(v) for k, v in schema.items()
                if not (k in ("title", "description") and isinstance(v, str))}
    if isinstance(schema, list):
        return [without_prose(v) for v in schema]
    return schema


def test_the_manifest_schema_is_pinned_with_its_version():
    """What a manifest holds is pinned: a field added as optional re-pins the digest alone; a field whose meaning
    changes is a new MANIFEST_VERSION (and load() must still read the older ones)."""
    schema = json.dumps(without_prose(Manifest.model_json_schema()), sort_keys=True).encode()
    assert (MANIFEST_VERSION, hashlib.sha256(schema).hexdigest()[:16]) == (1, "225a4dd428eaa922")   # + system.topology, system.machine, spec.traced, spec.machine; files.events may be null (issue 34); gem5.cpu_seconds, checkpoint.cpu_seconds; workload.listings; kernel_symbols also name reported objects' fields (issue 36); recorded: host, UTC start and end (issue 51); workload.all_ops, elapsed_s, flags, layout_map typed (issue 52)


def test_a_manifest_of_another_version_is_refused(tmp_path):
    [run] = [p for p in sorted(REFERENCE_RUNS.iterdir()) if (p / "manifest.json").exists()][:1]
    doc = json.loads((run / "manifest.json").read_text())
    (tmp_path / "manifest.json").write_text(json.dumps({**doc, "cohtb_run": MANIFEST_VERSION + 1}))
    with pytest.raises(CohtbError, match="field 'cohtb_run': manifest version 2"):
        load_manifest(tmp_path / "manifest.json")


def test_a_run_is_claimed_by_one_launch_at_a_time(tmp_path):
    with claim(tmp_path, "r", "launch-a", 60) as holder:
        assert holder is None and (tmp_path / ".r.claim").exists()
        with claim(tmp_path, "r", "launch-b", 60) as other:   # another launch, its holder alive: not taken
            assert other and "launch-a" in other
        with claim(tmp_path, "r", "launch-a", 60) as again:    # the same launch (a retry of its own): taken over
            assert again is None
    assert not (tmp_path / ".r.claim").exists()


def test_a_claim_of_a_process_that_is_gone_is_taken_over(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = {"launch": "gone", "host": socket.gethostname(), "pid": int(dead.stdout), "since": 0}
    (tmp_path / ".r.claim").write_text(json.dumps(stale))
    with claim(tmp_path, "r", "launch-b", 60) as holder:
        assert holder is None
    old = {**stale, "host": "elsewhere", "pid": 1}
    (tmp_path / ".r.claim").write_text(json.dumps(old))
    os.utime(tmp_path / ".r.claim", (0, 0))   # older than any run's timeout
    with claim(tmp_path, "r", "launch-b", 60) as holder:
        assert holder is None
    assert not list(tmp_path.iterdir())   # nothing left: no claim, private name or break lock


def _claim_in_turn(runs: str, name: str, rounds: int) -> None:
    """A launch in a process of its own: claims run r again and again; while it holds it, it alone may hold the
    marker (a second holder would find it taken and leave a file saying so)."""
    marker = Path(runs).parent / "holding"
    for _ in range(rounds):
        with claim(Path(runs), "r", name, 60) as holder:
            if holder is None:
                try:
                    os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    (Path(runs).parent / f"both-{name}").touch()
                    continue
                (Path(runs).parent / f"held-{name}").touch()
                time.sleep(0.001)
                marker.unlink()
        time.sleep(0.0005)   # let the others at it


def test_launches_claiming_at_the_same_moment_never_both_hold_a_run(tmp_path):
    # A claim seen half written was once taken for a dead holder's and removed: two launches both recorded the run.
    runs = tmp_path / "runs"
    runs.mkdir()
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_claim_in_turn, args=(str(runs), f"launch-{i}", 150)) for i in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * 6
    assert not list(tmp_path.glob("both-*"))                  # never two holders at once
    assert len(list(tmp_path.glob("held-*"))) > 1              # and the run did change hands
    assert not list(runs.iterdir())                            # no claim, private name or break lock left


def test_a_stale_claim_is_removed_only_if_it_is_still_the_one_judged(tmp_path):
    path = tmp_path / ".r.claim"
    path.write_text(json.dumps({"launch": "gone", "host": "elsewhere", "pid": 1, "since": 0}))
    judged = claim_module._read(path)
    # meanwhile another launch that judged it stale too removed it and made its own claim
    path.unlink()
    path.write_text(json.dumps({"launch": "fresh", "host": "elsewhere", "pid": 1, "since": 1}))
    claim_module._remove_stale(path, judged[0], judged[1], "launch-b")
    assert json.loads(path.read_text())["launch"] == "fresh"   # the fresh claim stays, whatever its inode
    with claim(tmp_path, "r", "launch-b", 60) as holder:
        assert holder and "launch fresh" in holder
    assert [p.name for p in tmp_path.iterdir()] == [".r.claim"]   # no break lock or private name left


def test_a_holder_removes_its_own_claim_only(tmp_path):
    with claim(tmp_path, "r", "launch-a", 60) as holder:
        assert holder is None
        (tmp_path / ".r.claim").unlink()   # judged stale by another launch, which claimed the run in turn
        (tmp_path / ".r.claim").write_text(json.dumps({"launch": "launch-b", "host": "elsewhere", "pid": 1}))
    assert json.loads((tmp_path / ".r.claim").read_text())["launch"] == "launch-b"


def test_a_break_lock_left_by_a_launch_that_died_is_taken_over(tmp_path):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    (tmp_path / ".r.claim").write_text(json.dumps({"launch": "gone", "host": socket.gethostname(),
                                                   "pid": int(dead.stdout)}))
    (tmp_path / ".r.claim.break").write_text("{}")
    os.utime(tmp_path / ".r.claim.break", (0, 0))
    with claim(tmp_path, "r", "launch-b", 60) as holder:
        assert holder is None
    assert not list(tmp_path.iterdir())


def test_a_runs_directory_without_hard_links_is_named_in_one_line(tmp_path, monkeypatch):
    def no_links(*_):
        raise OSError(errno.EPERM, "Operation not permitted")
    monkeypatch.setattr(claim_module.os, "link", no_links)
    with pytest.raises(CohtbError, match=f"^{tmp_path}: cannot claim a run there: its file system has no hard links"):
        with claim(tmp_path, "r", "launch-a", 60):
            pass


def test_two_launches_of_the_same_runs_record_each_once(fake_gem5, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_GEM5_SLOW_SECONDS", "2")
    results: list = []
    both = [threading.Thread(target=lambda: results.extend(launch.launch(specs("locked", "cmpxchg"), tmp_path, jobs=2)))
            for _ in range(2)]
    for t in both:
        t.start()
    for t in both:
        t.join()
    done = [o.spec.id for o in results if o.status == "done"]
    assert sorted(done) == sorted(s.id for s in specs("locked", "cmpxchg"))   # each recorded by one launch only
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(done)


def test_a_killed_launchs_half_written_run_is_removed_when_the_run_is_recorded(fake_gem5, tmp_path):
    """Only what a process of this host that is gone left; not a live one's, another host's, or another run's
    (seed 10's name starts with seed 1's)."""
    spec, other = (RunSpec("lockref", "locked", "split", 2, 2, 50, seed=k) for k in (1, 10))
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = socket.gethostname()

    def left(run: RunSpec, tag: str) -> Path:
        d = tmp_path / f".{run.id}.{tag}.x1y2z3"
        (d / "gem5").mkdir(parents=True)
        (d / "gem5" / "trace.gz").write_bytes(b"half")
        return d

    killed = left(spec, f"{host}.{gone.stdout.strip()}")
    kept = [left(spec, f"{host}.{os.getpid()}"), left(spec, f"elsewhere.example.{gone.stdout.strip()}"),
            left(spec, "untagged"), left(other, f"{host}.{gone.stdout.strip()}")]
    [o] = launch.launch([spec], tmp_path, jobs=1)
    assert o.status == "done" and not killed.exists() and all(d.exists() for d in kept)


def test_a_run_keeps_the_gem5_build_its_protocol_and_the_cohtb_commit_that_recorded_it(fake_gem5, tmp_path):
    [o] = launch.launch(specs("locked"), tmp_path, jobs=1)
    m = json.loads((tmp_path / o.spec.id / "manifest.json").read_text())
    assert m["gem5"]["build"] == gem5_tool.identity(FAKE) and len(m["cohtb"]["commit"]) == 40
    assert m["gem5"]["protocol"] == "MESI_Two_Level"   # what the config read from gem5's build
    assert 0 < m["gem5"]["cpu_seconds"] <= m["gem5"]["host_seconds"]   # the stand-in's own CPU time


def test_gem5s_cpu_time_is_its_own_not_the_wall_time(tmp_path):
    """reap() gives the exited child's user + system seconds and its exit status: a child that sleeps costs ~0
    CPU seconds however long it takes, one that computes costs about what it computed."""
    def reaped(code: str) -> tuple[float, int, float]:
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", code])
        while (cpu := gem5_tool.reap(proc)) is None:
            time.sleep(0.05)
        return cpu, proc.returncode, time.monotonic() - t0

    cpu, rc, wall = reaped("import time, sys; time.sleep(0.6); sys.exit(3)")
    assert rc == 3 and wall >= 0.6 and cpu < 0.4
    cpu, rc, _ = reaped("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.5: pass")
    assert rc == 0 and cpu >= 0.5


def test_a_run_keeps_the_socket_wiring_it_ran_on(fake_gem5, tmp_path):
    plain = RunSpec("lockref", "locked", "shared", 8, 1, 50)
    wired = RunSpec("lockref", "locked", "shared", 8, 1, 50, topology="glueless-8s")
    assert "--topology" not in plain.machine_args() and wired.id == plain.id + "-topoglueless8s"
    launch.launch([plain, wired], tmp_path, jobs=1)
    hops = {s.topology: load_manifest(tmp_path / s.id / "manifest.json").system.topology for s in (plain, wired)}
    assert hops[""].name == "complete-8s" and {h for row in hops[""].hops for h in row} == {0, 1}
    assert load_manifest(tmp_path / plain.id / "manifest.json").system.machine == "flat"
    assert hops["glueless-8s"].name == "glueless-8s" and sorted(hops["glueless-8s"].hops[0]) == [0, 1, 1, 1, 2, 2, 2, 2]


def test_progress_estimates_what_is_left_from_the_runs_host_times():
    p = Progress(total=5, slots=2, stream=io.StringIO())
    assert p.eta() == ""   # nothing done yet: no estimate
    for seconds in (10.0, 30.0):
        p.start()
        p.finish(launch.Outcome(RunSpec("lockref", "locked", "split", 2, 2, 50), "done", seconds))
    assert p.eta() == ", about 30 s left"   # mean 20 s x 3 runs left / 2 slots
    for _ in range(3):   # a cluster is sent every run at once: its two slots run two, the third waits
        p.start()
    assert "2 running, 1 waiting, 2 done" in p._status()
    assert p.stream.getvalue().splitlines()[-1].startswith("[2/5] 0 running")   # a log: a whole line per run done
    assert "\r" not in p.stream.getvalue()
    q = Progress(total=3, stream=io.StringIO())
    for _ in range(3):   # a launch again: every run already there gets no line of its own, the end one line
        q.finish(launch.Outcome(RunSpec("lockref", "locked", "split", 2, 2, 50), "skipped"), started=False)
    q.close()
    assert q.stream.getvalue().splitlines() == ["[3/3] 0 running, 0 done, 3 already there, 0 failed, 0 s"]


def test_progress_weighs_what_is_left_by_the_runs_sizes():
    big, small = (RunSpec("lockref", "locked", "split", n, 4, 0, warmup_us=500, window_us=1000) for n in (8, 1))
    assert cost.simulated_work(big) == 32 * 1500 and cost.simulated_work(small) == 4 * 1500
    p = Progress(total=3, slots=1, stream=io.StringIO(),
                 work={big.id: cost.simulated_work(big), "other-big": cost.simulated_work(big),
                       small.id: cost.simulated_work(small)})
    p.start()
    p.finish(launch.Outcome(big, "done", 800.0))
    assert p.eta() == ", about 900 s left"   # another 8-socket run (800 s) and one of an eighth its size (100 s)


def test_progress_fits_a_fixed_cost_per_run_once_two_sizes_are_done():
    """Host seconds = 100 per run + 0.01 per unit of work: the estimate finds both from a small and a big run; a
    failed run and one already there leave what is left and are not fitted."""
    def spec(sockets: int, seed: int = 1) -> RunSpec:
        return RunSpec("lockref", "locked", "split", sockets, 4, 0, warmup_us=500, window_us=1000, seed=seed)
    small, mid, big, failed, there = spec(1), spec(4), spec(8), spec(8, 2), spec(4, 2)
    work = {s.id: cost.simulated_work(s) for s in (small, mid, big, failed, there)}
    p = Progress(total=5, slots=1, stream=io.StringIO(), work=work)
    p.start()
    p.finish(launch.Outcome(small, "done", 100 + 0.01 * work[small.id]))
    left = work[mid.id] + work[big.id] + work[failed.id] + work[there.id]
    assert p.eta() == f", about {160 / 6000 * left:.0f} s left"   # one size so far: proportional to it
    p.start()
    p.finish(launch.Outcome(failed, "failed", 5.0, error="gem5 exited 1"))
    p.finish(launch.Outcome(there, "skipped"), started=False)
    p.start()
    p.finish(launch.Outcome(big, "done", 100 + 0.01 * work[big.id]))
    assert p.eta() == f", about {100 + 0.01 * work[mid.id]:.0f} s left"
    # where the line through the runs would have a negative part, proportional to the size again
    assert cost.cost_per_run([(1.0, 50.0), (2.0, 10.0)]) == (0.0, 20.0)
    assert cost.cost_per_run([(1.0, 10.0), (2.0, 50.0)]) == (0.0, 20.0)
    with pytest.raises(ValueError, match="2 runs have a size, of 3"):
        Progress(total=3, stream=io.StringIO(), work={small.id: 1.0, mid.id: 2.0})


def test_progress_is_given_while_runs_go_on_and_not_after():
    p = Progress(total=2, stream=io.StringIO(), heartbeat=0.02)
    p.start()
    deadline = time.monotonic() + 10
    while len(p.stream.getvalue().splitlines()) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert all(line.startswith("[0/2] 1 running, 0 done") for line in p.stream.getvalue().splitlines()[:3])
    p.close()   # a run still counted as running: only close stops the heartbeat
    lines = len(p.stream.getvalue().splitlines())
    time.sleep(0.1)
    assert len(p.stream.getvalue().splitlines()) == lines and not p._beat.is_alive()


def test_an_interrupted_launch_is_resumed_by_launching_again(fake_gem5, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_GEM5_SLOW_SECONDS", "3")
    cmd = [sys.executable, "-m", "cohtb.cli", "launch", "--workload", "lockref", "--policy", "locked,cmpxchg,retry100",
           "--ops", "50", "--jobs", "1", "--runs", str(tmp_path), "--allow-dirty"]
    # SIGINT as a terminal gives it, even when the tests themselves run in the background (which ignores SIGINT)
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not any((d / "manifest.json").exists() for d in tmp_path.iterdir()):
        assert time.monotonic() < deadline and first.poll() is None, first.communicate()
        time.sleep(0.2)
    first.send_signal(signal.SIGINT)
    assert first.wait(timeout=60) == 130   # the running run ends whole; the others are not started
    recorded = {d.name for d in tmp_path.iterdir() if (d / "manifest.json").exists()}
    assert 1 <= len(recorded) < 3 and not list(tmp_path.glob(".*"))   # no temporary run, no claim left
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"{len(recorded)} already there" in again.stderr and "3 done" not in again.stderr
    assert len([d for d in tmp_path.iterdir() if (d / "manifest.json").exists()]) == 3


def test_a_chi_build_must_have_the_patches_its_machine_needs(tmp_path, monkeypatch):
    """westmere-ex-8s-c3 runs on gem5 with the project's CHI patch, c4 with that and the STI-shadow patch; c2 and
    the bare socket machine ran on stock CHI. The build says which a binary is (SLICC's generated code, or the
    binary itself, holding each patch's marker); a mismatch is refused naming both."""
    build = tmp_path / "build" / "X86_CHI"
    binary = build / "gem5.opt"
    build.mkdir(parents=True)
    binary.write_text("#!/bin/sh\n")
    binary.chmod(0o755)
    monkeypatch.setenv("GEM5_CHI", str(binary))

    def built_with(*patches):
        for name, (marked_file, marker) in gem5_tool.PATCH_MARKERS.items():
            (build / marked_file).parent.mkdir(parents=True, exist_ok=True)
            (build / marked_file).write_bytes(b"\0stock\0" + (marker.encode() + b"\0" if name in patches else b""))

    built_with("chi-locked-rmw")
    assert gem5_tool.require("westmere-ex-8s-c3") == binary
    with pytest.raises(CohtbError, match=r"built with patches \[chi-locked-rmw\], machine westmere-ex-8s-c2 needs \[\]"):
        gem5_tool.require("westmere-ex-8s-c2")
    with pytest.raises(CohtbError, match=r"built with patches \[chi-locked-rmw\], machine westmere-ex-8s-c4 needs "
                                         r"\[chi-locked-rmw, x86-sti-shadow\]"):
        gem5_tool.require("westmere-ex-8s-c4")
    built_with("chi-locked-rmw", "x86-sti-shadow")
    assert gem5_tool.require("westmere-ex-8s-c4") == binary
    with pytest.raises(CohtbError, match=r"machine westmere-ex-8s-c3 needs \[chi-locked-rmw\]"):
        gem5_tool.require("westmere-ex-8s-c3")
    built_with()
    assert gem5_tool.require("westmere-ex-8s-c2") == binary
    with pytest.raises(CohtbError, match=r"built with patches \[\], machine westmere-ex-8s-c3 needs \[chi-locked-rmw\]"):
        gem5_tool.require("westmere-ex-8s-c3")
    for marked_file, _ in gem5_tool.PATCH_MARKERS.values():
        if marked_file != "gem5.opt":
            (build / marked_file).unlink()
    with pytest.raises(CohtbError, match="no build tree beside it"):
        gem5_tool.require("westmere-ex-8s-c3")
    assert gem5_tool.require("socket") == binary   # a stock machine: a binary alone is taken as what it says


def test_every_gem5_patch_has_a_marker_and_every_machine_names_patches_that_exist():
    """A patch file without a marker could not be told from a build; a machine naming a missing patch could never
    be built; and a patch's marker must be text the patch adds."""
    files = {p.stem for p in gem5_tool.PATCHES.glob("*.patch")}
    assert files == set(gem5_tool.PATCH_MARKERS) | set(gem5_tool.INSTRUMENTS)
    assert not set(gem5_tool.PATCH_MARKERS) & set(gem5_tool.INSTRUMENTS)
    markers = {**gem5_tool.PATCH_MARKERS, **{name: ("gem5.opt", m) for name, m in gem5_tool.INSTRUMENTS.items()}}
    for name, (marked_file, marker) in markers.items():
        if not marked_file.endswith(".cc"):   # compiled from the patched source (a SLICC marker is generated code)
            added = [line for line in (gem5_tool.PATCHES / f"{name}.patch").read_text().splitlines()
                     if line.startswith("+")]
            assert any(marker in line for line in added), name
    build_steps = (Path(__file__).parents[1] / "docs" / "gem5.md").read_text()
    for machine in machines.known():
        patches = machines.gem5_patches(machine)
        assert set(patches) <= files, machine
        if patches:   # the build steps name them (every patch is for CHI: a socket or mesh machine's build)
            assert machines.hierarchy_of(machine) in ("socket", "mesh")
            assert f"| `{machine}` | `{' '.join(patches)}` |" in build_steps, machine


def test_every_socket_machine_file_says_whether_its_gem5_is_patched():
    """A socket machine's file names its build's patches, or says why it has none: a file that says nothing would
    silently be taken for a stock machine."""
    for machine in machines.known():
        if machines.hierarchy_of(machine) == "socket" and machine in machines.machine_file.names():
            assert machines.machine_file.load(machine).gem5_patches_why.strip(), machine


def test_a_one_off_run_takes_its_machines_core_and_refuses_a_timing_core_on_an_out_of_order_machine(tmp_path):
    """An SE run on westmere-ex-8s-c4-o3 launched with the default --cpu timing reached gem5, whose config refused
    it with a message gem5 then hid (a SystemExit carrying a string): the core is now the machine's by default,
    and the mismatch is refused before gem5 runs."""
    args = ["launch", "--workload", "stat_path", "--machine", "westmere-ex-8s-c4-o3", "--sockets", "1",
            "--cores-per-socket", "4", "--warmup-us", "20", "--window-us", "100", "--interval-us", "10",
            "--runs", str(tmp_path / "runs"), "--dry-run"]
    env = {"PATH": "/usr/bin:/bin", "GEM5": "", "GEM5_CHI": ""}
    ok = subprocess.run([sys.executable, "-m", "cohtb.cli", *args], capture_output=True, text=True, env=env)
    assert "-o3-" in ok.stdout and "westmere-ex-8s-c4-o3machine" in ok.stdout, ok.stdout + ok.stderr
    bad = subprocess.run([sys.executable, "-m", "cohtb.cli", *args, "--cpu", "timing"], capture_output=True,
                         text=True, env=env)
    err = bad.stderr.strip().splitlines()
    assert bad.returncode == 2 and len(err) == 1 and "machine westmere-ex-8s-c4-o3 has o3 cores" in err[0]
