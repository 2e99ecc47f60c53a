"""The `cohtb launch` commands printed in the README, docs/ and docs/decisions/ record what the experiments declare:
a plan of a seed is exactly that seed's runs, and a one-off run measures (warm-up, window, interval, skew) as the
declaration of the seed it stands for. Each command is run as printed, with --dry-run, beside a stand-in gem5."""

import re
import shlex
from pathlib import Path

import pytest

from cohtb import cli
from cohtb.commands.launch import specs_of
from cohtb.experiments import plans
from cohtb.experiments.seeds import EXPERIMENTS
from cohtb.places import ROOT
from cohtb.run.spec import RunSpec

FAKE = Path(__file__).with_name("fake_gem5.py")
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name != "results.md"),
         *sorted((ROOT / "docs" / "decisions").glob("*.md"))]
MEASURE = ("warmup_us", "window_us", "interval_us", "skew_ns")


def documented() -> list[tuple[str, list[str]]]:
    """(where, argv) of every `cohtb launch` command line in a code block of the pages."""
    found = []
    for page in PAGES:
        in_block = False
        for n, line in enumerate(page.read_text().splitlines(), 1):
            if line.lstrip().startswith("```"):
                in_block = not in_block
                continue
            m = re.match(r"\s*(?:\.venv/bin/)?cohtb (launch .*)", line) if in_block else None
            if m:
                argv = shlex.split(m.group(1), comments=True)
                found.append((f"{page.relative_to(ROOT)}:{n}", argv))
    return found


def test_the_pages_print_launch_commands():
    assert any("--fs" in argv for _, argv in documented()) and any("--matrix" in argv for _, argv in documented())


@pytest.mark.parametrize("where,argv", documented(), ids=[w for w, _ in documented()])
def test_a_documented_launch_records_what_is_declared(where, argv, capsys, monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE))
    assert cli.main([*argv, "--dry-run"]) == 0, capsys.readouterr().err
    # a dry run prints each run as "<id>: <its predicted cost>", then the whole set's
    ids = [line.split(": ", 1)[0] for line in capsys.readouterr().out.splitlines()
           if line and not line.startswith(("predicted:", " "))]
    args = cli.build_parser("launch").parse_args(argv)
    specs: list[RunSpec] = specs_of(args)
    assert ids == [s.id for s in specs]
    if not (args.fs or args.workload):
        seed = args.matrix.removeprefix("seed")
        if seed in EXPERIMENTS:
            assert specs == EXPERIMENTS[seed].specs(), where
        return
    for s in specs:
        d = plans.measuring(s.workload) if not s.kernel else EXPERIMENTS[plans.FS_SEED].declaration
        assert {k: getattr(s, k) for k in MEASURE} == {k: getattr(d, k) for k in MEASURE}, where


def test_the_readme_lists_every_verb_once():
    """The README's verb table has a row for each verb `cohtb --help` lists, and no other."""
    rows = re.findall(r"^\| `cohtb (\w+)` \|", (ROOT / "README.md").read_text(), re.M)
    assert sorted(rows) == sorted(cli.VERBS) and len(rows) == len(set(rows))
