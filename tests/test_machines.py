"""Machine files (gem5-configs/multisocket/machines/*.json): every kept file reads, names its hierarchy and says
where each of its parameters comes from; a damaged one is refused in one line naming the file and the field; a
run finds its gem5 build by its machine's hierarchy."""

import json

import pytest

from cohtb.errors import CohtbError
from cohtb.experiments.plans import PLANS
from cohtb.run import gem5, machines
from cohtb.run.spec import RunSpec

GOOD = {"name": "m", "hierarchy": "socket", "description": "a test machine",
        "params": {"clock": "2.13GHz", "socket_latency": 60}, "sources": {"clock": "a part's data sheet",
                                                                           "socket_latency": "a latency table"}}


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.setattr(machines.machine_file, "DIRECTORY", tmp_path)
    return tmp_path


def write(directory, name, doc):
    (directory / f"{name}.json").write_text(json.dumps({**doc, "name": name}))


@pytest.mark.parametrize("name", machines.machine_file.names())
def test_every_kept_machine_file_reads_and_sources_every_parameter(name):
    m = machines.machine_file.load(name)
    assert m.hierarchy in machines.HIERARCHIES and set(m.params) <= set(m.sources)
    assert m.params or name == m.hierarchy   # only a hierarchy's own file keeps every default


def test_a_machine_file_s_build_and_declared_names_leave_its_digest_alone(files):
    """The digest a run's manifest keeps is of what gem5 simulates: adding how gem5 is built for the machine, or the
    names the declarations give it, does not make its runs look like another machine's."""
    (files / "m.json").write_text(json.dumps({**GOOD, "name": "m"}, indent=1) + "\n")
    bare = machines.machine_file.load("m").digest
    (files / "m.json").write_text(json.dumps({**GOOD, "name": "m", "gem5_patches": ["chi-locked-rmw"],
                                              "gem5_patches_why": "a reason", "declared_as": {"x": {"about": "a"}}},
                                             indent=1) + "\n")
    built = machines.machine_file.load("m")
    assert built.digest == bare and built.gem5_patches == ("chi-locked-rmw",) and built.declared_as["x"]["about"] == "a"
    (files / "m.json").write_text(json.dumps({**GOOD, "name": "m", "description": "another"}, indent=1) + "\n")
    assert machines.machine_file.load("m").digest != bare


def test_a_machine_is_a_hierarchy_or_a_file(files, monkeypatch):
    write(files, "m", GOOD)
    assert machines.known() == ["flat", "socket", "mesh", "m"]
    assert [machines.hierarchy_of(n) for n in ("flat", "socket", "m")] == ["flat", "socket", "socket"]
    spec = RunSpec("atomicity", "xadd", "line", 2, 2, 10, machine="m")
    spec.check()
    assert "-mmachine" in spec.id and spec.machine_args()[:2] == ["--machine", "m"]
    monkeypatch.setenv("GEM5_CHI", "/nonexistent/gem5.opt")
    assert "GEM5_CHI=/nonexistent/gem5.opt" in gem5.why_missing("m")   # its hierarchy's build


@pytest.mark.parametrize("damage, field", [
    (lambda d: d.update(hierarchy="ring"), "hierarchy"),
    (lambda d: d["params"].update(socket_latency="sixty"), "params.socket_latency"),
    (lambda d: d["params"].update(socket_latency=-1), "params.socket_latency"),
    (lambda d: d["params"].update(speed=3), "params.speed"),
    (lambda d: d["params"].update(l1_dirty_shared="no"), "params.l1_dirty_shared"),
    (lambda d: d["params"].update(home_latency=True), "params.home_latency"),
    (lambda d: d["sources"].pop("clock"), "sources.clock"),
    (lambda d: d.pop("description"), "description"),
    (lambda d: d.update(patches=["chi-locked-rmw"]), "patches"),
    (lambda d: d.update(gem5_patches="chi-locked-rmw"), "gem5_patches"),
    (lambda d: d.update(gem5_patches=["chi-locked-rmw"]), "gem5_patches_why"),
    (lambda d: d.update(declared_as=["x"]), "declared_as"),
])
def test_a_damaged_machine_file_names_the_file_and_the_field(files, damage, field):
    doc = json.loads(json.dumps(GOOD))
    damage(doc)
    write(files, "m", doc)
    with pytest.raises(CohtbError) as e:
        machines.hierarchy_of("m")
    assert str(files / "m.json") in str(e.value) and f"field '{field}'" in str(e.value)
    assert "\n" not in str(e.value)


