"""Tables as data (header + rows), rendered as Markdown, HTML or plain text from the same rows."""

from __future__ import annotations

import csv
import html
import io
import re
from dataclasses import dataclass

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

    def text(self) -> str:
        widths = [max(len(h), *(len(r[i]) for r in self.rows)) if self.rows else len(h) for i, h in enumerate(self.header)]
        fmt = lambda cells: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths)))
        return "\n".join([self.title, fmt(self.header), *(fmt(r) for r in self.rows)]) + "\n"


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
    return s[:limit].rstrip("-") or "table"
