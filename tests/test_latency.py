"""cohtb latency: cclat runs (gem5 stood in for by tests/fake_gem5.py, which runs the workload natively) read
into cells at the distance the machine put their threads, beside a published part's figures."""

from pathlib import Path

import pytest

from cohtb import cli, launch
from cohtb.analysis.latency import LatencyCell, MeshCell, cells, mesh_legs
from cohtb.errors import CohtbError
from cohtb.report import latency
from cohtb.experiments import calibration
from cohtb.experiments.calibration import Part, parts
from cohtb.report.latency import distances_table, table
from cohtb.run.runs import discover
from cohtb.run.spec import RunSpec

FAKE = Path(__file__).with_name("fake_gem5.py")


def cclat(target: int, topology: str = "", home: int = 0, home_socket: int = 0) -> RunSpec:
    return RunSpec("cclat", "all", "M", 8, 1, 4, topology=topology, home_socket=home_socket,
                   extra=("--target", str(target), "--sharer", "1", "--interleave", "8", "--home", str(home)))


@pytest.fixture
def recorded(tmp_path, monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE))
    specs = [cclat(1), cclat(4, "glueless-8s"), cclat(1, "glueless-8s", home=4, home_socket=1)]
    outcomes = launch.launch(specs, tmp_path, jobs=2)
    assert [o.status for o in outcomes] == ["done"] * 3, [o.error for o in outcomes]
    return {s: discover([tmp_path / s.id])[0] for s in specs}


def test_cells_are_at_the_distance_of_their_threads_and_their_lines_home(recorded):
    flat, two_hops, homed = (cells(r) for r in recorded.values())
    assert [(c.state, c.operation) for c in flat] == [("M", o) for o in ("load", "store", "cas", "fai", "tas", "swap")]
    assert {(c.hops, c.home_hops) for c in flat} == {(1, 1)}          # 8x1, every pair one hop: core 1 is socket 1
    assert {(c.hops, c.home_hops) for c in two_hops} == {(2, 2)}      # glueless: sockets 0 and 4 are two hops
    assert {(c.hops, c.home_hops) for c in homed} == {(1, 2)}         # home 4 rotated by 1: socket 5, two from 1
    assert all(c.n == 4 and c.clock_ghz == 3.0 and c.p10_cycles <= c.median_cycles <= c.p90_cycles for c in flat)


def test_the_table_puts_the_published_figure_beside_each_cell_it_has(recorded):
    [run] = [r for s, r in recorded.items() if s.topology and not s.home_socket]
    part = parts()["westmere-ex-8s"]
    t = table(cells(run), part)
    load = next(r for r in t.rows if r[:3] == ["M", "load", "2"])
    assert load[8] == f"{400 / 2.13:.1f}" and float(load[9]) == pytest.approx(float(load[4]) / (400 / 2.13), abs=0.01)
    assert float(load[6]) > 0   # the mean beside the median: the published figures are means
    swap = next(r for r in t.rows if r[:3] == ["M", "swap", "2"])
    assert swap[8] == f"{430 / 2.13:.1f}*"   # the paper's one row for every atomic: marked, and said in the note
    assert t.note.count("the paper gives one 'all' row for CAS, FAI, TAS and SWAP") == 1   # each reason said once
    assert "M swap 2 hops" in t.note.split("one 'all' row")[1]                             # with its cells
    assert "Westmere-EX" in t.note
    other = table(cells(run), parts()["haswell-ep-2s"])   # publishes an M load only
    swap = next(r for r in other.rows if r[:3] == ["M", "swap", "2"])
    assert swap[8] == swap[9] == ""                                   # no published figure: none made up


def test_the_command_prints_the_table_and_refuses_an_unknown_part(recorded, capsys):
    run = next(iter(recorded.values()))
    assert cli.main(["latency", str(run.path), "--part", "westmere-ex-8s"]) == 0
    assert "published ns" in capsys.readouterr().out
    assert cli.main(["latency", str(run.path), "--part", "pentium"]) == 2
    err = capsys.readouterr().err
    assert "not a published part" in err and "Traceback" not in err


def test_a_run_of_another_workload_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("GEM5", str(FAKE))
    spec = RunSpec("lockref", "locked", "split", 2, 2, 50)
    launch.launch([spec], tmp_path, jobs=1)
    with pytest.raises(CohtbError, match="not a cclat run"):
        cells(discover([tmp_path / spec.id])[0])


@pytest.mark.parametrize("cell", ['{ state = "M", operation = "load", hops = 0 }',
                                  '{ state = "M", operation = "load", hops = 0, cycles = 10 }',
                                  '{ state = "M", hops = 0, ns = 10 }'])
