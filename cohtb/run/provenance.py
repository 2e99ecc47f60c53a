"""Where, when and from what a run was recorded, so that anyone can tell which code made it.

Every manifest keeps the cohtb commit and whether its checkout had uncommitted changes (`cohtb`), and the host with
the UTC start and end of the recording (`recorded`). Runs are recorded from a clean, committed checkout: a launch
from one with uncommitted changes to tracked files is refused, unless it is asked for (`--allow-dirty`), and then
each run keeps the checkout's diff against its commit beside its manifest (`cohtb.diff`), so that the code that
made it can still be rebuilt. Untracked files are not code cohtb runs, and do not count."""

from __future__ import annotations

import functools
import hashlib
import socket
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from cohtb.errors import CohtbError
from cohtb.places import ROOT

DIFF = "cohtb.diff"   # in a run directory recorded from a checkout with changes: the changes


@dataclass(frozen=True)
class Checkout:
    commit: str    # "unknown" where git cannot say (not a checkout, git missing or refusing it)
    diff: str      # the uncommitted changes to tracked files, as `git diff HEAD` gives them ("" for none)

    @property
    def changed(self) -> bool:
        """Changed, or not known to be clean: only a commit git named, with no diff, is clean."""
        return bool(self.diff) or self.commit == "unknown"

    @property
    def identity(self) -> str:
        """The commit and, where the checkout has changes, a digest of them: two processes that record alike."""
        return self.commit + (f"+{hashlib.sha256(self.diff.encode()).hexdigest()[:12]}" if self.diff else "")

    def record(self) -> dict:
        """What a manifest keeps (its `cohtb` section)."""
        return {"commit": self.commit, "changed": self.changed}


def checkout_of(root: Path) -> Checkout:
    def git(*args: str) -> str | None:
        try:
            proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        except OSError:   # no git at all
            return None
        return proc.stdout if proc.returncode == 0 else None
    commit, diff = git("rev-parse", "HEAD"), git("diff", "HEAD", "--binary")
    if not commit or diff is None:
        return Checkout("unknown", diff or "")
    return Checkout(commit.strip(), diff)


@functools.cache
def checkout() -> Checkout:
    """The cohtb checkout recording runs, taken once per process: a launch records all its runs from one state."""
    return checkout_of(ROOT)


def require_clean(allow_dirty: bool, current: Checkout | None = None) -> None:
    """Refuses, in one line, to record from a checkout with uncommitted changes unless `allow_dirty`."""
    current = current or checkout()
    if current.commit == "unknown" and not allow_dirty:
        raise CohtbError(f"{ROOT}: git cannot say which commit this checkout is (not a git checkout?): record from a "
                         "clean, committed checkout, or with --allow-dirty")
    if current.changed and not allow_dirty:
        files = sorted({line[len("diff --git a/"):].split(" b/")[0] for line in current.diff.splitlines()
                        if line.startswith("diff --git a/")})
        raise CohtbError(f"{ROOT}: the checkout has uncommitted changes ({', '.join(files[:3])}"
                         f"{', ...' if len(files) > 3 else ''}): commit them before recording runs, or record with "
                         f"--allow-dirty (each run then keeps the diff in {DIFF})")


def now() -> str:
    """The UTC time, to the second, as manifests keep it."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def host() -> str:
    return socket.gethostname()
