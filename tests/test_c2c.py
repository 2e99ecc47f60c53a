"""perf c2c's report, read (cohtb/analysis/c2c.py): the hand-made sample in perf's own layout (its README says
whose) pinned line by line and row by row; columns found by name, as older perfs named them and wherever they
stand; and every damaged report one clear line naming the file and the line."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from cohtb.analysis import c2c
from cohtb.errors import CohtbError

FIXTURE = Path(__file__).parent / "fixtures" / "perf-c2c-report.txt"
WHERE = "report.txt"
KERNEL = "[kernel.kallsyms]"


def sample() -> str:
    return FIXTURE.read_text()


def line_no(text: str, needle: str, after: int = 0) -> int:
    """The number (from 1) of the first line after line `after` that holds needle."""
    for n, line in enumerate(text.splitlines(), 1):
        if n > after and needle in line:
            return n
    raise AssertionError(f"no line holds {needle!r}")


def replaced_line(text: str, n: int, new: str) -> str:
    lines = text.splitlines()
    lines[n - 1] = new
    return "\n".join(lines) + "\n"


def without_lines(text: str, first: int, last: int) -> str:
    lines = text.splitlines()
    return "\n".join(lines[:first - 1] + lines[last:]) + "\n"


def test_the_sample_reads_as_perf_printed_it():
    lines = c2c.read(FIXTURE)
    assert [(line.index, line.address) for line in lines] == \
        [(0, 0xffff888104b2c640), (1, 0x55f6e3a0c0c0), (2, 0xffff888104b2a040)]
    dentry, counters, parent = lines
    assert (dentry.hitm_pct, dentry.hitm_total, dentry.hitm_local, dentry.hitm_remote) == (73.62, 9753, 7052, 2701)
    assert (dentry.records, dentry.loads, dentry.stores) == (25365, 19579, 5786)
    assert [line.hitm_pct for line in lines] == [73.62, 18.00, 8.26]
    # the dentry's second line: d_iname's tail at 0x0, d_lockref at 0x20, d_time at 0x38
    assert [(r.offset, r.symbol, r.symbol_offset, r.shared_object) for r in dentry.rows] == [
        (0x0, "__d_lookup_rcu", 0x80, KERNEL),
        (0x20, "lockref_get_not_dead", 0x1c, KERNEL),
        (0x20, "lockref_put_return", 0x2a, KERNEL),
        (0x20, "native_queued_spin_lock_sl", None, KERNEL),   # cut at 30 characters by perf, as was its Source:Line
        (0x38, "nfs_lookup_revalidate", 0x5e, "[nfs]")]
    assert dentry.rows[1] == c2c.C2cRow(
        offset=0x20, code_address=0xffffffff81737c6c, symbol="lockref_get_not_dead", symbol_offset=0x1c,
        shared_object=KERNEL, source="lockref_get_not_dead+28", remote_hitm_pct=46.65, local_hitm_pct=46.61,
        store_l1hit_pct=54.31, store_l1miss_pct=54.59, remote_hitm_cycles=402, local_hitm_cycles=196,
        load_cycles=121, records=9027, cpus=32, nodes="0 1")
    assert dentry.rows[3].source == "native_queued_spin_lock_slowpa"
    # with debug info Source:Line is file:line, and perf prints no offset in the function
    assert [(r.offset, r.code_address, r.source, r.symbol_offset, r.nodes) for r in counters.rows] == [
        (0x0, 0x55f6e3a08a4e, "stat_counter.c:31", None, "0"), (0x0, 0x55f6e3a08a75, "stat_counter.c:37", None, "0"),
        (0x8, 0x55f6e3a08a4e, "stat_counter.c:31", None, "1"), (0x8, 0x55f6e3a08a75, "stat_counter.c:37", None, "1")]
    assert {(r.symbol, r.shared_object) for r in counters.rows} == {("testcase", "stat_counter")}
    assert [(r.symbol, r.code_address, r.remote_hitm_pct, r.local_hitm_pct) for r in parent.rows] == [
        ("lockref_get_not_zero", 0xffffffff81737d1e, 53.61, 52.11),
        ("lockref_put_return", 0xffffffff81737bba, 46.39, 47.89)]


def test_each_lines_rows_share_out_its_hitms_and_stores():
    """perf's row percentages are shares of the line's own totals: they add up to 100 for every kind the line has."""
    for line in c2c.read(FIXTURE):
        for kind, total in (("remote_hitm_pct", line.hitm_remote), ("local_hitm_pct", line.hitm_local),
                            ("store_l1hit_pct", line.stores)):
            if total:
                assert sum(getattr(r, kind) for r in line.rows) == pytest.approx(100, abs=0.02), (line.index, kind)


def without_pareto_column(text: str, name: str) -> str:
    """The report without one of the Pareto's leading (fixed-width) columns, in its header and its rows: the
    characters over the column's dots, and the two spaces before them."""
    lines = text.splitlines()
    dots = line_no(text, "# .....", after=line_no(text, c2c.PARETO)) - 1
    names = re.split(r"\s{2,}", lines[dots - 1][1:].strip())
    s, e = [m.span() for m in re.finditer(r"\.+", lines[dots])][names.index(name)]
    for n in range(dots - 2, len(lines)):
        block_row = re.fullmatch(r"\s+\d+(\s+\d+)+\s+0x[0-9a-f]+", lines[n])   # a cache line's own: other columns
        if len(lines[n]) >= e and not block_row and not re.fullmatch(r"\s*-+\s*", lines[n]):
            lines[n] = lines[n][:s - 2] + lines[n][e:]
    return "\n".join(lines) + "\n"


