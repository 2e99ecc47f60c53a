"""Terminal tables fit 100 columns: long cells wrap within their column, too many columns print in blocks."""

import subprocess
import sys

import pytest

from cohtb.tables import TERMINAL_WIDTH, Table
from cohtb.toolchain import ROOT


def lines_of(table: Table) -> list[str]:
    return table.text().splitlines()


def test_a_narrow_table_prints_as_before():
    t = Table("t", ["run", "ops"], [["a", "1"], ["bb", "22"]])
    assert lines_of(t) == ["t", "run  ops", "a      1", "bb    22"]


def test_long_cells_wrap_within_their_column_and_every_word_is_kept():
    prose = "a published configuration described in many words " * 6
    t = Table("seed", ["point", "published", "simulated"], [["8 sockets", prose.strip(), "+41%"]], note="n " * 80)
    out = lines_of(t)
    assert max(map(len, out)) <= TERMINAL_WIDTH
    assert " ".join(out).split().count("words") == 6 and "+41%" in " ".join(out)


def test_many_columns_print_in_blocks_that_repeat_the_first():
    header = ["run"] + [f"counter number {i}" for i in range(12)]
    t = Table("wide", header, [["fs stock-6.12 stat 8x4"] + [f"{i * 1000:,}" for i in range(12)]])
    out = lines_of(t)
    assert max(map(len, out)) <= TERMINAL_WIDTH
    assert sum(line.startswith("fs stock-6.12 stat 8x4") for line in out) >= 2   # the first column in every block
    assert all(f"{i * 1000:,}" in " ".join(out) for i in range(12))


@pytest.mark.parametrize("seed", ["000", "004"])
def test_the_seed_tables_fit_a_terminal(seed):
    """The widest tables cohtb prints, published vs simulated, with the bundled runs' real contents."""
    proc = subprocess.run([sys.executable, "-m", "cohtb.cli", "seeds", "--seed", seed], capture_output=True, text=True,
                          cwd=ROOT, timeout=3000)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert max(map(len, proc.stdout.splitlines())) <= TERMINAL_WIDTH, proc.stdout
