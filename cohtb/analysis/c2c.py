"""A real machine's cache-to-cache report, read: the text of `perf c2c report --stdio` (the Linux perf tool), its
"Shared Data Cache Line Table" (the lines most HITMs fell on: loads that found the line modified in another core's
cache) and its "Shared Cache Line Distribution Pareto" (per line, each offset and each instruction that touched
it: code address, function, object, source line, its shares of the line's HITMs and stores, mean cycles, CPUs,
nodes). Engineers bring it from their own machine to set beside cohtb's simulated lines, whose instructions
profile.json names per line (cohtb/run/pc_profile.py): the same question, which instructions fight over which
bytes of a line, answered by hardware instead of by gem5.

The format followed is mainline perf's since Leo Yan's 2022 series added the Peer and N/A columns, as printed by
tools/perf/builtin-c2c.c (read at GitHub mj22226/linux 4825565cd50e, a 2026 tree; the fixture's README, tests/
fixtures/perf-c2c-report.README, says more). Headers are read by name, not position: perf prints a header as two
lines of names (a group's dashed title, then each column's name) over a line of dots, one run per column, and the
names changed across versions ("Rmt"/"Lcl" under "HITM" became "RmtHitm"/"LclHitm"; "Store Reference Total"
became "Total Stores"), so each field is found by the names it has had and the columns that come and go (N/A,
Peer, Pid, Tid, Total records) are passed over.

What perf does not print is not here: an instruction's offset in its function appears only in Source:Line, as
"function+N" (N decimal), when perf had no debug info for the code; and perf cuts Symbol and Source:Line at 30
characters unless reported with --full-symbols, so a cut name stays cut. Reports of peer snoops (-d peer, Arm's
default) have no HITM columns and are refused, as are call graphs (report with --no-call-graph)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cohtb.errors import CohtbError

TABLE = "Shared Data Cache Line Table"
PARETO = "Shared Cache Line Distribution Pareto"
SYMBOL_WIDTH = 30                        # builtin-c2c.c: Symbol and Source:Line are cut to this without --full-symbols
COLOUR = re.compile(r"\x1b\[[0-9;]*m")   # on a terminal perf colours the percentages
DOTS = re.compile(r"#(\s+\.+)+\s*")      # a header's last line: one run of dots per column, as wide as the column
RULE = re.compile(r"\s*-{20,}\s*")       # the Pareto's dashes above and below each cache line's own row
CALL_GRAPH = re.compile(r"\s+(\||--)")   # a call graph's first line under a row (perf c2c record -g)


def whole(text: str) -> int:
    if not text.isdigit():
        raise ValueError(f"'{text}' is not a whole number")
    return int(text)


def hex_number(text: str) -> int:
    if not re.fullmatch(r"0x[0-9a-fA-F]+", text):
        raise ValueError(f"'{text}' is not a hex number")
    return int(text, 16)


def percent(text: str) -> float:
    if not re.fullmatch(r"\d+\.\d+%", text):
        raise ValueError(f"'{text}' is not a percentage")
    return float(text[:-1])


# Each field: the column's name in messages, the keys it has had across perf versions (its group and its name, in
# lower case, letters and digits only: see key()), and how its value is written.
Column = tuple[str, tuple[str, ...], Callable[[str], object]]
LINE_COLUMNS: dict[str, Column] = {
    "index": ("Index", ("index",), whole),
    "address": ("Cacheline Address", ("cachelineaddress", "cacheline"), hex_number),
    "hitm_pct": ("Tot Hitm", ("tothitm", "rmthitm", "lclhitm"), percent),   # the share perf sorted on (-d tot|rmt|lcl)
    "hitm_total": ("Load Hitm Total", ("loadhitmtotal", "llcloadhitmtotal"), whole),
    "hitm_local": ("Load Hitm LclHitm", ("loadhitmlclhitm", "llcloadhitmlcl"), whole),
    "hitm_remote": ("Load Hitm RmtHitm", ("loadhitmrmthitm", "llcloadhitmrmt"), whole),
    "records": ("Total records", ("totalrecords",), whole),
    "loads": ("Total Loads", ("totalloads",), whole),
    "stores": ("Total Stores", ("totalstores", "storereferencetotal"), whole),
}
ROW_COLUMNS: dict[str, Column] = {
    "offset": ("Data address Offset", ("dataaddressoffset",), hex_number),
    "code_address": ("Code address", ("codeaddress",), hex_number),
    "remote_hitm_pct": ("HITM RmtHitm", ("hitmrmthitm", "hitmrmt"), percent),
    "local_hitm_pct": ("HITM LclHitm", ("hitmlclhitm", "hitmlcl"), percent),
    "store_l1hit_pct": ("Store Refs L1 Hit", ("storerefsl1hit",), percent),
    "store_l1miss_pct": ("Store Refs L1 Miss", ("storerefsl1miss",), percent),
    "remote_hitm_cycles": ("cycles rmt hitm", ("cyclesrmthitm",), whole),
    "local_hitm_cycles": ("cycles lcl hitm", ("cycleslclhitm",), whole),
    "load_cycles": ("cycles load", ("cyclesload",), whole),
    "cpus": ("cpu cnt", ("cpucnt",), whole),
}
RECORDS: Column = ("Total records", ("totalrecords",), whole)   # a row's samples; not in every perf's Pareto
# From Symbol on a row is text, not one word a column (a symbol may hold spaces): these, two spaces apart.
SYMBOL, OBJECT, SOURCE, NODE = "symbol", "sharedobject", "sourceline", "node"


@dataclass(frozen=True)
class C2cRow:
    """One row of a line's Pareto: one instruction's accesses to one offset of the line."""
    offset: int                  # the byte of the line
    code_address: int            # the instruction's address, as the machine ran it
    symbol: str                  # its function, without perf's "[k] "/"[.] "
    symbol_offset: int | None    # the instruction's offset in the function; None: perf did not print it
    shared_object: str           # "[kernel.kallsyms]", a module such as "[nfs]", or a binary's name
    source: str                  # Source:Line as printed: file:line, or "function+N"; "" with --no-source
    remote_hitm_pct: float       # the row's share of the line's remote HITMs, %
    local_hitm_pct: float
    store_l1hit_pct: float       # its share of the line's stores that hit L1, %
    store_l1miss_pct: float
    remote_hitm_cycles: int      # mean cycles of its loads that were remote HITMs
    local_hitm_cycles: int
    load_cycles: int             # mean cycles of its other loads
    records: int | None          # its samples (None: a perf without the column)
    cpus: int                    # how many CPUs made its samples
    nodes: str                   # the Node column as printed, spaces collapsed: "0 1", or -N's "0{...}" forms


@dataclass(frozen=True)
class C2cLine:
    """One line of the Shared Data Cache Line Table, with its Pareto rows."""
    index: int
    address: int
    hitm_pct: float              # the line's share of all the HITMs perf sorted on (Tot Hitm unless -d rmt|lcl), %
    hitm_total: int
    hitm_local: int
    hitm_remote: int
    records: int                 # its samples: loads and stores
    loads: int
    stores: int
    rows: tuple[C2cRow, ...]


@dataclass(frozen=True)
class Header:
    keys: list[str]     # each column's key, in order
    line: int           # the line of its names, for messages
    section: str


@dataclass(frozen=True)
class RowLayout:
    """Where a Pareto row's values are: before Symbol, one word a column (the Num column is left empty)."""
    words: int                                  # how many words come before Symbol
    at: dict[str, tuple[int, Column]]           # field -> its word
    text: list[str]                             # the text columns' keys, Symbol first


