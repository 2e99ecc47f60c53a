"""A run recorded by one launch at a time, whichever client or worker it runs on: before recording, a launch
creates runs_dir/.<id>.claim exclusively (O_EXCL, which shared file systems honour) and removes it when done.

A claim left by a process that died is taken over: one of the same launch (its earlier attempt, on a worker
that died), one of a process of this host that is gone, or one older than the run's timeout allows."""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cohtb.atomic import unwritable

MARGIN_SECONDS = 60   # beyond its timeout: a holder still alive would have been stopped by then


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _held_by_another(path: Path, launch: str, timeout: float) -> str | None:
    """Who holds the claim, or None when it is this launch's or its holder is gone."""
    try:
        holder = json.loads(path.read_text())
        age = time.time() - path.stat().st_mtime
    except (OSError, ValueError):
        return None   # removed meanwhile, or half written by a holder that died
    if holder.get("launch") == launch or age > timeout + MARGIN_SECONDS:
        return None
    if holder.get("host") == socket.gethostname() and not _alive(int(holder.get("pid", 0))):
        return None
    return f"{holder.get('host')}:{holder.get('pid')} (launch {holder.get('launch')})"


@contextmanager
def claim(runs_dir: Path, run_id: str, launch: str, timeout: float) -> Iterator[str | None]:
    """Yields None with the run claimed for this launch (released after), or who is recording it."""
    path = runs_dir / f".{run_id}.claim"
    mine = json.dumps({"launch": launch, "host": socket.gethostname(), "pid": os.getpid(), "since": time.time()})
    for _ in range(2):   # the second try after a stale claim was removed
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            holder = _held_by_another(path, launch, timeout)
            if holder:
                yield holder
                return
            path.unlink(missing_ok=True)
            continue
        except OSError as e:   # a full disk, a read-only runs directory: the runs' place, said in one line
            raise unwritable(path, e) from None
        try:
            with os.fdopen(fd, "w") as f:
                f.write(mine)
        except OSError as e:
            path.unlink(missing_ok=True)
            raise unwritable(path, e) from None
        try:
            yield None
        finally:
            path.unlink(missing_ok=True)
        return
    yield "another launch, which took the claim over at the same moment"


@contextmanager
def exclusive(directory: Path, name: str, launch: str, timeout: float, poll: float = 2.0) -> Iterator[None]:
    """Holds the claim on `name` in `directory`, waiting while another launch holds it (it is building the same
    thing: once it is done, the caller finds the thing built and builds nothing)."""
    directory.mkdir(parents=True, exist_ok=True)
    while True:
        with claim(directory, name, launch, timeout) as holder:
            if holder is None:
                yield
                return
        time.sleep(poll)
