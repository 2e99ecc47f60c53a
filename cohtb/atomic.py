"""Writing outputs: whole or not at all, never over what cohtb did not write, and an unwritable place in one line.

Three rules, each defined here once:
- A file is written under a unique temporary name beside it and renamed into place (two writers never share
  a temporary; a failed write leaves none behind).
- An output directory is built in a temporary directory and then put in place. cohtb lists the files it wrote
  in the directory's marker (MARKER); replacing the output replaces those files only, so whatever a user keeps
  there (notes, other data) survives. A verb refuses a directory holding files cohtb did not write unless the
  user forces it (check_output_dir).
- An OSError of the file system while writing an output (read-only, full, a missing directory, a mount point)
  becomes a CohtbError naming the output, which the CLI prints as one line with exit status 2. An OSError
  elsewhere (reading an input, a bug) is left alone, traceback and all.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from cohtb.errors import CohtbError

MARKER = ".cohtb-output"   # in every output directory: the files cohtb wrote there, one relative path a line

# Raised only by writing, so such an error in code that writes an output is the output's, whatever file it names
# (a write() on a full disk names none).
WRITE_ERRNOS = {errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EFBIG}


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def ordinary_mode(path: Path | str, directory: bool = False) -> None:
    """The mode a file or directory would have had from open()/mkdir() (mkstemp and mkdtemp make them private)."""
    os.chmod(path, (0o777 if directory else 0o666) & ~umask())


def unwritable(target: Path | str, e: OSError) -> CohtbError:
    target = Path(target)
    if e.errno == errno.ENOENT and not target.parent.exists():
        why = f"its directory {target.parent} does not exist"
    else:
        why = e.strerror or str(e)
    return CohtbError(f"{target}: cannot write: {why}")


def _temp_name_of(name: str | bytes | None, target: Path) -> bool:
    """Whether `name` is target, inside it, or one of its temporaries beside it (made by this module)."""
    if name is None or isinstance(name, int):
        return False
    p, t = Path(os.path.abspath(os.fsdecode(name))), Path(os.path.abspath(target))
    return p == t or t in p.parents or (p.parent == t.parent and p.name.startswith(f".{t.name}."))


@contextmanager
def writing(target: Path | str) -> Iterator[None]:
    """Around code that writes `target` (a file or a directory) by its own means: an OSError that is the output's
    (a write error, or one naming target or its temporaries) becomes a CohtbError naming target."""
    try:
        yield
    except OSError as e:
        if e.errno in WRITE_ERRNOS or _temp_name_of(e.filename, Path(target)) or _temp_name_of(e.filename2, Path(target)):
            raise unwritable(target, e) from e
        raise


@contextmanager
def _own(target: Path) -> Iterator[None]:
    """Around this module's own steps, which touch only target and its temporaries: every OSError is target's."""
    try:
        yield
    except OSError as e:
        raise unwritable(target, e) from e


def writable_dir(path: Path | str, output: Path | str | None = None) -> Path:
    """Makes the directory (and its parents) and makes sure something can be created in it, before a long job
    would find out that it cannot keep its results. Errors name `output` (default: the directory)."""
    path = Path(path)
    with _own(Path(output or path)):
        path.mkdir(parents=True, exist_ok=True)
        os.rmdir(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path))
    return path


def owned(d: Path) -> set[str]:
    """The files cohtb wrote into output directory d (its marker's list; none without one). Only paths inside d:
    none absolute, none through '..' or through a symbolic link, which could lead out of d."""
    try:
        lines = (d / MARKER).read_text().splitlines()
    except FileNotFoundError:
        return set()
    return {p for p in lines if p and not os.path.isabs(p) and ".." not in Path(p).parts and not _through_link(d, p)}


def _through_link(d: Path, p: str) -> bool:
    """Whether the relative path p passes through a symbolic link inside d before its last part."""
    q = d
    for part in Path(p).parts[:-1]:
        q = q / part
        if q.is_symlink():
            return True
    return False


def _write_marker(d: Path, files) -> None:
    tmp = d / f".{MARKER}.tmp"
    tmp.write_text("".join(f"{p}\n" for p in files))
    os.replace(tmp, d / MARKER)


def _entries(d: Path) -> tuple[list[str], list[str]]:
    """Directories and other entries (files, links) under d, relative, parents before children."""
    dirs, files = [], []
    for root, subdirs, names in os.walk(d):
        rel = Path(root).relative_to(d)
        dirs += [(rel / s).as_posix() for s in sorted(subdirs) if not (Path(root) / s).is_symlink()]
        files += [(rel / n).as_posix() for n in sorted(names)]
        files += [(rel / s).as_posix() for s in sorted(subdirs) if (Path(root) / s).is_symlink()]
    return dirs, files


def foreign(d: Path) -> list[str]:
    """The files in directory d that cohtb did not write (empty directories hold nothing to lose)."""
    mine = owned(d) | {MARKER, f".{MARKER}.tmp"}
    return [p for p in _entries(d)[1] if p not in mine and not Path(p).parts[0].startswith(f".{d.name}.")]


def check_output_dir(out: Path | str, force: bool) -> Path:
    """Before a verb's work: `out` must be absent, empty, or a directory of cohtb's own files (force: one holding
    others too, which are kept); and writable."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise CohtbError(f"{out}: exists and is not a directory")
    others = foreign(out) if out.is_dir() else []
    if others and not force:
        raise CohtbError(f"{out}: holds files cohtb did not write ({', '.join(others[:3])}"
                         f"{', ...' if len(others) > 3 else ''}); name another directory, or --force to write into it "
                         "(cohtb replaces only the files it wrote)")
    writable_dir(out if out.is_dir() else out.parent, out)
    return out


@contextmanager
def atomic_dir(final: Path) -> Iterator[Path]:
    """Yields a temporary directory; when the block succeeds its files become `final`'s, replacing the files of an
    earlier output there (MARKER's) and nothing else; when the block fails, it is removed and `final` is as it was
    (an install interrupted midway leaves old and new files mixed, every one of them listed as cohtb's)."""
    final = Path(final)
    with _own(final):
        if final.exists() and not final.is_dir():
            raise CohtbError(f"{final}: exists and is not a directory")
        final.parent.mkdir(parents=True, exist_ok=True)
        # Beside a new final, so that one rename puts it in place; inside an existing one, so that its files move
        # within one file system even when final is a mount point (which cannot be renamed or removed).
        tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final if final.is_dir() else final.parent))
        ordinary_mode(tmp, directory=True)
    try:
        with writing(final):
            yield tmp
        with _own(final):
            install(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def install(tmp: Path, final: Path, last: tuple[str, ...] = ()) -> None:
    """Puts the finished directory tmp (on final's file system) in place as final: renamed when final is new, else
    its files moved into final over the earlier output's, whose other files are removed; nothing else is touched.
    A name the output needs that holds something cohtb did not write (a file, a directory, a symbolic link a file
    would be written through) stops it before anything moves. `last`: files moved after all others (a run's
    manifest, which says the run is whole)."""
    dirs, files = _entries(tmp)
    files = [p for p in files if p not in last] + [p for p in files if p in last]
    if not final.exists():
        _write_marker(tmp, files)
        os.rename(tmp, final)
        return
    old = owned(final)
    taken = lambda p: (final / p).exists() or (final / p).is_symlink()
    real_dir = lambda p: (final / p).is_dir() and not (final / p).is_symlink()
    blocked = ([p for p in dirs if _through_link(final, p) or (taken(p) and not real_dir(p))]
               + [p for p in files if _through_link(final, p) or real_dir(p) or (taken(p) and p not in old)]
               + [p for p in old - set(files) if real_dir(p)])
    if blocked:
        raise CohtbError(f"{final / blocked[0]}: cohtb's output needs this name, and something cohtb did not write "
                         "is there (move it away)")
    # Every name the moves may fill is claimed first, so an interruption leaves nothing cohtb wrote unlisted.
    _write_marker(final, sorted(old | set(files)))
    for p in dirs:
        (final / p).mkdir(exist_ok=True)
    for p in files:   # each file replaced whole
        os.replace(tmp / p, final / p)
    for p in sorted(old - set(files), reverse=True):   # the earlier output's files this one has not
        (final / p).unlink(missing_ok=True)
        for parent in (final / p).parents:   # and its directories, once empty
            if parent == final or any(parent.iterdir()):
                break
            parent.rmdir()
    _write_marker(final, files)


def write_json_atomic(path: Path, doc) -> None:
    write_text_atomic(path, json.dumps(doc, indent=1, sort_keys=True) + "\n")


class FileBeside:
    """A file written under a unique temporary name beside `path` (making its directory): commit() renames it onto
    path, abort() leaves nothing. The one way cohtb writes a file whole or not at all."""

    def __init__(self, path: Path | str, mode: str = "w"):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        self.tmp = Path(tmp)
        ordinary_mode(self.tmp)
        self.file = os.fdopen(fd, mode)

    def commit(self) -> None:
        self.file.close()
        os.replace(self.tmp, self.path)

    def abort(self) -> None:
        self.file.close()
        self.tmp.unlink(missing_ok=True)


def write_text_atomic(path: Path | str, text: str) -> None:
    """Writes path whole (making its directory): a unique temporary file beside it, renamed into place."""
    path = Path(path)
    with _own(path):
        out = FileBeside(path)
        try:
            out.file.write(text)
            out.commit()
        except BaseException:
            out.abort()
            raise