def read(path: Path) -> list[C2cLine]:
    """A saved `perf c2c report --stdio`."""
    try:
        text = Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise CohtbError(f"{path}: cannot read the perf c2c report: {e}") from None
    return parse(text, str(path))


def parse(text: str, where: str) -> list[C2cLine]:
    """The table's lines, in its order (most HITMs first), each with its Pareto rows; `where` names the text in
    messages. A malformed report is refused naming the line."""
    lines = COLOUR.sub("", text).splitlines()
    table_at = section(lines, TABLE, 0, where)
    pareto_at = section(lines, PARETO, table_at, where)
    return joined(table(lines, table_at, where), pareto(lines, pareto_at, where), where)


def section(lines: list[str], title: str, start: int, where: str) -> int:
    """The index of the line after a section's title."""
    for i in range(start, len(lines)):
        if lines[i].strip() == title:
            return i + 1
    raise CohtbError(f"{where}: line {max(len(lines), 1)}: no '{title}' section before the end "
                     f"(want the output of perf c2c report --stdio)")


def key(name: str) -> str:
    """A column's key: its group and name, lower case, letters and digits only; -N's "Node{cpu list}" is Node."""
    return re.sub(r"[^a-z0-9]", "", name.split("{")[0].lower())


def read_header(lines: list[str], start: int, where: str, title: str) -> tuple[Header, int]:
    """A section's header, and the index of the line after it. perf prints it under the section's banner as '#'
    lines: groups' titles, then names, then dots, then a bare '#'. Names are split at two spaces (a name holds
    one at most); a group belongs to the columns under it, found by the dots, exactly as wide as the columns."""
    i = start
    while i < len(lines) and (lines[i].startswith("#") or set(lines[i].strip()) == {"="}) \
            and not DOTS.fullmatch(lines[i]):
        i += 1
    if i >= len(lines) or not DOTS.fullmatch(lines[i]) or i < start + 2 \
            or not all(x.startswith("#") for x in lines[i - 2:i]):
        raise CohtbError(f"{where}: line {min(i + 1, max(len(lines), 1))}: no column header in the '{title}' "
                         f"section (want two '#' lines of names over a '# ....' line)")
    names = re.split(r"\s{2,}", lines[i - 1][1:].strip())
    spans = [m.span() for m in re.finditer(r"\.+", lines[i])]
    if len(names) != len(spans):
        raise CohtbError(f"{where}: line {i}: {len(names)} column names over {len(spans)} columns of dots")
    keys = [key(group_over(lines[i - 2], s, e) + name) for name, (s, e) in zip(names, spans)]
    after = i + 2 if i + 1 < len(lines) and lines[i + 1].strip() == "#" else i + 1
    return Header(keys, i, title), after


