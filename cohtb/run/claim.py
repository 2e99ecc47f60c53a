"""A run recorded by one launch at a time, whichever client or worker it runs on: before recording, a launch puts
a claim at runs_dir/.<id>.claim and removes it when done.

A claim left by a process that died is taken over: one of the same launch (its earlier attempt, on a worker
that died), one of a process of this host that is gone, or one older than the run's timeout allows.

Launches started at once must not both win, on a local or a shared (NFS) file system:
- a claim appears whole: written under a private name, then hard-linked to its place (link is atomic and fails
  if the place is taken), so a reader never sees one half written;
- a stale claim is removed by one launch at a time (it holds .<id>.claim.break, made the same way), which looks
  again under that lock and removes the claim only if it is still the very one it judged stale (its inode and
  its text, unique to each claim); a claim that vanished meanwhile is not removed, the place is simply tried
  again;
- a holder removes its claim only if the claim in place is still its own.
What is left: a holder judged stale while alive (older than its timeout allows) that ends in the instant between
another launch's last look and its removal; both are rare by construction and would cost a run recorded twice,
never a wrong one (a run is renamed into place whole)."""

from __future__ import annotations

import errno
import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from cohtb.atomic import unwritable
from cohtb.errors import CohtbError

MARGIN_SECONDS = 60   # beyond its timeout: a holder still alive would have been stopped by then
BREAK_SECONDS = 30    # a break lock is held for milliseconds; one this old was left by a launch that died
TRIES = 200           # places tried before giving up: each failed try means another launch moved meanwhile
NO_HARD_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_tag() -> str:
    """What a work-in-progress name carries of the process writing it: its host and pid (see left_by_the_gone)."""
    return f"{socket.gethostname()}.{os.getpid()}"


def left_by_the_gone(tag: str) -> bool:
    """Whether `tag` (an owner_tag, then anything after a dot) names a process of this host that is gone: only then
    is what it left certainly nobody's. Another host's process cannot be asked, and an untagged name is left too."""
    parts = tag.rsplit(".", 2)   # a host name may have dots of its own
    if len(parts) != 3 or not parts[1].isdigit():
        return False
    return parts[0] == socket.gethostname() and not _alive(int(parts[1]))


def _read(path: Path) -> tuple[int, str, float] | None:
    """The claim in place: its inode, its text and its age; None if there is none."""
    try:
        st = path.stat()
        return st.st_ino, path.read_text(errors="replace"), time.time() - st.st_mtime
    except FileNotFoundError:
        return None
    except OSError as e:
        raise CohtbError(f"{path}: cannot read: {e.strerror or e}") from None


def _holder(text: str, age: float, launch: str, timeout: float, name: str) -> str | None:
    """Who holds a claim read as `text`, `age` seconds old; None when it is this launch's or its holder is gone."""
    if age > timeout + MARGIN_SECONDS:
        return None
    try:
        holder = json.loads(text)
        if not isinstance(holder, dict):
            raise ValueError
    except ValueError:   # never written so (claims appear whole): damaged, held until stale by age
        return f"an unreadable claim {name}"
    if holder.get("launch") == launch:
        return None
    if holder.get("host") == socket.gethostname() and not _alive(int(holder.get("pid", 0))):
        return None
    return f"{holder.get('host')}:{holder.get('pid')} (launch {holder.get('launch')})"


def _create_whole(path: Path, text: str) -> int | None:
    """Puts a claim holding `text` at `path` in one step: its inode, or None if the place is taken."""
    private = path.with_name(f"{path.name}.{uuid.uuid4().hex}")
    try:
        private.write_text(text)
        try:
            os.link(private, path)
        except FileExistsError:
            # A resent NFS request may answer "exists" to a link that was made: then the file has two names.
            if private.stat().st_nlink < 2:
                return None
        return private.stat().st_ino
    except OSError as e:
        if e.errno in NO_HARD_LINKS:
            raise CohtbError(f"{path.parent}: cannot claim a run there: its file system has no hard links "
                             f"({e.strerror}); put the runs' directory on one that has (local, NFS)") from None
        raise unwritable(path, e) from None   # a full disk, a read-only runs directory: said in one line
    finally:
        private.unlink(missing_ok=True)


def _remove_if_still(path: Path, ino: int, text: str) -> None:
    """Removes the claim at `path` if it is still the one of this inode and text."""
    now = _read(path)
    if now is not None and now[0] == ino and now[1] == text:
        path.unlink(missing_ok=True)


def _remove_stale(path: Path, ino: int, text: str, launch: str) -> None:
    """Removes the claim judged stale, under the break lock; without the lock (another launch is removing it),
    nothing: the caller tries the place again."""
    lock = path.with_name(path.name + ".break")
    lock_text = json.dumps({"launch": launch, "pid": os.getpid(), "since": time.time(), "claim": uuid.uuid4().hex})
    held = _create_whole(lock, lock_text)
    if held is None:
        old = _read(lock)
        if old is not None and old[2] > BREAK_SECONDS:
            _remove_if_still(lock, old[0], old[1])
        time.sleep(0.01)
        return
    try:
        _remove_if_still(path, ino, text)
    finally:
        _remove_if_still(lock, held, lock_text)


@contextmanager
def claim(runs_dir: Path, run_id: str, launch: str, timeout: float) -> Iterator[str | None]:
    """Yields None with the run claimed for this launch (released after), or who is recording it."""
    path = runs_dir / f".{run_id}.claim"
    mine = json.dumps({"launch": launch, "host": socket.gethostname(), "pid": os.getpid(), "since": time.time(),
                       "claim": uuid.uuid4().hex})   # unique to this claim, whoever else holds the same launch
    for _ in range(TRIES):
        ino = _create_whole(path, mine)
        if ino is not None:
            try:
                yield None
            finally:
                _remove_if_still(path, ino, mine)
            return
        found = _read(path)
        if found is None:
            continue   # released meanwhile: try the place again
        holder = _holder(found[1], found[2], launch, timeout, path.name)
        if holder:
            yield holder
            return
        _remove_stale(path, found[0], found[1], launch)
    yield f"other launches, which kept taking the claim {path.name} in turn"


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
