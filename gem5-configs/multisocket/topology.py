"""How the sockets are wired: a topology file (topologies/<name>.json) names the socket pairs joined by a link.
Two sockets without a link talk through the sockets between them, one more link and router per hop, as QPI
forwards. This module reads and checks a file and derives the hop matrix; it needs only the standard library,
so cohtb and its tests read the same files with the same rules as the gem5 configs.

A file: {"name": str, "sockets": int, "links": [[a, b], ...], "source": str (where the wiring comes from)}."""

import hashlib
from dataclasses import dataclass
from pathlib import Path

from .json_file import field as json_field, read_object

DIRECTORY = Path(__file__).resolve().parent / "topologies"


class TopologyError(ValueError):
    """A topology file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Topology:
    name: str
    sockets: int
    links: tuple   # of (a, b), a < b, each pair once
    source: str
    digest: str    # of the file's bytes: the manifest says which wiring a run had

    def hops(self) -> list[list[int]]:
        """hops[a][b]: the fewest socket links between a and b (breadth-first search)."""
        neighbours = [set() for _ in range(self.sockets)]
        for a, b in self.links:
            neighbours[a].add(b)
            neighbours[b].add(a)
        matrix = []
        for start in range(self.sockets):
            distance = {start: 0}
            queue = [start]
            for s in queue:   # grows while it is walked: breadth first
                for n in sorted(neighbours[s] - distance.keys()):
                    distance[n] = distance[s] + 1
                    queue.append(n)
            matrix.append([distance.get(b, -1) for b in range(self.sockets)])
        return matrix

    def record(self) -> dict:
        """What roi.json (and so the manifest) keeps of it."""
        return {"name": self.name, "digest": self.digest, "links": [list(p) for p in self.links],
                "hops": self.hops()}


def path_of(name_or_path: str) -> Path:
    """A name in topologies/ (without .json), or a file's path."""
    p = Path(name_or_path)
    return p if p.suffix == ".json" else DIRECTORY / f"{name_or_path}.json"


def names() -> list[str]:
    return sorted(p.stem for p in DIRECTORY.glob("*.json"))


def load(name_or_path: str) -> Topology:
    path = path_of(name_or_path)
    data, doc = read_object(path, TopologyError, lambda: f"topologies here: {', '.join(names())}")
    field = lambda key, kind: json_field(path, doc, key, kind, TopologyError)

    name, sockets, links, source = field("name", str), field("sockets", int), field("links", list), field("source", str)
    if name != path.stem:
        raise TopologyError(f"{path}: field 'name': {name!r} is not the file's name {path.stem!r}")
    if sockets < 1:
        raise TopologyError(f"{path}: field 'sockets': {sockets} is not a positive count")
    pairs = []
    for i, link in enumerate(links):
        if (not isinstance(link, list) or len(link) != 2 or not all(isinstance(s, int) and not isinstance(s, bool)
                                                                    for s in link)):
            raise TopologyError(f"{path}: field 'links[{i}]': {link!r} is not a pair of socket numbers")
        a, b = sorted(link)
        if a == b or a < 0 or b >= sockets:
            raise TopologyError(f"{path}: field 'links[{i}]': {link!r} must join two sockets under {sockets}")
        if (a, b) in pairs:
            raise TopologyError(f"{path}: field 'links[{i}]': {link!r} is listed twice")
        pairs.append((a, b))
    topology = Topology(name, sockets, tuple(pairs), source, hashlib.sha256(data).hexdigest()[:16])
    unreachable = [b for b, h in enumerate(topology.hops()[0]) if h < 0]
    if unreachable:
        raise TopologyError(f"{path}: field 'links': sockets {unreachable} cannot be reached from socket 0")
    return topology