def group_over(line: str, start: int, end: int) -> str:
    """The group title on the first header line over characters start..end, its dashes dropped ("" if none)."""
    for m in re.finditer(r"\S+(?: \S+)*", " " + line[1:]):   # the '#' is no title
        if m.start() < end and m.end() > start:
            return m.group().strip("- ")
    return ""


def find(keys: list[str], field: Column) -> int | None:
    """Where, among keys, a field's column is, by any of the names it has had."""
    return next((keys.index(name) for name in field[1] if name in keys), None)


def column(keys: list[str], head: Header, field: Column, where: str) -> int:
    """Where, among keys, a field's column is; refused, naming the header's line, when the header has none."""
    at = find(keys, field)
    if at is None:
        hint = " (a report of -d peer? report with -d tot)" if "hitm" in field[1][0] else ""
        raise CohtbError(f"{where}: line {head.line}: the '{head.section}' header has no '{field[0]}' column{hint}")
    return at


def value(field: Column, text: str) -> object:
    label, _, kind = field
    try:
        return kind(text)
    except ValueError as e:
        raise ValueError(f"column '{label}': {e}") from None


def table(lines: list[str], start: int, where: str) -> dict[int, tuple[int, dict]]:
    """The table's rows: index -> (line number, the fields of LINE_COLUMNS). It ends at a blank line."""
    head, i = read_header(lines, start, where, TABLE)
    at = {name: column(head.keys, head, field, where) for name, field in LINE_COLUMNS.items()}
    rows: dict[int, tuple[int, dict]] = {}
    while i < len(lines) and lines[i].strip():
        words = lines[i].split()
        try:
            if len(words) != len(head.keys):   # every column of the table is one word
                raise ValueError(f"{len(words)} fields, want {len(head.keys)} (a truncated row?)")
            fields = {name: value(LINE_COLUMNS[name], words[k]) for name, k in at.items()}
        except ValueError as e:
            raise CohtbError(f"{where}: line {i + 1}: {e}") from None
        if fields["index"] in rows:
            raise CohtbError(f"{where}: line {i + 1}: cache line {fields['index']} twice in the table")
        rows[fields["index"]] = (i + 1, fields)
        i += 1
    return rows


def row_layout(head: Header, where: str) -> RowLayout:
    """Where the Pareto's fields are, by its header."""
    symbol_at = column(head.keys, head, ("Symbol", (SYMBOL,), str), where)
    words = [k for k in head.keys[:symbol_at] if k != "num"]
    text = head.keys[symbol_at:]
    if OBJECT not in text or text[-1] != NODE:
        raise CohtbError(f"{where}: line {head.line}: the Pareto's header does not end in Symbol, Shared Object "
                         f"and Node (report with the default --coalesce, iaddr)")
    at = {name: (column(words, head, field, where), field) for name, field in ROW_COLUMNS.items()}
    records = find(words, RECORDS)
    if records is not None:
        at["records"] = (records, RECORDS)
    return RowLayout(len(words), at, text)


