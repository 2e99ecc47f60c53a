"""Tables as data (header + rows), rendered as Markdown, HTML or plain text from the same rows."""

from __future__ import annotations

import csv
import html
import io
import hashlib
import re
import textwrap
from dataclasses import dataclass

TERMINAL_WIDTH = 100   # what a terminal table may take: most terminals and code review tools show this much
GAP = 2
WIDEST = 30            # a longer cell wraps within its column
FIRST_COLUMN = 40      # the first column names the row: it may take more


THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d+)?$")


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""

    def markdown(self, csv_path: str | None = None) -> str:
        link = f" ([CSV]({csv_path}))" if csv_path else ""
        out = [f"### {self.title}{link}", ""] if self.title else ([f"[CSV]({csv_path})", ""] if csv_path else [])
        out.append("| " + " | ".join(self.header) + " |")
        out.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(self.header))) + "|")
        out += ["| " + " | ".join(r) + " |" for r in self.rows]
        if self.note:
            out += ["", self.note]
        return "\n".join(out) + "\n"

    def html(self, csv_path: str | None = None) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in self.rows)
        note = f"<p class='note'>{html.escape(self.note)}</p>" if self.note else ""
        link = f" <a class='csv' href='{html.escape(csv_path)}'>CSV</a>" if csv_path else ""
        title = f"<h3>{html.escape(self.title)}{link}</h3>" if self.title else (f"<p>{link}</p>" if link else "")
        return f"{title}<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}"

    def csv(self) -> str:
        """The header and rows as CSV; numbers lose their thousands separators ("1,234" -> "1234"), every other
        cell is as the table shows it."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(self.header)
        w.writerows([csv_cell(c) for c in r] for r in self.rows)
        return out.getvalue()

    def text(self, width: int = TERMINAL_WIDTH) -> str:
        """Plain text at most `width` columns wide: long cells wrap within their column, and a table with more
        columns than fit is printed in blocks of columns, each repeating the first."""
        widths = fitted_widths([[h, *(r[i] for r in self.rows)] for i, h in enumerate(self.header)], width)
        blocks, block = [], [0]
        for i in range(1, len(widths)):
            if len(block) > 1 and sum(widths[j] + GAP for j in block) + widths[i] > width:
                blocks.append(block)
                block = [0]
            block.append(i)
        blocks.append(block)
        out = textwrap.wrap(self.title, width) if self.title else []
        for n, cols in enumerate(blocks):
            if n:
                out.append("")
            # Numbers align right; a column whose cells wrap is prose, which reads left-aligned.
            left = {i for i in cols if i == 0 or any(len(r[i]) > widths[i] for r in [self.header, *self.rows])}
            for cells in [self.header, *self.rows]:
                wrapped = [textwrap.wrap(cells[i], widths[i]) or [""] for i in cols]
                for k in range(max(map(len, wrapped))):
                    parts = [(w[k] if k < len(w) else "") for w in wrapped]
                    out.append((" " * GAP).join(p.ljust(widths[i]) if i in left else p.rjust(widths[i])
                                                for p, i in zip(parts, cols)).rstrip())
        if self.note:
            out += textwrap.wrap(self.note, width)
        return "\n".join(out) + "\n"


def fitted_widths(columns: list[list[str]], width: int) -> list[int]:
    """Each column's width: its longest cell, at most WIDEST (FIRST_COLUMN for the first, which names the row) or
    its longest word; a table still wider than `width` prints in blocks of columns."""
    out = []
    for i, cells in enumerate(columns):
        longest_word = max((len(w) for cell in cells for w in cell.split()), default=0)
        out.append(min(width, max(longest_word, min(max(map(len, cells)), FIRST_COLUMN if i == 0 else WIDEST))))
    return out


def wrap(prose: str) -> str:
    """A line of prose at the width of the tables around it (a terminal's), its continuation lines indented."""
    return textwrap.fill(prose, TERMINAL_WIDTH, break_on_hyphens=False, subsequent_indent="  ")


def count(n: int, thing: str, things: str | None = None) -> str:
    """"1 run", "2 runs": a number with its noun (things: an irregular plural)."""
    return f"{n:,} {thing if n == 1 else things or thing + 's'}"


def num(v: float, digits: int = 3) -> str:
    if v is None:
        return "-"
    if abs(v) >= 1e5:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def pct(base: float, new: float) -> str:
    if base == 0:
        return "n/a" if new == 0 else "new"
    return f"{(new - base) / base * 100:+.1f}%"


def csv_cell(cell: str) -> str:
    return cell.replace(",", "") if THOUSANDS.match(cell) else cell


def slug(text: str, limit: int = 120) -> str:
    """A file name for a title: lower case, runs of anything but letters and digits as one '-'."""
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(s) <= limit:
        return s or "table"
    # cut: a digest of the whole title keeps two titles that differ only past the cut apart
    return f"{s[:limit - 9].rstrip('-')}-{hashlib.sha256(text.encode()).hexdigest()[:8]}"
