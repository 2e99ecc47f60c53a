"""The counting rules as data (counting_rules.toml): one row per event and line state, with what the event counts
and the state it leaves. The tests of both models (tests/test_counting_rules.py) and of the RTL
(cocotb-tests/tb_rules.py) walk every row; docs/counting-rules.md shows the same rows (`table`, written there by
`cohtb results`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cohtb.contract import Kind
from cohtb.data_file import Record, read_toml, validated
from cohtb.errors import CohtbError
from cohtb.tables import Table

RULES = Path(__file__).resolve().parent / "counting_rules.toml"
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


class _After(Record):
    owner: Literal["A", "B", "D"] | None = None
    dirty: bool = False
    holders: tuple[Literal["A", "B", "D"], ...]


class _Rule(Record):
    rule: str
    event: Literal["READ", "WRITE", "EVICT", "FWD_GETS", "FWD_GETX", "INV"]
    before: str
    setup: tuple[str, ...]
    transfer: int
    cross_socket: int
    dirty_read: Literal["none", "local", "remote"]
    invalidations: int
    after: _After | Literal["untracked"]


class _Rules(Record):
    rules: tuple[_Rule, ...]


def _setup(steps: tuple[str, ...], path: Path, at: str) -> tuple[tuple[str, Kind], ...]:
    out = []
    for step in steps:
        role, _, kind = step.partition(":")
        if role not in ROLES or kind not in SHORT_KINDS:
            raise CohtbError(f"{path}: field '{at}.setup': '{step}' is not ROLE:KIND (a role of {' '.join(ROLES)}, "
                             f"a kind of {' '.join(SHORT_KINDS)})")
        out.append((role, SHORT_KINDS[kind]))
    return tuple(out)


def load(path: Path = RULES) -> list[Rule]:
    doc = validated(_Rules, read_toml(path), path)
    if not doc.rules:
        raise CohtbError(f"{path}: field 'rules': no rules")
    rules = []
    for i, r in enumerate(doc.rules):
        a = r.after
        after = After(True) if a == "untracked" else After(False, a.owner, a.dirty, frozenset(a.holders))
        rules.append(Rule(r.rule, Kind[r.event], r.before, _setup(r.setup, path, f"rules.{i}"), r.transfer,
                          r.cross_socket, r.dirty_read, r.invalidations, after))
    return rules


def _after_text(a: After) -> str:
    if a.untracked:
        return "untracked"
    owner = f"owner {a.owner}, {'dirty' if a.dirty else 'clean'}" if a.owner else "no owner"
    return f"{owner}, holders {' '.join(sorted(a.holders))}"


def table(rules: list[Rule]) -> Table:
    """The rules as docs/counting-rules.md shows them."""
    short = {k: s for s, k in SHORT_KINDS.items()}
    return Table("", ["rule", "event", "state before", "setup", "transfer", "cross-socket", "dirty read",
                      "invalidations", "state after"],
                 [[r.name, r.kind.name, r.state, " ".join(f"{who}:{short[k]}" for who, k in r.setup), str(r.transfer),
                   str(r.cross_socket), r.dirty_read, str(r.invalidations), _after_text(r.after)] for r in rules])
