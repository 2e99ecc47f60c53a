"""Where runs are recorded: in threads of this process (the default), or on a Dask cluster the user already runs
(`cohtb launch --dask ADDRESS`). Either takes a task (a module-level function, so that a worker can import it)
and the runs' arguments, and hands back each run's outcome as it comes.

A cluster's workers must see the runs' directory and the checkout at the same paths as the client (a shared
file system), and run the same gem5 build: every worker is asked before any run is sent, and one that fails the
check gets no run."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from urllib.parse import urlsplit

from cohtb.errors import CohtbError
from cohtb.tables import count

ADDRESS_VARIABLE = "COHTB_DASK"   # the cluster's address when --dask is not given
RETRIES = 2                        # a run whose worker died is tried again on another, this many times


class LocalPool:
    """Threads of this process, each running one gem5 at a time."""

    def __init__(self, jobs: int | None = None):
        self.slots = jobs or os.cpu_count() or 1

    def describe(self) -> str:
        return count(self.slots, "local slot")

    def admit(self, check: Callable[..., str | None], *args) -> None:
        """This process is the one worker: check it as a cluster's are."""
        why = check(*args)
        if why:
            raise CohtbError(why)

    def run_all(self, task: Callable, calls: list[tuple], on_start: Callable[[], None],
                on_lost: Callable[[tuple, str], object]) -> Iterator:
        """task(*call) for every call, its result as each ends; on_start() as each begins."""
        def one(args: tuple):
            on_start()
            return task(*args)

        pool = ThreadPoolExecutor(max_workers=self.slots)
        try:
            for fut in as_completed([pool.submit(one, args) for args in calls]):
                yield fut.result()
        finally:   # interrupted (or a run's error): the runs not started are dropped, the running ones end whole
            pool.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        pass


def check_address(address: str, insecure: bool) -> None:
    """A Dask scheduler runs whatever it is sent: a plain tcp:// address off this machine is refused unless the user
    says --insecure; tls:// (distributed's Security, with certificates) is the way across a network."""
    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    if parts.scheme == "tls":
        return
    if parts.scheme not in ("tcp", "inproc"):
        raise CohtbError(f"--dask {address}: a tcp:// or tls:// address (e.g. tcp://127.0.0.1:8786)")
    host = parts.hostname or ""
    try:
        loopback = all(ipaddress.ip_address(info[4][0]).is_loopback
                       for info in socket.getaddrinfo(host, None))
    except (OSError, ValueError):
        loopback = False
    if not loopback and not insecure:
        raise CohtbError(f"--dask {address}: a plain tcp:// address off this machine lets anyone who reaches it run "
                         "code on the cluster; use tls:// with certificates (COHTB_DASK_TLS_CA, _CERT, _KEY), or "
                         "give --insecure on a network you trust")


def security_from_environment():
    """distributed's Security from COHTB_DASK_TLS_CA, COHTB_DASK_TLS_CERT and COHTB_DASK_TLS_KEY, when set."""
    from distributed import Security   # noqa: PLC0415 (an optional dependency: only a cluster needs it)

    ca, cert, key = (os.environ.get(f"COHTB_DASK_TLS_{k}") for k in ("CA", "CERT", "KEY"))
    if not (ca or cert or key):
        return None
    if not (ca and cert and key):
        raise CohtbError("TLS to the cluster needs all of COHTB_DASK_TLS_CA, COHTB_DASK_TLS_CERT, COHTB_DASK_TLS_KEY")
    return Security(tls_ca_file=ca, tls_client_cert=cert, tls_client_key=key, require_encryption=True)


def _distributed():
    try:
        import distributed   # noqa: PLC0415 (optional: only a cluster needs it)
    except ImportError:
        raise CohtbError("--dask needs the 'distributed' package: pip install 'cohtb[cluster]' (make setup installs "
                         "it)") from None
    return distributed


class DaskCluster:
    """A Dask distributed cluster's workers, each running as many runs at once as it has threads."""

    def __init__(self, address: str, insecure: bool = False):
        check_address(address, insecure)
        distributed = _distributed()
        self.address = address
        try:
            self.client = distributed.Client(address, security=security_from_environment(), timeout="20s")
        except (OSError, TimeoutError) as e:
            raise CohtbError(f"--dask {address}: no scheduler answers there ({e})") from None
        self.workers = list(self.client.nthreads())
        self.slots = sum(self.client.nthreads().values())

    def admit(self, check: Callable[..., str | None], *args) -> None:
        """Only the workers whose check(*args) passes (returns None, not why it fails) get runs; the others are
        named, and no worker passing is an error."""
        answers = self.client.run(check, *args, on_error="return")
        refused = {w: (a if isinstance(a, str) else f"{type(a).__name__}: {a}") for w, a in answers.items() if a}
        for w, why in sorted(refused.items()):
            print(f"cohtb: worker {w} refused: {why}", flush=True)
        self.workers = sorted(set(answers) - set(refused))
        if not self.workers:
            raise CohtbError(f"--dask {self.address}: no worker can record the runs"
                             + (f" (first refused: {next(iter(sorted(refused.values())))})" if refused else
                                " (the cluster has no workers)"))
        self.slots = sum(self.client.nthreads()[w] for w in self.workers)

    def describe(self) -> str:
        return f"{len(self.workers)} Dask workers at {self.address}, {self.slots} slots"

    def run_all(self, task: Callable, calls: list[tuple], on_start: Callable[[], None],
                on_lost: Callable[[tuple, str], object]) -> Iterator:
        """task(*call) on the admitted workers, each result as it comes; a call whose workers kept dying under it
        gives on_lost(call, why)."""
        distributed = _distributed()
        futures = {}
        for args in calls:   # sent, not yet started: the progress line counts them as running
            futures[self.client.submit(task, *args, workers=self.workers, retries=RETRIES, pure=False)] = args
            on_start()
        for fut in distributed.as_completed(futures):
            try:
                yield fut.result()
            except distributed.KilledWorker as e:   # its workers died under it more often than allowed
                yield on_lost(futures[fut], f"the workers running it died {RETRIES + 1} times ({e})")

    def close(self) -> None:
        self.client.close()


def choose(address: str | None, jobs: int | None, insecure: bool = False) -> LocalPool | DaskCluster:
    """The cluster at `address` (else at $COHTB_DASK), or, without one, `jobs` local slots."""
    address = address or os.environ.get(ADDRESS_VARIABLE)
    return DaskCluster(address, insecure) if address else LocalPool(jobs)
