"""The rule table of docs/counting-rules.md, read from the page itself, so that the tests of both models
(tests/test_counting_rules.py) and of the RTL (cocotb-tests/tb_rules.py) walk exactly the rows a reader sees."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from cohtb.contract import Kind
from cohtb.errors import CohtbError
from cohtb.toolchain import ROOT

RULES_DOC = ROOT / "docs" / "counting-rules.md"
SHORT_KINDS = {"R": Kind.READ, "W": Kind.WRITE, "E": Kind.EVICT, "I": Kind.INV}
ROLES = ("A", "B", "D")

# The state a row leaves behind, as the counters show it (the RTL keeps its line table to itself). Each probe
# starts from the state after the row (a cleared monitor, the setup, the row's event) and is applied alone;
# P is a core in none of the roles. Together they tell apart every state over the roles: P's read shows
# whether the line is dirty and the owner's side, P's write whether it has an owner and how many holders;
# X's eviction before P's write shows whether X holds the line and whether X is the owner.
PROBE_COUNTERS = ("transfers", "crossSocketTransfers", "invalidations", "dirtyReadsLocal", "dirtyReadsRemote")
PROBES: dict[str, tuple[tuple[str, Kind], ...]] = {
    "P:R P:W": (("P", Kind.READ), ("P", Kind.WRITE)),
    **{f"{x}:E P:W": ((x, Kind.EVICT), ("P", Kind.WRITE)) for x in ROLES},
}


@dataclass(frozen=True)
class After:
    """The line's state after the event, in role names: None owner = no owner; untracked = nothing kept."""

    untracked: bool
    owner: str | None = None
    dirty: bool = False
    holders: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Rule:
    name: str
    kind: Kind
    state: str                              # line state before, as the requester A sees it
    setup: tuple[tuple[str, Kind], ...]     # (role, kind) events that make that state
    transfer: int
    cross_socket: int
    dirty_read: str                         # "none", "local" or "remote"
    invalidations: int
    after: After


def roles(socket_of_core: list[int]) -> dict[str, tuple[int, int]]:
    """A = core 0; B = the first core of another socket; D = another core of A's socket; P (the probes') = the
    first core that is none of these: (core, socket)."""
    a_socket = socket_of_core[0]
    b = next(c for c, s in enumerate(socket_of_core) if s != a_socket)
    d = next(c for c, s in enumerate(socket_of_core) if s == a_socket and c != 0)
    p = next(c for c in range(len(socket_of_core)) if c not in (0, b, d))
    return {"A": (0, a_socket), "B": (b, socket_of_core[b]), "D": (d, a_socket), "P": (p, socket_of_core[p])}


def _after(text: str, where: str) -> After:
    if text == "untracked":
        return After(True)
    m = re.fullmatch(r"(?:owner (\w), (dirty|clean)|no owner), holders ([\w ]+)", text)
    if not m or not set(m.group(3).split()) <= set(ROLES):
        raise CohtbError(f"{where}: cannot read the state after: '{text}'")
    return After(False, m.group(1), m.group(2) == "dirty", frozenset(m.group(3).split()))


def load(path: Path = RULES_DOC) -> list[Rule]:
    rules = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 9 or not re.fullmatch(r"[WREIX]-[\w-]+", cells[0]):
            continue
        where = f"{path}:{n}"
        name, kind, state, setup, transfer, cross, dirty, inval, after = cells
        try:
            steps = tuple((w[0], SHORT_KINDS[w[2]]) for w in setup.split()) if setup else ()
            rules.append(Rule(name, Kind[kind], state, steps, int(transfer), int(cross), dirty, int(inval),
                              _after(after, where)))
        except (KeyError, ValueError, IndexError) as e:
            raise CohtbError(f"{where}: malformed rule row ({e})") from None
    if not rules:
        raise CohtbError(f"{path}: no rule rows found")
    return rules