def test_columns_are_found_by_name_as_older_perfs_named_them():
    """Without the Pareto's N/A and Total records columns (both came in later perfs), with "Rmt"/"Lcl" under
    "HITM" and a table whose hitm counts sit under "LLC Load Hitm" as "Lcl"/"Rmt": the same lines and rows."""
    text = without_pareto_column(without_pareto_column(sample(), "N/A"), "records")
    names = line_no(text, "#   Num")
    text = replaced_line(text, names - 1, text.splitlines()[names - 2].replace("------- Store Re", "-- Store Refs --"))
    text = replaced_line(text, names, text.splitlines()[names - 1].replace("RmtHitm", "    Rmt")
                         .replace("LclHitm", "    Lcl"))
    groups = line_no(text, "------- Load Hitm -------")
    text = replaced_line(text, groups, text.splitlines()[groups - 1].replace("------- Load Hitm -------",
                                                                            "----- LLC Load Hitm -----"))
    text = replaced_line(text, groups + 1, text.splitlines()[groups].replace("LclHitm", "    Lcl", 1)
                         .replace("RmtHitm", "    Rmt", 1))
    older = c2c.parse(text, WHERE)
    assert older == [dataclasses.replace(line, rows=tuple(dataclasses.replace(r, records=None) for r in line.rows))
                     for line in c2c.read(FIXTURE)]


def test_colours_a_terminal_adds_are_ignored():
    coloured = re.sub(r"(\d+\.\d+%)", "\x1b[31m\\1\x1b[m", sample())
    assert c2c.parse(coloured, WHERE) == c2c.read(FIXTURE)


def test_a_report_of_peer_snoops_is_refused_naming_its_header():
    text = sample()
    names = line_no(text, "# Index")
    text = replaced_line(text, names - 1, text.splitlines()[names - 2].replace("    Tot", "   Peer", 1))
    text = replaced_line(text, names, text.splitlines()[names - 1].replace("   Hitm", "  Snoop", 1))
    with pytest.raises(CohtbError) as e:
        c2c.parse(text, WHERE)
    assert str(e.value).startswith(f"{WHERE}: line {names}: the 'Shared Data Cache Line Table' header has no "
                                   f"'Tot Hitm' column")


def cut_before(needle: str):
    def damage(text: str) -> tuple[str, int]:
        kept = "\n".join(text.splitlines()[:line_no(text, needle) - 2]) + "\n"   # and the banner's '=' line above
        return kept, len(kept.splitlines())
    return damage


def truncated_row(needle: str, keep: int):
    """The first row holding needle, cut after its first `keep` fields."""
    def damage(text: str) -> tuple[str, int]:
        n = line_no(text, needle, after=line_no(text, c2c.TABLE))
        line = text.splitlines()[n - 1]
        return replaced_line(text, n, line[:list(re.finditer(r"\S+", line))[keep - 1].end()]), n
    return damage


