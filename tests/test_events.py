"""The event file: round trip, and clear errors for every kind of bad input."""

from pathlib import Path

import pytest

from cohtb import cli
from cohtb.contract import L1State, contiguous_socket_map
from cohtb.trace import events as ev
from cohtb.errors import CohtbError


def header(cores=4, sockets=2):
    return ev.Header(64, cores, contiguous_socket_map(cores, sockets), {"from": "test"})


def write(path: Path, rows, h=None):
    with ev.EventWriter(path, h or header()) as w:
        w.write(ev.make_records(rows))
    return path


def test_round_trip(tmp_path):
    rows = [(10, 0x40, 0, 0, 1, L1State.IM), (20, 0x40, 3, 1, 0, L1State.IS), (30, 0x41, 2, 1, 5, L1State.S)]
    h, recs = ev.read_all(write(tmp_path / "a.events", rows))
    assert h.num_cores == 4 and h.num_sockets == 2 and h.source == {"from": "test"} and h.num_records == 3
    assert [tuple(int(r[k]) for k in ("tick", "line", "core", "socket", "kind", "l1_state")) for r in recs] == rows
    assert not recs["reserved"].any()


def test_l1_state_defaults_to_other(tmp_path):
    _, recs = ev.read_all(write(tmp_path / "a.events", [(10, 0x40, 0, 0, 1)]))
    assert recs["l1_state"].tolist() == [L1State.other]


def version_1_copy(path: Path) -> Path:
    """The same file with the header's version set to 1 (the layout of a version-1 file is the same size)."""
    data = bytearray(path.read_bytes())
    data[8:10] = (1).to_bytes(2, "little")
    path.write_bytes(bytes(data))
    return path


def test_version_1_file_is_read_as_legacy_issue_time_events(tmp_path):
    """Runs recorded before format 2 stay readable, marked as what they are; nothing writes format 1."""
    p = version_1_copy(write(tmp_path / "old.events", [(1, 2, 0, 0, 1)]))
    header, recs = ev.read_all(p)
    assert header.legacy and len(recs) == 1 and recs["l1_state"][0] == 0
    with pytest.raises(CohtbError, match="writes event format 2 only"):
        ev.EventWriter(tmp_path / "new.events", header)


def test_version_1_run_replays_with_its_check_marked_not_done(tmp_path, capsys):
    from run_fixtures import make_run

    run = make_run(tmp_path / "runs", "shared", 10, 1e-6, 3)
    version_1_copy(run / "events.cohtb")
    assert cli.main(["replay", str(run), "--out", str(tmp_path / "out")]) == 0
    assert "against gem5: not checked: event format 1: issue-time events" in capsys.readouterr().out


def test_unknown_version_is_refused_with_one_clear_line(tmp_path):
    p = write(tmp_path / "future.events", [(1, 2, 0, 0, 1)])
    data = bytearray(p.read_bytes())
    data[8:10] = (3).to_bytes(2, "little")
    p.write_bytes(bytes(data))
    with pytest.raises(CohtbError) as e:
        ev.read_all(p)
    assert str(e.value) == f"{p}: event format version 3, this cohtb reads 2 (and 1, the issue-time events of older runs)"


def test_truncated_file_is_an_error(tmp_path):
    p = write(tmp_path / "a.events", [(1, 2, 0, 0, 1)] * 10)
    p.write_bytes(p.read_bytes()[:-5])
    with pytest.raises(CohtbError, match="truncated or corrupt"):
        ev.read_all(p)


def test_foreign_file_is_an_error(tmp_path):
    p = tmp_path / "x.events"
    p.write_bytes(b"not an event file at all, no" * 4)
    with pytest.raises(CohtbError, match="not a cohtb event file"):
        ev.read_all(p)


@pytest.mark.parametrize("bad, why", [((1, 2, 9, 0, 1), "core 9"), ((1, 2, 0, 1, 1), "socket 1"), ((1, 2, 0, 0, 9), "kind 9"),
                                      ((1, 2, 0, 0, 1, len(L1State)), f"l1_state {len(L1State)}")])
def test_malformed_record_names_its_index(tmp_path, bad, why):
    with pytest.raises(CohtbError, match=f"record 1: malformed event.*{why}"):
        write(tmp_path / "a.events", [(1, 2, 0, 0, 1, 0), bad + (0,) * (6 - len(bad))])
    assert list(tmp_path.iterdir()) == [], "nothing half-written may be left behind"


def test_writer_leaves_nothing_on_failure(tmp_path):
    with pytest.raises(RuntimeError):
        with ev.EventWriter(tmp_path / "a.events", header()) as w:
            w.write(ev.make_records([(1, 2, 0, 0, 1)]))
            raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []


def test_bad_core_map_is_an_error():
    with pytest.raises(CohtbError, match=r"h: sockets must be numbered 0..2 with a core in each; none in \[1\]"):
        ev.Header(64, 2, [0, 2]).validate("h")


def test_random_streams_are_reproducible_and_carry_every_kind():
    from cohtb.contract import Kind
    from cohtb.verify import random_events

    h, a = random_events.random_stream(5000, cores=8, sockets=2, seed=7)
    _, b = random_events.random_stream(5000, cores=8, sockets=2, seed=7)
    assert (a == b).all() and h.num_cores == 8
    assert set(a["kind"].tolist()) == {int(k) for k in Kind}
    assert all(s in random_events._L1_STATES[Kind(k)] for k, s in zip(a["kind"].tolist(), a["l1_state"].tolist()))
    _, c = random_events.random_stream(5000, cores=8, sockets=2, seed=7, kinds=(Kind.READ, Kind.WRITE, Kind.EVICT))
    assert set(c["kind"].tolist()) == {Kind.READ, Kind.WRITE, Kind.EVICT}