def test_a_file_whose_name_is_not_its_own_is_refused(files):
    (files / "m.json").write_text(json.dumps({**GOOD, "name": "other"}))
    with pytest.raises(CohtbError, match="field 'name'"):
        machines.hierarchy_of("m")


def test_an_unknown_machine_names_the_known_ones(files):
    with pytest.raises(CohtbError, match="unknown machine 'ring' \\(known: flat, socket, mesh\\)"):
        RunSpec("atomicity", "xadd", "line", 2, 2, 10, machine="ring").check()


def test_a_yes_no_parameter_takes_only_a_boolean(files):
    doc = json.loads(json.dumps(GOOD))
    doc["params"]["l1_dirty_shared"], doc["sources"]["l1_dirty_shared"] = False, "the part's cores (MESIF)"
    write(files, "m", doc)
    assert machines.machine_file.load("m").params["l1_dirty_shared"] is False


def test_a_live_ingest_knows_the_socket_machines_l1d_versions(files):
    """CHI names its controllers by number only; a live run's ingest starts before gem5 has made them, so it takes
    socket_chi.py's numbering rule (placement.py): homes, socket caches, then each core's L1D and L1I."""
    write(files, "m", GOOD)
    assert machines.l1d_versions("socket", 4, 2) == machines.l1d_versions("m", 4, 2) == [4, 6, 8, 10]
    assert machines.l1d_versions("flat", 4, 2) is None


