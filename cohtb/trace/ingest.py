"""`cohtb ingest`: a gem5 ProtocolTrace -> a cohtb event file, through the native cohtb-ingest tool
(native/ingest/cohtb_ingest.c), which streams plain or gzip input in constant memory."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from cohtb.contract import DEFAULT_LINE_SIZE
from cohtb.errors import CohtbError
from cohtb.toolchain import ROOT

TOOL = ROOT / "build" / "native" / "cohtb-ingest"


def tool_path() -> Path:
    if not TOOL.exists():
        raise CohtbError(f"{TOOL}: ingest tool not built (run the set-up: make setup)")
    return TOOL


def ingest(trace: Path | str, out: Path, socket_of_core: list[int], source: dict | None = None,
           line_size: int = DEFAULT_LINE_SIZE, pagemap: Path | None = None) -> dict:
    """Convert one trace (a path, or '-' for stdin) of a machine whose core c sits in socket_of_core[c];
    returns the tool's counts. Leaves no file on error."""
    cmd = [str(tool_path()), str(trace), str(out), "--socket-map", ",".join(map(str, socket_of_core)),
           "--line-size", str(line_size), "--source", json.dumps(source or {}, sort_keys=True)]
    if pagemap is not None:
        cmd += ["--pagemap", str(pagemap)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise CohtbError(proc.stderr.strip().removeprefix("cohtb-ingest: ") or f"cohtb-ingest exited {proc.returncode}")
    return json.loads(proc.stdout)
