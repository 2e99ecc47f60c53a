"""cohtb launch --dask: runs recorded by a Dask cluster of real processes on this machine (a scheduler and two
workers on 127.0.0.1, started and stopped by the tests), gem5 stood in for by tests/fake_gem5.py."""

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from cohtb import launch
from cohtb.errors import CohtbError
from cohtb.run import gem5 as gem5_tool, scheduler
from cohtb.run.executors import DaskCluster, check_address
from cohtb.run.provenance import checkout
from cohtb.run.spec import RunSpec

FAKE = Path(__file__).with_name("fake_gem5.py")
DASK = Path(sys.executable).with_name("dask")
START_SECONDS = 180   # generous: a loaded 2-core machine starts Python processes slowly


class Cluster:
    """A scheduler on a free loopback port and workers, each a process group of its own."""

    def __init__(self, tmp: Path):
        self.tmp, self.procs, self.workers = tmp, [], []
        self.file = tmp / "scheduler.json"
        # Every port on loopback, the HTTP ones too (without --dashboard-address they listen on every interface).
        self.procs.append(self._start([str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0",
                                       "--dashboard-address", "127.0.0.1:0", "--scheduler-file", str(self.file)],
                                      "scheduler"))
        deadline = time.monotonic() + START_SECONDS
        while (address := self._address()) is None:   # the file appears before it is whole
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"no scheduler after {START_SECONDS} s: {(tmp / 'scheduler.log').read_text()}")
            time.sleep(0.2)
        self.address = address

    def _address(self) -> str | None:
        try:
            return json.loads(self.file.read_text())["address"]
        except (OSError, ValueError, KeyError):
            return None

    def _start(self, cmd: list[str], name: str, env: dict | None = None) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "w")
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)

    def add_worker(self, name: str, env: dict | None = None, hide: Path | None = None) -> subprocess.Popen:
        """hide: a directory this worker sees empty (its own mount namespace with a tmpfs over it), as a machine
        that does not mount the client's file system would."""
        cmd = [str(DASK), "worker", "--scheduler-file", str(self.file), "--nthreads", "1", "--no-nanny",
               "--name", name, "--host", "127.0.0.1", "--dashboard-address", "127.0.0.1:0"]
        if hide is not None:
            cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c",
                   'mount -t tmpfs tmpfs "$0" && exec "$@"', str(hide), *cmd]
        p = self._start(cmd, name, {**os.environ, **(env or {})})
        self.procs.append(p)
        self.workers.append(name)
        return p

    def wait_for_workers(self, n: int) -> None:
        from distributed import Client

        with Client(self.address, timeout="20s") as c:
            c.wait_for_workers(n, timeout=START_SECONDS)

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE))   # the workers inherit it
    c = Cluster(tmp_path)   # stops what it started if it fails
    try:
        yield c
    finally:
        c.stop()


def smoke() -> list[RunSpec]:
    return [RunSpec("lockref", p, "shared", 2, 2, 50) for p in ("locked", "cmpxchg", "retry100", "unified")]


def test_a_matrix_runs_on_two_loopback_workers_each_run_once(cluster, tmp_path):
    for name in ("w1", "w2"):
        cluster.add_worker(name)
    cluster.wait_for_workers(2)
    runs = tmp_path / "runs"
    runs.mkdir()
    executor = DaskCluster(cluster.address)
    try:
        outcomes = launch.launch(smoke(), runs, timeout=300, executor=executor)
        assert [o.status for o in outcomes] == ["done"] * 4, [o.error for o in outcomes]
        assert sorted(p.name for p in runs.iterdir()) == sorted(s.id for s in smoke())   # no leftovers, no copies
        again = launch.launch(smoke(), runs, timeout=300, executor=executor)   # a re-launch records nothing
        assert [o.status for o in again] == ["skipped"] * 4
    finally:
        executor.close()


def test_a_worker_without_the_clients_gem5_gets_no_run(cluster, tmp_path):
    other = tmp_path / "other_gem5.py"   # another build: the same stand-in, one byte more
    shutil.copy(FAKE, other)
    other.write_text(other.read_text() + "\n")
    other.chmod(0o755)
    cluster.add_worker("good")
    cluster.add_worker("other-build", {"GEM5": str(other)})
    cluster.add_worker("no-gem5", {"GEM5": str(tmp_path / "missing")})
    cluster.wait_for_workers(3)
    runs = tmp_path / "runs"
    runs.mkdir()
    executor = DaskCluster(cluster.address)
    try:
        outcomes = launch.launch(smoke()[:2], runs, timeout=300, executor=executor)
        assert [o.status for o in outcomes] == ["done"] * 2
        assert executor.workers == [next(a for a, w in executor.client.scheduler_info()["workers"].items()
                                         if w["name"] == "good")]
    finally:
        executor.close()


