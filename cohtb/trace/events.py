"""The cohtb event file: the contract between ingest, the monitor RTL and the reference models.

Layout, kinds and limits come from the contract (`cohtb.contract`, generated from the hardware's own
definitions); docs/event-format.md describes them. Little-endian: a header, then fixed-size records.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
import zlib
from typing import Iterator

import numpy as np

from cohtb import contract as ct
from cohtb.atomic import FileBeside
from cohtb.contract import Kind, L1State
from cohtb.errors import CohtbError
from cohtb.tables import count

_STRUCT_CODES = {1: "B", 2: "H", 4: "I", 8: "Q"}
_FIXED = struct.Struct("<" + "".join("8s" if n == "magic" else _STRUCT_CODES[size] for n, size in ct.HEADER_FIELDS))
# Version 1 (docs/event-format.md, "Version 1"): the same layout (its `aux` word was 0, which reads as l1_state
# "other"), but issue-time events. Such files are read as recorded, so that runs recorded before version 2 stay
# usable, and every result of one says what it is; nothing writes version 1.
LEGACY_VERSION = 1
LEGACY_NOTE = ("event format 1: issue-time events (in the order the L1s asked, not the order the L2 granted), "
               "read as recorded and not checked against gem5 transfer by transfer; re-ingest its trace for format 2")
RECORD = np.dtype([(n, f"<u{size}") for n, size in ct.RECORD_FIELDS])
assert RECORD.itemsize == ct.RECORD_SIZE and _FIXED.size == sum(size for _, size in ct.HEADER_FIELDS)


@dataclass
class Header:
    line_size: int
    num_cores: int
    socket_of_core: list[int]
    source: dict = field(default_factory=dict)
    num_records: int = 0
    version: int = ct.VERSION      # 1: a legacy file of issue-time events (see LEGACY_NOTE); written files are current

    @property
    def legacy(self) -> bool:
        return self.version == LEGACY_VERSION

    @property
    def num_sockets(self) -> int:
        return max(self.socket_of_core) + 1 if self.socket_of_core else 0

    def validate(self, where: str) -> None:
        if self.line_size <= 0 or self.line_size & (self.line_size - 1):
            raise CohtbError(f"{where}: line_size {self.line_size} is not a power of two")
        if self.num_cores != len(self.socket_of_core) or not 1 <= self.num_cores <= ct.MAX_CORES:
            raise CohtbError(f"{where}: core->socket map has {len(self.socket_of_core)} entries for {self.num_cores} cores")
        check_socket_map(self.socket_of_core, where)

    def encode(self) -> bytes:
        src = json.dumps(self.source, sort_keys=True).encode()
        body_len = _FIXED.size + self.num_cores + len(src)
        header_len = -(-body_len // ct.HEADER_ALIGN) * ct.HEADER_ALIGN
        fixed = _FIXED.pack(ct.MAGIC, ct.VERSION, header_len, self.line_size, self.num_cores, self.num_sockets,
                            RECORD.itemsize, 0, self.num_records, len(src))
        return fixed + bytes(self.socket_of_core) + src + b"\0" * (header_len - body_len)


def check_socket_map(smap: list[int], where: str) -> list[int]:
    """An event file numbers sockets 0..S-1 with a core in each (docs/event-format.md): the one check of a map,
    made before an event file is written (cohtb/trace/ingest.py) and when one is read."""
    if any(s < 0 for s in smap):
        raise CohtbError(f"{where}: socket numbers start at 0")
    empty = sorted(set(range(max(smap, default=-1) + 1)) - set(smap))
    if empty:
        raise CohtbError(f"{where}: sockets must be numbered 0..{max(smap)} with a core in each; none in {empty[:8]}")
    return smap


def read_header(f, where: str) -> Header:
    raw = f.read(_FIXED.size)
    if len(raw) < _FIXED.size:
        raise CohtbError(f"{where}: truncated header ({len(raw)} bytes)")
    magic, version, header_len, line_size, cores, sockets, rec_size, _, n, src_len = _FIXED.unpack(raw)
    if magic != ct.MAGIC:
        raise CohtbError(f"{where}: not a cohtb event file (magic {magic!r})")
    if version not in (LEGACY_VERSION, ct.VERSION):
        raise CohtbError(f"{where}: event format version {version}, this cohtb reads {ct.VERSION} "
                         f"(and {LEGACY_VERSION}, the issue-time events of older runs)")
    if rec_size != RECORD.itemsize:
        raise CohtbError(f"{where}: record size {rec_size}, expected {RECORD.itemsize}")
    rest = f.read(header_len - _FIXED.size)
    if len(rest) != header_len - _FIXED.size or cores + src_len > len(rest):
        raise CohtbError(f"{where}: truncated header")
    try:
        source = json.loads(rest[cores:cores + src_len] or b"{}")
    except json.JSONDecodeError as e:
        raise CohtbError(f"{where}: header field 'source' is not JSON: {e}") from None
    h = Header(line_size, cores, list(rest[:cores]), source, n, version)
    h.validate(where)
    if h.num_sockets != sockets:
        raise CohtbError(f"{where}: header says {count(sockets, 'socket')}, the core map has {h.num_sockets}")
    return h


def validate_records(recs: np.ndarray, h: Header, where: str, first: int = 0) -> None:
    """Every record names a known core, that core's socket, a known kind and a known L1 state; raise on the
    first bad one."""
    smap = np.asarray(h.socket_of_core, dtype=np.uint8)
    bad_core = recs["core"] >= h.num_cores
    core = np.where(bad_core, 0, recs["core"])
    bad = (bad_core | (recs["kind"] >= len(Kind)) | (smap[core] != recs["socket"]) | (recs["line"] >> ct.MAX_LINE_BITS != 0)
           | (recs["l1_state"] >= len(L1State)))
    if bad.any():
        i = int(np.argmax(bad))
        r = recs[i]
        raise CohtbError(f"{where}: record {first + i}: malformed event (core {r['core']}, socket {r['socket']}, "
                         f"kind {r['kind']}, line {r['line']:#x}, l1_state {r['l1_state']}) for {h.num_cores} cores")


def header_of(path: Path | str) -> Header:
    """Just the header of an event file, plain or gzip-compressed."""
    path = Path(path)
    try:
        with (gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")) as f:
            return read_header(f, str(path))
    except (OSError, EOFError, zlib.error) as e:
        raise CohtbError(f"{path}: cannot read the event file's header: {e}") from None


def read(path: Path | str, chunk: int = 1 << 20) -> tuple[Header, Iterator[np.ndarray]]:
    """Open an event file: its header and an iterator of validated record chunks."""
    path = Path(path)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise CohtbError(f"{path}: cannot open event file: {e.strerror}") from None
    try:
        h = read_header(f, str(path))
    except CohtbError:
        f.close()
        raise
    data_bytes = os.fstat(f.fileno()).st_size - f.tell()
    if data_bytes != h.num_records * RECORD.itemsize:
        f.close()
        raise CohtbError(f"{path}: header promises {h.num_records} records, file holds {data_bytes / RECORD.itemsize:g} "
                         "(truncated or corrupt)")

    def chunks() -> Iterator[np.ndarray]:
        with f:
            done = 0
            while done < h.num_records:
                recs = np.fromfile(f, dtype=RECORD, count=min(chunk, h.num_records - done))
                validate_records(recs, h, str(path), done)
                done += len(recs)
                yield recs

    return h, chunks()


def read_all(path: Path | str) -> tuple[Header, np.ndarray]:
    """A whole event file in memory; a .gz one is decompressed on the way."""
    path = Path(path)
    if path.suffix != ".gz":
        h, chunks = read(path)
        parts = list(chunks)
        return h, (np.concatenate(parts) if parts else np.zeros(0, dtype=RECORD))
    try:
        with gzip.open(path, "rb") as f:
            data = f.read()
    except (OSError, EOFError, zlib.error) as e:
        raise CohtbError(f"{path}: truncated or corrupt gzip: {e}") from None
    buf = io.BytesIO(data)
    h = read_header(buf, str(path))
    rest = len(data) - buf.tell()
    if rest != h.num_records * RECORD.itemsize:
        raise CohtbError(f"{path}: header promises {h.num_records} records, file holds {rest / RECORD.itemsize:g} "
                         "(truncated or corrupt)")
    recs = np.frombuffer(data, dtype=RECORD, count=h.num_records, offset=buf.tell())
    validate_records(recs, h, str(path))
    return h, recs


class EventWriter:
    """Writes an event file atomically: records go to a temporary file, renamed into place on close."""

    def __init__(self, path: Path | str, header: Header):
        self.path = Path(path)
        header.validate(str(self.path))
        if header.legacy:
            raise CohtbError(f"{self.path}: cohtb writes event format {ct.VERSION} only, not the legacy format 1")
        self.header = header
        self.out = FileBeside(self.path, "wb")
        self.f = self.out.file
        self.f.write(header.encode())
        self.count = 0

    def write(self, recs: np.ndarray) -> None:
        validate_records(recs, self.header, str(self.path), self.count)
        recs.astype(RECORD, copy=False).tofile(self.f)
        self.count += len(recs)

    def close(self) -> None:
        self.header.num_records = self.count
        self.f.seek(0)
        self.f.write(self.header.encode())
        self.out.commit()

    def abort(self) -> None:
        self.out.abort()

    def __enter__(self) -> "EventWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def make_records(rows: list[tuple[int, ...]] | np.ndarray) -> np.ndarray:
    """Records from (tick, line, core, socket, kind) or (tick, line, core, socket, kind, l1_state) tuples
    (l1_state 0, `other`, when not given; `reserved` is always 0)."""
    out = np.zeros(len(rows), dtype=RECORD)
    if len(rows):
        a = np.asarray(rows, dtype=np.uint64)
        for i, name in enumerate(("tick", "line", "core", "socket", "kind", "l1_state")[:a.shape[1]]):
            out[name] = a[:, i]
    return out