def test_a_damaged_hardware_file_names_the_field(tmp_path, cell):
    bad = tmp_path / "hw.toml"
    bad.write_text(f'[p]\npart = "x"\nsource = "s"\ncells = [{cell}]\n')
    with pytest.raises(CohtbError, match=r"hw.toml: field 'p.cells.0"):
        parts(bad)


def test_an_untraced_run_has_no_events_and_still_gives_its_cells(tmp_path, monkeypatch):
    """The calibration plan runs gem5 without ProtocolTrace (cclat times itself): the run is recorded with no event
    file, bundles, gives its cells, and anything that wants its events says it has none."""
    monkeypatch.setenv("GEM5", str(FAKE))
    spec = RunSpec(**{**cclat(1).to_json(), "extra": cclat(1).extra, "traced": False})
    assert spec.id.endswith("-untraced")
    [outcome] = launch.launch([spec], tmp_path / "runs", jobs=1)
    assert outcome.status == "done", outcome.error
    [run] = discover([tmp_path / "runs" / spec.id])
    assert "--no-trace" in run.manifest.gem5.command and not any(a.startswith("--debug-file") for a in run.manifest.gem5.command)
    assert run.manifest.files.events is None and run.manifest.ingest == {"traced": False}
    assert not (run.path / "events.cohtb").exists()
    assert [c.hops for c in cells(run)] and {c.hops for c in cells(run)} == {1}   # 8x1: core 1 is one socket over
    with pytest.raises(CohtbError, match="untraced run"):
        run.events()
    assert cli.main(["bundle", str(run.path), "--into", str(tmp_path / "bundled")]) == 0
    [bundled] = discover([tmp_path / "bundled" / spec.id])
    assert cells(bundled) == cells(run)


def test_the_distances_table_counts_cells_within_the_tolerance_and_names_rows_out_of_order():
    def cell(op, hops, cycles):
        return LatencyCell("M", op, hops, hops, 50, cycles, cycles, cycles, 1.0, "r")

    part = Part("p", "a part", "a source", {("M", "load", 0): 100.0, ("M", "load", 1): 200.0,
                                            ("M", "store", 0): 100.0}, {})
    t = distances_table([cell("load", 0, 110), cell("load", 1, 300), cell("store", 0, 90), cell("store", 1, 80)],
                        part, "t")
    assert t.rows == [["M", "load", "110 / 100 (1.10)", "300 / 200 (1.50)"], ["M", "store", "90 / 100 (0.90)", "80"]]
    assert "2 of 3 published cells within 25%" in t.note and "not M store" in t.note


def test_the_additive_model_predicts_from_the_calibration_cells_alone_and_loses_or_wins_per_cell():
    """A model with no simulator (a cell's same-socket time of its kind plus the M load's hop increment) beside the
    simulation, on the cells the calibration was not solved from; the fitted cells cannot tell the two apart."""
    fitted = {("S", "load", 0): 20.0, ("M", "load", 0): 50.0, ("M", "load", 1): 130.0, ("I", "load", 0): 160.0}
    published = {**fitted, ("S", "load", 1): 110.0, ("M", "store", 1): 150.0, ("I", "load", 1): 230.0,
                 ("E", "load", 0): 40.0}
    part = Part("p", "a part", "a source", published, {}, frozenset(fitted))
    model = calibration.additive(part)
    assert model[("S", "load", 1)] == 20 + 80 and model[("M", "store", 1)] == 50 + 80
    assert model[("I", "load", 1)] == 160 + 80 and model[("E", "load", 0)] == 50
    assert calibration.additive(Part("p", "a part", "", published, {})) == {}   # no calibration cells named: no model

    def cell(state, op, hops, ns):
        return LatencyCell(state, op, hops, hops, 50, ns, ns, ns, 1.0, "r")

    measured = [cell("S", "load", 0, 20), cell("S", "load", 1, 110), cell("M", "store", 1, 120),
                cell("E", "load", 0, 41), cell("I", "load", 1, 220)]
    t = latency.discrimination_table(measured, part, "t")
    assert [r[:3] + [r[-1]] for r in t.rows] == [["E", "load", "0", "simulation"],
                                                  ["M", "store", "1", "additive model"],
                                                  ["S", "load", "1", "simulation"], ["I", "load", "1", "tie"]]
    assert "the simulation in 2, the additive model in 1, a tie (within 1%) in 1" in t.note
    assert "additive model, no simulator" in distances_table(measured, part, "t").note


def test_calibration_cells_that_are_not_cells_of_the_part_are_refused(tmp_path):
    bad = tmp_path / "hw.toml"
    bad.write_text('[p]\npart = "x"\nsource = "s"\ncells = [{ state = "M", operation = "load", hops = 0, ns = 50 }]\n'
                   'calibrated_on = [{ state = "S", operation = "load", hops = 0 }]\n')
    with pytest.raises(CohtbError, match=r"hw.toml: field 'p.calibrated_on'"):
        parts(bad)


