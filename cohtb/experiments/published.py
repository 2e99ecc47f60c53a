"""The seeds' published figures as data (seed_data/<seed>/published.json): each figure with the lines of its public
message it is printed on, and each message cited by list, subject, author and date, so that anyone can find it;
what the seed publishes about where its time went before the patch (shares), and its perf profiles."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote_plus

from cohtb.data_file import STRICT, Record, read_json, validated
from cohtb.errors import CohtbError
from cohtb.experiments import seed_folders



@dataclass(frozen=True)
class Source:
    """A public mailing-list message."""

    seed: str
    list: str
    subject: str
    author: str
    date: str

    @property
    def archive(self) -> str:
        """An address that finds the message: the linux-kernel archive's search by subject (its words without the
        [PATCH ...] tag and the Re:, which the archive's subject search does not need)."""
        words = re.sub(r"^(Re:\s*)?(\[[^]]*\]\s*)?", "", self.subject)
        return "https://lore.kernel.org/lkml/?q=" + quote_plus(f's:"{words}"')

    def citation(self) -> str:
        return f'{self.author}, "{self.subject}", {self.list}, {self.date} ({self.archive})'


@dataclass(frozen=True)
class Published:
    """One row of a seed's table: base and new as published, in the published unit."""
    __pydantic_config__ = STRICT   # read from published.json ("figures") by cohtb/data_file.py's rule

    configuration: str
    base: float
    new: float
    unit: str
    higher_is_better: bool
    source: Source | None = None
    where: str = ""                     # the table or lines of the message the figures are in
    quote: tuple[str, ...] = ()         # those lines, white space folded: the figures must be in them
    null: bool = False   # the author calls it no change (seed 000 on one node): reproduced by no change

    @property
    def ratio(self) -> float:
        """new / base as a speed-up: > 1 is better (elapsed times are inverted)."""
        return self.new / self.base if self.higher_is_better else self.base / self.new


@dataclass(frozen=True)
class Share:
    """What a seed publishes about where the time went before its patch (cohtb/experiments/magnitude.py).
    kind "share": the share of the time in the path the patch changes. kind "time-per-op": a per-thread rate,
    from which a time per operation follows (threads x block_bytes over the base figure in unit_bytes/s)."""
    __pydantic_config__ = STRICT   # read from published.json ("shares") by cohtb/data_file.py's rule

    seed: str
    kind: str
    what: str
    applies_to: tuple[str, ...]   # the configurations of the figures it predicts
    where: str
    quote: tuple[str, ...]
    share: float = 0.0
    threads: int = 0
    block_bytes: int = 0
    unit_bytes: int = 0

    def time_per_op(self, pub: Published) -> float:
        """Seconds per operation of one thread at the published base figure (kind "time-per-op")."""
        return self.block_bytes * self.threads / (pub.base * self.unit_bytes)


@dataclass(frozen=True)
class Profile:
    """A perf profile a seed publishes for one arm ("base": without its patch, "new": with it): each function's
    share of the samples, as printed."""

    seed: str
    arm: str
    configuration: str
    tool: str
    where: str
    quote: tuple[str, ...]
    functions: tuple[tuple[str, float], ...]   # (symbol, share), as printed

    def share(self, symbol: str) -> float | None:
        return dict(self.functions).get(symbol)


class _Profile(Record):
    arm: str
    configuration: str
    tool: str
    where: str
    quote: tuple[str, ...]
    functions: dict[str, float]


class _File(Record):
    """A seed's published.json (seed_data/README.md)."""
    list: str
    subject: str
    author: str
    date: str
    figures: tuple[dict, ...]   # each a Published, without its source (the file's own)
    shares: tuple[dict, ...] = ()   # each a Share, without its seed
    profiles: tuple[_Profile, ...] = ()


def _files() -> dict[str, _File]:
    """seed -> its published.json, every seed in order; a file that cannot be read, or a field missing, unknown or
    of another type, is one line naming the file and the field."""
    out = {}
    for seed in seed_folders.seeds():
        path = seed_folders.published_file(seed)
        out[seed] = validated(_File, read_json(path), path)
    return out


def load_profiles() -> dict[str, tuple[Profile, ...]]:
    """seed -> the profiles it publishes (none: nothing to hold a simulated profile to)."""
    return {seed: tuple(Profile(seed, x.arm, x.configuration, x.tool, x.where, x.quote, tuple(x.functions.items()))
                        for x in f.profiles) for seed, f in _files().items()}


def _from_file(model, x: dict, seed: str, at: str, given: dict, required: tuple[str, ...] = ()):
    """One record of a seed's published.json as `model`, with the fields the file does not hold (`given`: its seed,
    its source) added; a record that writes one of those itself, or lacks a field the file must give (`required`,
    where the model has a default for other uses), is one line naming it."""
    path = seed_folders.published_file(seed)
    for name in given:
        if name in x:
            raise CohtbError(f"{path}: field '{at}.{name}': not the file's to give (it is the seed's)")
    for name in required:
        if name not in x:
            raise CohtbError(f"{path}: field '{at}.{name}': Field required")
    return validated(model, {**x, **given}, path, at)


def load_shares() -> dict[str, tuple[Share, ...]]:
    """seed -> what it publishes about its time before the patch (none: magnitude not testable)."""
    return {seed: tuple(_from_file(Share, x, seed, f"shares.{i}", {"seed": seed}) for i, x in enumerate(f.shares))
            for seed, f in _files().items()}


def load() -> dict[str, dict[str, Published]]:
    """seed -> configuration -> its published figure."""
    out = {}
    for seed, f in _files().items():
        src = {"seed": seed, "list": f.list, "subject": f.subject, "author": f.author, "date": f.date}
        figures = [_from_file(Published, x, seed, f"figures.{i}", {"source": src}, required=("where", "quote"))
                   for i, x in enumerate(f.figures)]
        out[seed] = {x.configuration: x for x in figures}
    return out


PUBLISHED = load()
SHARES = load_shares()
PROFILES = load_profiles()
