"""The socket wirings (gem5-configs/multisocket/topologies/) and the rules that read them, without gem5: the
module needs only the standard library, so it is loaded here from its file as the configs load it."""

import json
from pathlib import Path

import pytest

from cohtb.run.machines import config_module

topology = config_module("topology")


def test_every_file_loads_connected_with_a_symmetric_hop_matrix():
    assert topology.names() == ["complete-1s", "complete-2s", "complete-4s", "complete-8s", "glueless-8s",
                                "glueless-8s-nodes0-3"]
    for name in topology.names():
        t = topology.load(name)
        h = t.hops()
        assert all(h[a][b] == h[b][a] >= (a != b) for a in range(t.sockets) for b in range(t.sockets)), name
        assert all(h[a][a] == 0 for a in range(t.sockets))


@pytest.mark.parametrize("name, sockets", [("complete-1s", 1), ("complete-2s", 2), ("complete-4s", 4),
                                           ("complete-8s", 8)])
def test_complete_wirings_put_every_pair_one_hop_apart(name, sockets):
    t = topology.load(name)
    assert t.sockets == sockets
    assert {h for row in t.hops() for h in row} == ({0, 1} if sockets > 1 else {0})


def test_the_glueless_eight_socket_box_has_three_one_hop_and_four_two_hop_peers_each():
    t = topology.load("glueless-8s")
    for row in t.hops():
        assert sorted(row) == [0, 1, 1, 1, 2, 2, 2, 2]
    # The pairs ccbench's run_xeon.sh measured as one and two hops (docs/machine.md).
    assert t.hops()[0][1] == 1 and t.hops()[0][4] == 2


def test_four_nodes_of_the_glueless_box_keep_the_box_s_hop_counts():
    box, four = topology.load("glueless-8s").hops(), topology.load("glueless-8s-nodes0-3").hops()
    assert four == [row[:4] for row in box[:4]]


def test_the_record_names_the_wiring_and_its_digest():
    t = topology.load("glueless-8s")
    r = t.record()
    assert r["name"] == "glueless-8s" and len(r["digest"]) == 16 and r["hops"] == t.hops()
    assert json.loads(json.dumps(r)) == r


def write(tmp_path: Path, name: str, doc) -> Path:
    p = tmp_path / f"{name}.json"
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return p


GOOD = {"name": "t", "sockets": 3, "links": [[0, 1], [1, 2]], "source": "a test"}


@pytest.mark.parametrize("change, field", [
    ({"sockets": 0}, "'sockets'"),
    ({"sockets": "3"}, "'sockets'"),
    ({"name": "other"}, "'name'"),
    ({"links": [[0, 0], [1, 2]]}, "'links[0]'"),
    ({"links": [[0, 1], [1, 3]]}, "'links[1]'"),
    ({"links": [[0, 1], [1, 0]]}, "'links[1]'"),
    ({"links": [[0, 1, 2]]}, "'links[0]'"),
    ({"links": [[0, 1]]}, "'links': sockets [2] cannot be reached"),
    ({"source": None}, "'source'"),
])
def test_a_damaged_file_is_one_error_naming_file_and_field(tmp_path, change, field):
    path = write(tmp_path, "t", {**GOOD, **change})
    with pytest.raises(topology.TopologyError) as e:
        topology.load(str(path))
    assert str(e.value).startswith(f"{path}: ") and field in str(e.value)


def test_a_path_as_well_as_a_name_and_a_missing_or_broken_file(tmp_path):
    assert topology.load(str(write(tmp_path, "t", GOOD))).hops()[0] == [0, 1, 2]
    with pytest.raises(topology.TopologyError, match="cannot read .*topologies here: complete-1s"):
        topology.load("no-such-wiring")
    with pytest.raises(topology.TopologyError, match="not JSON"):
        topology.load(str(write(tmp_path, "t", "{")))