def pareto(lines: list[str], start: int, where: str) -> list[tuple[int, int, int, list[C2cRow]]]:
    """Each cache line's block of the Pareto: (line number of its own row, index, address, its rows)."""
    head, i = read_header(lines, start, where, PARETO)
    layout = row_layout(head, where)
    blocks: list[tuple[int, int, int, list[C2cRow]]] = []
    while i < len(lines):
        if RULE.fullmatch(lines[i]):
            blocks.append(block_head(lines, i, where))
            i += 3
            continue
        if lines[i].strip():
            if not blocks:
                raise CohtbError(f"{where}: line {i + 1}: a row before the first cache line's '----' lines")
            if CALL_GRAPH.match(lines[i]):
                raise CohtbError(f"{where}: line {i + 1}: a call graph, not a row (report with --no-call-graph)")
            blocks[-1][3].append(row(lines[i], layout, where, i + 1))
        i += 1
    return blocks


def block_head(lines: list[str], i: int, where: str) -> tuple[int, int, int, list[C2cRow]]:
    """A cache line's own row, between two lines of dashes: its index first, its address last."""
    if i + 2 >= len(lines) or not RULE.fullmatch(lines[i + 2]):
        raise CohtbError(f"{where}: line {i + 2}: want a cache line's row between two lines of dashes")
    words = lines[i + 1].split()
    try:
        if len(words) < 2:
            raise ValueError("want the cache line's index first and its address last")
        return i + 2, value(("Num", (), whole), words[0]), value(("Address", (), hex_number), words[-1]), []
    except ValueError as e:
        raise CohtbError(f"{where}: line {i + 2}: {e}") from None


def row(text: str, layout: RowLayout, where: str, n: int) -> C2cRow:
    """One Pareto row: the words before Symbol, then the text columns two or more spaces apart (the last, Node,
    may be empty)."""
    try:
        words = list(re.finditer(r"\S+", text))
        if len(words) <= layout.words:
            raise ValueError(f"{len(words)} fields before Symbol, want {layout.words} (a truncated row?)")
        fields = {name: value(field, words[k].group()) for name, (k, field) in layout.at.items()}
        rest = text[words[layout.words - 1].end():].strip()
        texts = re.split(r"\s{2,}", rest, maxsplit=len(layout.text) - 1)
        if len(texts) < len(layout.text) - 1:
            raise ValueError(f"{len(texts)} of the {len(layout.text)} columns from Symbol to Node, two spaces "
                             f"apart (a truncated row?)")
        named = dict(zip(layout.text, texts + [""]))
        symbol, symbol_offset = function(named[SYMBOL], named.get(SOURCE, ""))
    except ValueError as e:
        raise CohtbError(f"{where}: line {n}: {e}") from None
    return C2cRow(symbol=symbol, symbol_offset=symbol_offset, shared_object=named[OBJECT],
                  source=named.get(SOURCE, ""), nodes=" ".join(named[NODE].split()),
                  records=fields.pop("records", None), **fields)


def function(symbol: str, source: str) -> tuple[str, int | None]:
    """The function and the instruction's offset in it. perf prints the offset only in Source:Line, as
    "function+N" (N decimal), when it had no debug info; a Source:Line of SYMBOL_WIDTH characters may have lost
    its end, so gives none. When Symbol was cut, an uncut "function+N" gives the whole name too."""
    m = re.fullmatch(r"\[.\] (.+)", symbol)
    if not m:
        raise ValueError(f"column 'Symbol': want '[k] function' or '[.] function', not '{symbol}'")
    name = m.group(1)
    plus = re.fullmatch(r"(.+)\+(\d+)", source)
    if not plus or len(source) >= SYMBOL_WIDTH or not plus.group(1).startswith(name):
        return name, None
    return plus.group(1), int(plus.group(2))


def joined(lines: dict[int, tuple[int, dict]], blocks: list[tuple[int, int, int, list[C2cRow]]],
           where: str) -> list[C2cLine]:
    """Each table line with its Pareto block; a block the table lacks, or a line without a block (a report cut
    short), is refused."""
    rows_of: dict[int, tuple[C2cRow, ...]] = {}
    for n, index, address, rows in blocks:
        if index not in lines:
            raise CohtbError(f"{where}: line {n}: cache line {index} is not in the '{TABLE}'")
        if lines[index][1]["address"] != address:
            raise CohtbError(f"{where}: line {n}: cache line {index} is at {address:#x} here but at "
                             f"{lines[index][1]['address']:#x} in the '{TABLE}'")
        if not rows:
            raise CohtbError(f"{where}: line {n}: cache line {index} has no rows (a report cut short?)")
        rows_of[index] = tuple(rows)
    for index, (n, _) in lines.items():
        if index not in rows_of:
            raise CohtbError(f"{where}: line {n}: cache line {index} has no block in the '{PARETO}' "
                             f"(a report cut short?)")
    return [C2cLine(**fields, rows=rows_of[index]) for index, (_, fields) in lines.items()]