def test_the_mesh_machine_joins_each_tile_to_its_grid_neighbours_and_numbers_its_l1ds_after_slices_and_l2s():
    placement = machines.placement
    # 5 tiles on rows of 2: 0-1 / 2-3 / 4; vertical links weigh more, so routes go X first
    assert placement.mesh_neighbours(5, 2) == [(0, 1, 1), (0, 2, 2), (1, 3, 2), (2, 3, 1), (2, 4, 2)]
    assert placement.mesh_neighbours(4, 1) == [(0, 1, 2), (1, 2, 2), (2, 3, 2)]
    assert [placement.mesh_tile_of_slice(j, 16, 20) for j in (0, 1, 4, 15)] == [0, 1, 5, 18]
    # 20 cores over 64 tiles (8 rows of 8): every row holds two or three, from the first tile to the last row
    tiles = [placement.mesh_tile_of_core(c, 20, 64) for c in range(20)]
    assert tiles[:4] == [0, 3, 6, 9] and tiles[-1] == 60 and len(set(tiles)) == 20
    assert sorted({t // 8 for t in tiles}) == list(range(8))
    assert [placement.mesh_tile_of_core(c, 16, 16) for c in range(16)] == list(range(16))   # a full mesh: tile i
    # 16 slices, then 20 L2s, then each core's L1D and L1I; the socket machine: 2 per socket, then L1D and L1I
    assert [placement.chi_l1d_version(c, "mesh", 1, 20, 16) for c in (0, 1, 19)] == [36, 38, 74]
    assert [placement.chi_l1d_version(c, "socket", 2, 4) for c in (0, 3)] == [4, 10]
    with pytest.raises(ValueError):
        placement.chi_l1d_version(0, "flat", 1, 4)


def test_a_live_ingest_names_the_mesh_machines_cores_by_their_l1ds_after_its_slices_and_l2s():
    # the bare mesh: 16 slices (machine_file.DEFAULTS), then 4 L2s, then each core's L1D and L1I
    assert machines.l1d_versions("mesh", 4, 1) == [20, 22, 24, 26]
    assert machines.l1d_versions("socket", 4, 2) == [4, 6, 8, 10]
    assert machines.l1d_versions("flat", 4, 2) is None


@pytest.mark.parametrize("sockets, error", [(2, "the mesh machine is one socket")])
def test_a_mesh_run_of_more_than_one_socket_is_refused_before_gem5(sockets, error):
    with pytest.raises(CohtbError, match=error):
        RunSpec("atomicity", "xadd", "line", sockets, 2, 10, machine="mesh").check()
    RunSpec("atomicity", "xadd", "line", 1, 2, 10, machine="mesh").check()


@pytest.mark.parametrize("params, error", [({"llc_slices": 12}, "--llc-slices 12: "), ({"mesh_columns": 0}, "--mesh-columns 0"),
                                           ({"l2_size": "1000KiB"}, "--l2-size 1000KiB"), ({"l2_size": "1MB"}, "--l2-size 1MB")])
def test_a_mesh_machine_that_cannot_be_built_says_which_parameter(params, error):
    given = {**machines.machine_file.DEFAULTS, **params}
    assert error in machines.machine_file.shape_problem("mesh", 1, given)
    assert machines.machine_file.shape_problem("mesh", 1, machines.machine_file.DEFAULTS) == ""
    assert machines.machine_file.shape_problem("socket", 2, given) == ""


@pytest.mark.parametrize("hierarchy, sockets", [("flat", 2), ("socket", 2), ("mesh", 1)])
def test_an_l1d_whose_sets_are_no_power_of_two_is_refused_on_every_machine(hierarchy, sockets):
    """gem5 indexes a cache's sets by address bits: 48 KiB of 8 ways (96 sets) would silently use 64 of them."""
    given = {**machines.machine_file.DEFAULTS, "l1d_size": "48KiB"}
    assert "--l1d-size 48KiB --l1d-assoc 8: " in machines.machine_file.shape_problem(hierarchy, sockets, given)
    assert machines.machine_file.shape_problem(hierarchy, sockets, {**given, "l1d_assoc": 12}) == ""   # 64 sets
    assert "--l1i-size 48KiB ways 8: " in machines.machine_file.shape_problem(hierarchy, sockets, {
        **given, "l1d_assoc": 12, "l1i_size": "48KiB"})   # the L1I's 8 ways are not a parameter
    assert machines.machine_file.shape_problem(hierarchy, sockets, {**given, "l1d_size": "48KB"}) == (
        "--l1d-size 48KB: a size in KiB, MiB or GiB")



def test_a_machines_check_plans_run_on_its_own_core_model():
    """An o3 machine's SE checks run on o3 cores (an SE run's --cpu must be its machine's core); a timing one's on
    timing cores."""
    for plan in ("contention", "atomicity", "calibration"):
        assert {s.cpu for s in PLANS[f"{plan}-westmere-ex-8s-c4-o3"]()} == {"o3"}
        assert {s.cpu for s in PLANS[f"{plan}-westmere-ex-8s-c4"]()} == {"timing"}


def test_a_mesh_machines_calibration_measures_each_kind_of_cell_at_three_distances_and_the_chase_per_level():
    """calibration-<mesh machine>: cclat's compare-and-exchange on M, load of S and load of I, each with the line's
    slice at three tiles (three hop counts, so a fixed cost and a cost per hop can be read off), and the chase at an
    L1- and an L2-resident footprint; a socket machine's calibration stays cclat by socket hops."""
    specs = PLANS["calibration-sapphire-rapids-1s-c1"]()
    cells = [s for s in specs if s.workload == "cclat"]
    homes: dict[tuple, set] = {}
    for s in cells:
        homes.setdefault((s.policy, s.layout), set()).add(s.extra[s.extra.index("--home") + 1])
    assert {k: len(v) for k, v in homes.items()} == {("cas", "M"): 3, ("load", "S"): 3, ("load", "I"): 3}
    assert sorted(s.extra for s in specs if s.workload == "chase") == [("--kib", "32"), ("--kib", "512")]
    assert {(s.sockets, s.machine, s.traced) for s in specs} == {(1, "sapphire-rapids-1s-c1", False)}
    assert {s.workload for s in PLANS["calibration-westmere-ex-8s-c4"]()} == {"cclat"}