def can_hide_a_directory(tmp: Path) -> str | None:
    """Why a worker cannot be given a mount namespace of its own here, or None."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return "hiding a directory from one worker needs root and unshare (chmod does not stop root)"
    probe = subprocess.run(["unshare", "--mount", "--propagation", "private", "mount", "-t", "tmpfs", "tmpfs",
                            str(tmp)], capture_output=True, text=True)
    if probe.returncode != 0:
        return f"a mount namespace is not permitted here: {probe.stderr.strip()}"
    return None


@contextmanager
def two_workers_one_blind_to(cluster, directory: Path):
    """A cluster of a worker that sees `directory` ("sees-it") and one for which it is an empty directory of
    the same path, as on another host; skipped where a mount namespace is not permitted."""
    if (why := can_hide_a_directory(directory)) is not None:
        pytest.skip(why)
    cluster.add_worker("sees-it")
    cluster.add_worker("blind", hide=directory)
    cluster.wait_for_workers(2)
    executor = DaskCluster(cluster.address)
    try:
        yield executor
    finally:
        executor.close()


def test_a_worker_that_cannot_see_the_runs_directory_gets_no_run(cluster, tmp_path):
    shared = tmp_path / "shared"   # the client's results file system, which one worker does not mount
    (shared / "runs").mkdir(parents=True)
    with two_workers_one_blind_to(cluster, shared) as executor:
        outcomes = launch.launch(smoke(), shared / "runs", timeout=300, executor=executor)
        assert [o.status for o in outcomes] == ["done"] * 4, [o.error for o in outcomes]
        workers = executor.client.scheduler_info()["workers"]
        assert [workers[a]["name"] for a in executor.workers] == ["sees-it"]
        assert sorted(p.name for p in (shared / "runs").iterdir()) == sorted(s.id for s in smoke())


def test_a_worker_that_sees_another_kernel_cache_gets_no_full_system_run(cluster, tmp_path):
    # The path exists on both (a worker on another host may have a cache of its own there): what counts is that
    # the worker sees the client's directory, where the boots the runs restore are made.
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    with two_workers_one_blind_to(cluster, kernels) as executor:
        scheduler.admit(executor, tmp_path, {"flat": gem5_tool.require()}, {kernels: "the boots are"})
        workers = executor.client.scheduler_info()["workers"]
        assert [workers[a]["name"] for a in executor.workers] == ["sees-it"]
        assert not list(kernels.iterdir())   # the client's mark is gone again


def test_a_worker_running_another_cohtb_commit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE))
    ok = scheduler.check_worker(str(tmp_path), {"flat": gem5_tool.identity(FAKE)}, checkout().identity)
    other = scheduler.check_worker(str(tmp_path), {"flat": gem5_tool.identity(FAKE)}, "0" * 40)
    assert ok is None and other.startswith("runs cohtb at ") and "the client at 000000000000" in other
    # the same commit with other uncommitted changes is other code too
    changed = scheduler.check_worker(str(tmp_path), {"flat": gem5_tool.identity(FAKE)},
                                     checkout().commit + "+0123456789ab")
    assert changed is not None and "the client at" in changed and "with changes 0123456789ab" in changed


def test_a_worker_without_the_gem5_of_a_machine_the_runs_use_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE))
    monkeypatch.delenv("GEM5_CHI", raising=False)
    builds = {"flat": gem5_tool.identity(FAKE), "socket": gem5_tool.identity(FAKE)}
    why = scheduler.check_worker(str(tmp_path), builds, checkout().identity)
    assert why.startswith("gem5 for the socket machine not found: set GEM5_CHI")
    monkeypatch.setenv("GEM5_CHI", str(FAKE))
    assert scheduler.check_worker(str(tmp_path), builds, checkout().identity) is None


def test_no_worker_able_is_an_error_that_names_why(cluster, tmp_path):
    cluster.add_worker("no-gem5", {"GEM5": str(tmp_path / "missing")})
    cluster.wait_for_workers(1)
    executor = DaskCluster(cluster.address)
    try:
        with pytest.raises(CohtbError, match="no worker can record the runs .*is not an executable file"):
            launch.launch(smoke()[:1], tmp_path / "runs", timeout=60, executor=executor)
    finally:
        executor.close()


@pytest.mark.parametrize("address, insecure, refused", [
    ("tcp://127.0.0.1:8786", False, False),
    ("tcp://localhost:8786", False, False),
    ("tls://10.1.2.3:8786", False, False),
    ("tcp://10.1.2.3:8786", False, True),
    ("tcp://10.1.2.3:8786", True, False),
    ("http://127.0.0.1:8786", False, True),
])
def test_a_plain_address_off_this_machine_needs_insecure(address, insecure, refused):
    if refused:
        with pytest.raises(CohtbError, match="--dask"):
            check_address(address, insecure)
    else:
        check_address(address, insecure)


def test_a_run_whose_worker_dies_is_recorded_by_another(cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_GEM5_SLOW_SECONDS", "6")
    procs = {name: cluster.add_worker(name) for name in ("w1", "w2")}
    cluster.wait_for_workers(2)
    runs = tmp_path / "runs"
    runs.mkdir()
    executor = DaskCluster(cluster.address)
    result: list = []
    try:
        launcher = threading.Thread(target=lambda: result.extend(launch.launch(smoke()[:1], runs, timeout=300,
                                                                               executor=executor)))
        launcher.start()
        deadline = time.monotonic() + START_SECONDS
        while not (busy := [a for a, tasks in executor.client.processing().items() if tasks]):
            assert time.monotonic() < deadline, "the run never reached a worker"
            time.sleep(0.2)
        time.sleep(1)   # gem5 (the stand-in) is running
        name = executor.client.scheduler_info()["workers"][busy[0]]["name"]
        os.killpg(procs[name].pid, signal.SIGKILL)
        launcher.join(timeout=120)
        assert [o.status for o in result] == ["done"], [o.error for o in result]
        assert [p.name for p in runs.iterdir() if not p.name.startswith(".")] == [smoke()[0].id]
        manifest = json.loads((runs / smoke()[0].id / "manifest.json").read_text())
        assert manifest["id"] == smoke()[0].id
    finally:
        executor.close()
