"""Tables as data (header + rows), rendered as Markdown, HTML or plain text from the same rows."""

from __future__ import annotations

import html
from dataclasses import dataclass


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[str]]
    note: str = ""

    def markdown(self) -> str:
        out = [f"### {self.title}", ""] if self.title else []
        out.append("| " + " | ".join(self.header) + " |")
        out.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(self.header))) + "|")
        out += ["| " + " | ".join(r) + " |" for r in self.rows]
        if self.note:
            out += ["", self.note]
        return "\n".join(out) + "\n"

    def html(self) -> str:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in self.rows)
        note = f"<p class='note'>{html.escape(self.note)}</p>" if self.note else ""
        title = f"<h3>{html.escape(self.title)}</h3>" if self.title else ""
        return f"{title}<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}"

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
