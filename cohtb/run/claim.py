"""A run recorded by one launch at a time, whichever client or worker it runs on: before recording, a launch
creates runs_dir/.<id>.claim exclusively (O_EXCL, which shared file systems honour) and removes it when done.

A claim left by a process that died is taken over: one of the same launch (its earlier attempt, on a worker
that died), one of a process of this host that is gone, or one older than the run's timeout allows.

Two launches started at once must not both win: a claim appears whole (written under a private name, then
hard-linked to its place, which fails if the place is taken), so a reader never sees one half written; and a
stale claim is moved aside before it is removed, so a launch that judged it stale cannot remove the fresh claim
another launch made meanwhile."""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
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


def _holder(path: Path, launch: str, timeout: float) -> tuple[str | None, str | None]:
    """Who holds the claim (None when it is this launch's or its holder is gone), and the claim's text as read."""
    try:
        text = path.read_text()
        age = time.time() - path.stat().st_mtime
    except OSError:
        return None, None   # removed meanwhile
    try:
        holder = json.loads(text)
    except ValueError:   # never written so (claims appear whole): damaged; stale once older than any run
        return (None if age > timeout + MARGIN_SECONDS else f"an unreadable claim {path.name}"), text
    if holder.get("launch") == launch or age > timeout + MARGIN_SECONDS:
        return None, text
    if holder.get("host") == socket.gethostname() and not _alive(int(holder.get("pid", 0))):
        return None, text
    return f"{holder.get('host')}:{holder.get('pid')} (launch {holder.get('launch')})", text


def _create_whole(path: Path, text: str) -> bool:
    """Puts a claim holding `text` at `path` in one step; False if the place is taken."""
    private = path.with_name(f"{path.name}.{uuid.uuid4().hex}")
    try:
        private.write_text(text)
        try:
            os.link(private, path)   # atomic and exclusive, on local and shared file systems alike
        except FileExistsError:
            return False
        return True
    except OSError as e:   # a full disk, a read-only runs directory: the runs' place, said in one line
        raise unwritable(path, e) from None
    finally:
        private.unlink(missing_ok=True)


def _remove_stale(path: Path, judged: str | None) -> None:
    """Removes the claim judged stale, and only that one: moved aside first, then compared with what was judged."""
    aside = path.with_name(f"{path.name}.{uuid.uuid4().hex}.stale")
    try:
        os.rename(path, aside)
    except FileNotFoundError:
        return   # another launch removed it first
    try:
        if judged is None or aside.read_text() != judged:   # a fresh claim made meanwhile: put it back
            try:
                os.link(aside, path)
            except FileExistsError:
                pass
    finally:
        aside.unlink(missing_ok=True)


@contextmanager
def claim(runs_dir: Path, run_id: str, launch: str, timeout: float) -> Iterator[str | None]:
    """Yields None with the run claimed for this launch (released after), or who is recording it."""
    path = runs_dir / f".{run_id}.claim"
    mine = json.dumps({"launch": launch, "host": socket.gethostname(), "pid": os.getpid(), "since": time.time()})
    for _ in range(2):   # the second try after a stale claim was removed
        if not _create_whole(path, mine):
            holder, judged = _holder(path, launch, timeout)
            if holder:
                yield holder
                return
            _remove_stale(path, judged)
            continue
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
