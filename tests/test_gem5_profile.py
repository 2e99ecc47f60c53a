"""The window's profile on the real gem5 (a CHI build of machine c4 with the pc-profile patch; docs/gem5.md, "The
profile of the window"): every core's ticks sum to the window, the workload's own function takes the window's
time, and the lockref line's misses are named by the instructions that waited for them and the field they wanted.
Skipped, with the reason, without that build; `make test-gem5` runs it with the other gem5 tests."""

import subprocess

import pytest

from cohtb.analysis.profile import of, share_of
from cohtb.errors import CohtbError
from cohtb.launch import launch
from cohtb.places import ROOT
from cohtb.run import gem5
from cohtb.run.runs import load
from cohtb.run.spec import RunSpec

MACHINE = "westmere-ex-8s-c4"


def _missing() -> str | None:
    try:
        binary = gem5.require(MACHINE)
    except CohtbError as e:
        return str(e)
    return None if gem5.has_profile(binary) else f"{binary}: built without the pc-profile patch (docs/gem5.md)"


pytestmark = [pytest.mark.gem5, pytest.mark.skipif(_missing() is not None, reason=_missing() or "")]


def test_an_se_run_keeps_a_profile_whose_hot_line_names_its_code_and_field(tmp_path):
    spec = RunSpec("lockref", "cmpxchg", "shared", 1, 4, ops=200, machine=MACHINE)
    [outcome] = launch([spec], tmp_path, jobs=1, timeout=3600)
    assert outcome.status == "done", outcome.error
    run = load(tmp_path / spec.id)
    doc, rows = run.profile(), of(run)
    assert doc["cores"] == 4 and sum(r.share for r in rows) == pytest.approx(1.0)
    assert share_of(rows, "testcase") > 0.2, [(r.symbol, round(r.share, 3)) for r in rows[:8]]
    lref = next(f for f in run.manifest.layout if f.name == "d_lockref")
    [hot] = [x for x in doc["lines"] if x["line"] == lref.lines[0]]
    assert hot["stores"] > 0 and hot["code"] and hot["unmatched"] <= 0.1 * (hot["loads"] + hot["stores"])
    # the lockref's cmpxchg wanted d_lockref's bytes: the line's most-missed byte is in the field
    offset = max(hot["bytes"], key=lambda k: hot["bytes"][k]["stores"])
    assert lref.paddr <= hot["line"] * 64 + int(offset) < lref.paddr + lref.size, hot["bytes"]


def test_a_config_that_refuses_its_options_says_why_and_exits_2(tmp_path):
    """gem5 turns a config's SystemExit carrying a message into a pybind11 cast error that hides it
    (gem5-configs/multisocket/refusal.py): the reason must reach stderr, with exit status 2."""
    args = ["--machine", "westmere-ex-8s-c4-o3", "--sockets", "1", "--cores-per-socket", "1", "--cpu", "timing",
            "--binary", "/bin/true", "--out", str(tmp_path)]
    proc = subprocess.run(gem5.command(gem5.require(MACHINE), tmp_path, ROOT / "gem5-configs" / "cohtb_se.py", args,
                                       trace=None), capture_output=True, text=True)
    assert proc.returncode == 2
    assert "cohtb_se.py: --cpu timing: machine westmere-ex-8s-c4-o3 has o3 cores" in \
        (tmp_path / "gem5" / "simerr.txt").read_text()
