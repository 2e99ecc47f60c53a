"""`cohtb ingest`: a gem5 ProtocolTrace -> a cohtb event file, through the native cohtb-ingest tool
(native/ingest/cohtb_ingest.c), which streams plain or gzip input in constant memory."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from cohtb.contract import DEFAULT_LINE_SIZE, block_socket_map
from cohtb.errors import CohtbError
from cohtb.toolchain import ROOT
from cohtb.trace.events import check_socket_map

TOOL = ROOT / "build" / "native" / "cohtb-ingest"


def tool_path() -> Path:
    if not TOOL.exists():
        raise CohtbError(f"{TOOL}: ingest tool not built (run the set-up: make setup)")
    return TOOL


def ingest(trace: Path | str, out: Path, socket_of_core: list[int] | None = None, source: dict | None = None,
           line_size: int = DEFAULT_LINE_SIZE, pagemap: Path | None = None, cores_per_socket: int | None = None,
           l1d_versions: list[int] | None = None) -> dict:
    """Convert one trace (a path, or '-' for stdin) of a machine whose core c sits in socket_of_core[c], or in
    socket c // cores_per_socket with the cores the trace shows; returns the tool's counts. A CHI trace needs
    l1d_versions, the controller version of each core's L1D (the run's controller map: l1d_versions_of). Leaves
    no file on error."""
    with tempfile.TemporaryDirectory(prefix="cohtb-ingest-") as tmp:
        cmd = command(trace, out, Path(tmp), socket_of_core, source, line_size, pagemap, cores_per_socket,
                      l1d_versions)
        proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CohtbError(proc.stderr.strip().removeprefix("cohtb-ingest: ") or f"cohtb-ingest exited {proc.returncode}")
    return json.loads(proc.stdout)


def command(trace: Path | str, out: Path, scratch: Path, socket_of_core: list[int] | None = None,
            source: dict | None = None, line_size: int = DEFAULT_LINE_SIZE, pagemap: Path | None = None,
            cores_per_socket: int | None = None, l1d_versions: list[int] | None = None) -> list[str]:
    """The cohtb-ingest command line (its socket map is written into scratch, which must outlive the run)."""
    if (socket_of_core is None) == (cores_per_socket is None):
        raise CohtbError("give the sockets either as a core->socket map or as cores per socket")
    if l1d_versions is not None and (socket_of_core is None or len(l1d_versions) != len(socket_of_core)):
        raise CohtbError("a CHI trace needs a core->socket map with one core per L1D version")
    cmd = [str(tool_path()), str(trace), str(out), "--line-size", str(line_size),
           "--source", json.dumps({**(source or {}), **({"protocol": "CHI"} if l1d_versions is not None else {})},
                                  sort_keys=True)]   # the protocol: how a bare event file is reconciled
    smap = (check_socket_map(socket_of_core, "socket map") if socket_of_core is not None
            else block_socket_map(cores_per_socket))
    map_file = Path(scratch) / "sockets"
    map_file.write_text(",".join(map(str, smap)))   # a file: a map of thousands of cores is too long an argument
    cmd += ["--socket-map", f"@{map_file}"] + ([] if socket_of_core is not None else ["--cores-from-trace"])
    if l1d_versions is not None:
        versions_file = Path(scratch) / "l1d-versions"
        versions_file.write_text(",".join(map(str, l1d_versions)))
        cmd += ["--chi-l1d", f"@{versions_file}"]
    if pagemap is not None:
        cmd += ["--pagemap", str(pagemap)]
    return cmd


def l1d_versions_of(protocol: str, controllers: dict) -> list[int] | None:
    """Each core's L1D controller version, in core order, from a run's controller map (roi.json, the manifest) when
    its protocol names every controller alike (CHI); None for MESI_Two_Level, whose L1Cache version is the core."""
    if protocol != "CHI":
        return None
    return [c["version"] for c in sorted(controllers["l1"], key=lambda c: c["core"])]


def read_controllers(path: Path) -> tuple[list[int], list[int] | None]:
    """The core->socket map and (CHI) the L1D versions of a run's controller map: its roi.json (gem5's, with
    `protocol`) or its manifest.json (`gem5.protocol`). One line naming the file and field when it has none."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise CohtbError(f"{path}: cannot read a run's roi.json or manifest.json: {e}") from None
    if not isinstance(doc, dict):
        raise CohtbError(f"{path}: not a JSON object (a run's roi.json or manifest.json)")
    gem5 = doc.get("gem5") if isinstance(doc.get("gem5"), dict) else {}
    protocol = doc.get("protocol") or gem5.get("protocol")   # roi.json's, or the manifest's
    try:
        l1 = sorted(doc["controllers"]["l1"], key=lambda c: c["core"])
        sockets = [int(c["socket"]) for c in l1]
        versions = l1d_versions_of(protocol or "", {"l1": l1})
    except (KeyError, TypeError, ValueError):
        raise CohtbError(f"{path}: field 'controllers.l1': missing, or an L1 without core, socket or version") from None
    if [c["core"] for c in l1] != list(range(len(l1))):
        raise CohtbError(f"{path}: field 'controllers.l1': cores are not numbered 0..{len(l1) - 1}")
    return check_socket_map(sockets, f"{path}: controllers.l1"), versions


def read_socket_map(spec: str) -> list[int]:
    """A core->socket map: a file of "<core> <socket>" lines (every core 0..N-1 once; '#' starts a comment), or an
    inline comma-separated list of sockets in core order ("0,0,1,1")."""
    path = Path(spec)
    if not path.exists():
        try:
            return check_socket_map([int(s) for s in spec.split(",")], f"--socket-map {spec}")
        except ValueError:
            raise CohtbError(f"--socket-map {spec}: neither a file nor a comma-separated list of sockets") from None
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise CohtbError(f"{path}: cannot read the socket map: {e}") from None
    sockets: dict[int, int] = {}
    for n, text in enumerate(lines, 1):
        words = text.split("#", 1)[0].split()
        if not words:
            continue
        try:
            core, socket = (int(w) for w in words)
        except ValueError:
            raise CohtbError(f"{path}:{n}: expected '<core> <socket>', got '{text.strip()}'") from None
        if core in sockets:
            raise CohtbError(f"{path}:{n}: core {core} mapped twice")
        if core < 0 or socket < 0:
            raise CohtbError(f"{path}:{n}: core and socket are numbers from 0")
        sockets[core] = socket
    missing = sorted(set(range(len(sockets))) - set(sockets))
    if not sockets or missing:
        raise CohtbError(f"{path}: the map must list cores 0..N-1; missing {missing[:8] or 'all'}")
    return check_socket_map([sockets[c] for c in range(len(sockets))], str(path))