def test_the_mesh_part_gives_every_figure_in_ns_from_its_source():
    part = calibration.mesh_parts()["sapphire-rapids-1s"]
    assert set(part.ns) == set(calibration.MESH_FIGURES)
    assert part.ns["l2-load"] == pytest.approx(16 / 3.8) and part.ns["c2c-worst"] == 81
    assert all(part.sources[f] for f in part.ns)


@pytest.mark.parametrize("figure, error", [
    ('figure = "l4-load"\ncycles = 5', r"field 'p.figures.0.figure'"),            # no such figure
    ('figure = "l2-load"\ncycles = 16\nns = 4.2', r"field 'p.figures.0': l2-load needs cycles or ns"),
    ('figure = "l2-load"', r"field 'p.figures.0': l2-load needs cycles or ns"),
    ('figure = "l2-load"\ncycles = "16"', r"field 'p.figures.0.cycles'"),           # a number as text
])
def test_a_damaged_mesh_part_names_the_field(tmp_path, figure, error):
    bad = tmp_path / "mesh.toml"
    bad.write_text(f'[p]\npart = "x"\nclock_ghz = 3.8\n\n[[p.figures]]\n{figure}\nsource = "s"\n')
    with pytest.raises(CohtbError, match=r"mesh.toml: " + error):
        calibration.mesh_parts(bad)


def test_a_mesh_figure_given_twice_or_calibrated_on_a_figure_it_lacks_is_refused(tmp_path):
    bad = tmp_path / "mesh.toml"
    one = '[[p.figures]]\nfigure = "l2-load"\ncycles = 16\nsource = "s"\n'
    bad.write_text('[p]\npart = "x"\nclock_ghz = 3.8\n\n' + one + one)
    with pytest.raises(CohtbError, match=r"field 'p.figures.1': l2-load given twice"):
        calibration.mesh_parts(bad)
    bad.write_text('[p]\npart = "x"\nclock_ghz = 3.8\ncalibrated_on = ["l3-load"]\n\n' + one)
    with pytest.raises(CohtbError, match=r"field 'p.calibrated_on'"):
        calibration.mesh_parts(bad)


def test_a_mesh_operations_legs_run_through_its_slice_and_the_memory_controller():
    """On an 8-column mesh, target on tile 48 (row 6), owner on tile 0, the line's slice on tile 63 (row 7, column
    7): a compare-and-exchange on M runs 8 + 14 + 6 hops, a load of S 2 x 8, a load of I 8 + 14 + 6 (memory on
    tile 0); a store of E is not one of the kinds read, nor is any cell whose slice is unknown."""
    assert mesh_legs("M", "cas", 48, 0, 63, 8) == 28
    assert mesh_legs("S", "load", 48, 0, 63, 8) == 16
    assert mesh_legs("I", "load", 48, 0, 63, 8) == 28
    assert mesh_legs("E", "store", 48, 0, 63, 8) is None and mesh_legs("M", "cas", 48, 0, None, 8) is None


def _mesh_cell(state, op, hops, cycles):
    return MeshCell(state, op, 0, 48, 8, hops, 50, cycles, cycles, 3.8, "r")


def test_a_kinds_cells_read_as_a_fixed_cost_and_a_cost_per_hop_give_the_parts_figures_over_its_mesh():
    fit = calibration.mesh_fit([_mesh_cell("M", "cas", h, 113 + 7 * h) for h in (12, 20, 28)])
    assert (fit.fixed_cycles, fit.cycles_per_hop, fit.worst_residual_cycles, fit.cells) == \
        pytest.approx((113, 7, 0, 3))
    assert calibration.mesh_fit([_mesh_cell("M", "cas", 12, 197)]) is None   # one distance: no line
    hops = calibration.mesh_hops_over_part(8, 64)
    assert hops == pytest.approx({"c2c-mean": 15.8333, "c2c-worst": 28, "l3-load": 10.5, "memory-load": 19.25},
                                 abs=1e-3)
    ns = calibration.mesh_figures([fit], hops, 16.0, 3.8)
    assert ns == pytest.approx({"c2c-mean": (113 + 7 * 15.8333) / 3.8, "c2c-worst": (113 + 7 * 28) / 3.8,
                                "l2-load": 16 / 3.8}, abs=1e-3)


def test_the_l2_load_is_the_chase_at_its_l2_footprint_less_its_loop():
    assert calibration.l2_load_cycles({32: 18.0, 512: 29.0}, 5) == 16.0
    assert calibration.l2_load_cycles({32: 18.0}, 5) is None