def changed(needle: str, old: str, new: str):
    """The first row holding needle, below the table's title, with old written as new."""
    def damage(text: str) -> tuple[str, int]:
        n = line_no(text, needle, after=line_no(text, c2c.TABLE))
        return replaced_line(text, n, text.splitlines()[n - 1].replace(old, new, 1)), n
    return damage


def dropped_table_row(text: str) -> tuple[str, int]:
    """The table's row of cache line 2 gone: the Pareto's block for it names a line the table lacks."""
    n = line_no(text, "0xffff888104b2a040")
    return without_lines(text, n, n), line_no(text, "0xffff888104b2a040", after=n) - 1


def dropped_last_block(text: str) -> tuple[str, int]:
    """The report cut before the Pareto's last block: the table's cache line 2 has no rows."""
    pareto = line_no(text, c2c.PARETO)
    block = line_no(text, "0xffff888104b2a040", after=pareto)
    return "\n".join(text.splitlines()[:block - 3]) + "\n", line_no(text, "0xffff888104b2a040")


def call_graph(text: str) -> tuple[str, int]:
    """A call graph under a row, as perf prints one for a report recorded with -g."""
    n = line_no(text, "lockref_get_not_dead+28", after=line_no(text, c2c.PARETO))
    lines = text.splitlines()
    graph = ["            |", "            ---lockref_get_not_dead", "               __d_lookup_rcu"]
    return "\n".join(lines[:n] + graph + lines[n:]) + "\n", n + 1


def dropped_pareto_dots(text: str) -> tuple[str, int]:
    n = line_no(text, "# .....", after=line_no(text, c2c.PARETO))
    return without_lines(text, n, n), n + 1   # the '#' lines end with no dots: the first line after them


DAMAGES = {
    "no Pareto": (cut_before(c2c.PARETO), "no 'Shared Cache Line Distribution Pareto' section"),
    "no table": (cut_before(c2c.TABLE), "no 'Shared Data Cache Line Table' section"),
    "a Pareto row cut after its code address": (truncated_row("lockref_put_return+42", 10), "a truncated row?"),
    "a Pareto row cut after its symbol": (truncated_row("lockref_get_not_zero+46", 16), "a truncated row?"),
    "a table row cut short": (truncated_row("0xffff888104b2c640", 9), "9 fields, want 23"),
    "an offset not in hex": (changed("lockref_get_not_dead+28", "0x20", "0xzz"),
                             "column 'Data address Offset': '0xzz' is not a hex number"),
    "a code address not in hex": (changed("__d_lookup_rcu+128", "0xffffffff81415ae0", "ffffffff81415ae0"),
                                  "column 'Code address': 'ffffffff81415ae0' is not a hex number"),
    "a percentage with a comma": (changed("lockref_get_not_dead+28", "46.65%", "46,65%"),
                                  "column 'HITM RmtHitm': '46,65%' is not a percentage"),
    "a table count not a number": (changed("0xffff888104b2a040", "1094", "10x4"),
                                   "column 'Load Hitm Total': '10x4' is not a whole number"),
    "a Pareto block the table lacks": (dropped_table_row, "cache line 2 is not in the 'Shared Data Cache Line Table'"),
    "a report cut before a block": (dropped_last_block, "cache line 2 has no block in the"),
    "a call graph under a row": (call_graph, "a call graph, not a row (report with --no-call-graph)"),
    "a Pareto header without its dots": (dropped_pareto_dots, "no column header in the 'Shared Cache Line "
                                                              "Distribution Pareto' section"),
}


@pytest.mark.parametrize("what", DAMAGES)
def test_a_damaged_report_is_one_line_naming_the_file_and_line(what):
    damage, phrase = DAMAGES[what]
    text, n = damage(sample())
    with pytest.raises(CohtbError) as e:
        c2c.parse(text, WHERE)
    message = str(e.value)
    assert message.startswith(f"{WHERE}: line {n}: "), message
    assert phrase in message, message
    assert "\n" not in message and "Traceback" not in message


def test_an_empty_report_and_a_missing_file_are_refused_by_name(tmp_path):
    with pytest.raises(CohtbError, match=rf"^{WHERE}: line 1: no 'Shared Data Cache Line Table' section"):
        c2c.parse("", WHERE)
    with pytest.raises(CohtbError, match="cannot read the perf c2c report"):
        c2c.read(tmp_path / "absent.txt")
