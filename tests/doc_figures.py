"""The measured figures in README.md, docs/*.md and docs/decisions/*.md that nothing backs (tests/test_results.py
holds the docs to it): a figure (a time, a share, a ratio) outside the blocks `cohtb results` writes is backed when
each of its numbers is in a generated table (docs/results.md or a generated block), in a seed's published lines,
when its section shows the command that prints it, or when docs/figures-allowed.toml lists it with why (a
parameter, a published hardware figure with its source, a measurement kept as the history of a decision). A page is
named there by its path under docs/ (`machine.md`, `decisions/0003-calibration-on-sosp13-table.md`), the README
as `README.md`."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from cohtb.experiments.published import PUBLISHED
from cohtb.places import ROOT
from cohtb.report import results

FIGURE = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)(?:-(\d[\d,]*(?:\.\d+)?))? ?(?:ns|µs|ms|s|%|x)(?![\w])")
COMMAND = re.compile(r"`(?:\.venv/bin/)?(?:cohtb |make |python|benchmarks/|gem5-configs/build/)")
ALLOWED = ROOT / "docs" / "figures-allowed.toml"
DOCS = ROOT / "docs"
# The pages held to it: the README, the reference pages and the decision records (docs/results.md and its seed pages
# are what `cohtb results` writes).
PAGES = [ROOT / "README.md", *sorted(p for p in DOCS.glob("*.md") if p.name != "results.md"),
         *sorted((DOCS / "decisions").glob("*.md"))]


def key(page: Path) -> str:
    """How docs/figures-allowed.toml names a page: its path under docs/, or its name outside it."""
    return page.relative_to(DOCS).as_posix() if page.is_relative_to(DOCS) else page.name


def _split_generated(text: str) -> tuple[str, str]:
    """(the page outside its generated blocks, the blocks)"""
    outside, blocks = "", ""
    while results.BEGIN in text and results.END in text:
        head, rest = text.split(results.BEGIN, 1)
        block, text = rest.split(results.END, 1)
        outside, blocks = outside + head, blocks + block
    return outside + text, blocks


def _sections(text: str) -> list[str]:
    """The page's text between headings, code blocks left out."""
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.split(r"^#+ ", text, flags=re.M)


def allowed() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for entry in tomllib.loads(ALLOWED.read_text())["allowed"]:
        out.setdefault(entry["page"], set()).update(entry["figures"])
    return out


def results_pages() -> str:
    """What `cohtb results` writes as pages: docs/results.md and every seed's page under docs/results/."""
    return "\n".join(p.read_text() for p in [ROOT / "docs" / "results.md",
                                              *sorted((ROOT / "docs" / "results").glob("*.md"))])


def unbacked_figures() -> list[tuple[str, str, str]]:
    """(page, figure, its context) of every figure nothing backs."""
    generated = results_pages()
    pages = {}
    for page in PAGES:
        pages[page], blocks = _split_generated(page.read_text())
        generated += blocks
    generated += " ".join(q for seed in PUBLISHED.values() for pub in seed.values() for q in pub.quote)
    known = set(re.findall(r"\d[\d,]*(?:\.\d+)?", generated))
    allow = allowed()
    found = []
    for page, text in pages.items():
        for section in _sections(text):
            if COMMAND.search(section):
                continue
            for m in FIGURE.finditer(section):
                numbers = [n for n in m.groups() if n]
                if all(n in known for n in numbers) or m.group(0) in allow.get(key(page), ()):
                    continue
                found.append((key(page), m.group(0), " ".join(section[max(0, m.start() - 80):m.end() + 40].split())))
    return found
