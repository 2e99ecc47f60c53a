"""FPGA readiness: the default monitor synthesizes with Yosys, without latches or simulation-only code."""

import json
from pathlib import Path

from cohtb.fpga import synth


def test_default_configuration_synthesizes(capsys):
    report = synth.synthesize("default")
    with capsys.disabled():
        print(f"\nsynthesis of the default monitor (xc7): {report.summary()}")
    assert report.luts > 1000 and report.flip_flops > 1000   # the counters alone are thousands of bits
    assert report.rams, "the line table should map to RAM cells, not flip-flops"


def test_simulation_only_constructs_are_found(tmp_path: Path):
    f = tmp_path / "x.sv"
    f.write_text("module x;\n`ifndef SYNTHESIS\n  initial $display(\"ok\");\n`endif\n  initial $display(\"bad\");\nendmodule\n")
    assert synth.simulation_only_constructs(f) == ['x.sv:5: initial $display("bad");']


def test_the_small_monitor_places_and_routes_on_ecp5_and_its_fmax_is_reported(tmp_path: Path, capsys):
    """The real flow (Yosys synth_ecp5, nextpnr-ecp5 on an LFE5U-85F) on the small variant: under a minute."""
    from cohtb.cli import main

    out = tmp_path / "ecp5.json"
    status = main(["synth", "--target", "ecp5", "--variant", "small", "--freq", "20", "--json", str(out),
                   "--keep", str(tmp_path / "work")])
    doc = json.loads(out.read_text())["reports"][0]
    with capsys.disabled():
        print(f"\nECP5 flow of the small monitor: Fmax {doc['fmax_mhz']:.1f} MHz, "
              f"{doc['utilization']['TRELLIS_COMB']['used']} TRELLIS_COMB")
    assert 20 < doc["fmax_mhz"] < 1000 and doc["meets"] and status == 0
    assert doc["speed"] == 6   # the slowest grade unless told otherwise
    assert doc["cells"]["LUT4"] > 500 and doc["cells"]["TRELLIS_FF"] > 500
    assert doc["utilization"]["TRELLIS_FF"]["used"] == doc["cells"]["TRELLIS_FF"]
    assert doc["critical_path"][0].startswith("from ") and "logic steps" in doc["critical_path"][2]
    # the same netlist against a constraint no ECP5 meets: reported, and the command fails
    from cohtb.fpga import ecp5
    fmax, _, _ = ecp5.parse_report(json.loads((tmp_path / "work" / "nextpnr-seed1.json").read_text()))
    report = ecp5.Ecp5Report("small", "85k", "CABGA381", 1000.0, 1, doc["cells"], {}, fmax)
    assert not report.meets and "MISSED" in report.summary()


def test_a_design_that_does_not_fit_fails_clearly(tmp_path: Path):
    """400 outputs on a part with 365 I/O sites: nextpnr refuses, and the flow says so in one line."""
    import subprocess

    import pytest

    from cohtb.errors import CohtbError
    from cohtb.fpga import ecp5

    (tmp_path / "wide.v").write_text("module wide(input clock, input d, output reg [399:0] q);\n"
                                     "  always @(posedge clock) q <= {q[398:0], d};\nendmodule\n")
    subprocess.run(["yosys", "-q", "-p", "synth_ecp5 -top wide -json wide.json", "wide.v"], cwd=tmp_path, check=True)
    with pytest.raises(CohtbError, match=r"could not place and route wide on LFE5U-85F \(CABGA381\): ERROR"):
        ecp5.route(tmp_path / "wide.json", 125, 1, "85k", "CABGA381")


def test_an_unknown_speed_grade_is_refused_before_synthesis():
    import pytest

    from cohtb.errors import CohtbError
    from cohtb.fpga import ecp5

    with pytest.raises(CohtbError, match=r"--speed 5: one of 6, 7, 8"):
        ecp5.place_and_route("small", speed=5, progress=lambda s: None)


def test_a_ram_marked_collision_dont_care_whose_read_register_yosys_did_not_take_is_refused():
    """The line table's RAMs are marked collision-don't-care only because the register after their read becomes the
    RAM's own (the collision is then with a write S3 forwards), and the counter bank's rows likewise; a log that
    says otherwise, or that lacks one of them, is caught."""
    def port(memory: str, what: str) -> str:
        return f"Checking read port `\\monitor.{memory}.Memory'[0] in module `\\CoherenceMonitorIoRing': {what}.\n"
    merged = (port("lineTable.wayRams_0_ext", "merging output FF to cell")
              + port("lineTable.replRam_ext", "merging output FF to cell")
              + port("matrix.rows_ext", "merging output FF to cell"))
    assert synth.collision_ports_checked(merged) == []
    address = merged.replace("merging output FF", "merging address FF", 1)
    assert synth.collision_ports_checked(address) == [
        "monitor.lineTable.wayRams_0_ext.Memory[0]: merging address FF to cell."]
    assert synth.collision_ports_checked(merged.splitlines()[0]) == ["no read port of replRam_* in the log",
                                                                    "no read port of rows_* in the log"]


def _synthesized_ram(tmp_path: Path, after_read: str, read: str = "q <= m[ra];") -> dict:
    """A 64 x 36 RAM whose read Yosys makes synchronous (`q` becomes the block RAM's own register; collisions
    don't care, as the line table's), then `after_read`, Verilog that uses q; Yosys synth_ecp5's JSON netlist."""
    import subprocess

    (tmp_path / "ram.v").write_text(
        "module ram(input clock, input en, input we, input [5:0] wa, input [5:0] ra, input [35:0] d,\n"
        "           output reg [35:0] q2, output [35:0] peek);\n"
        "  (* no_rw_check *) reg [35:0] m [0:63];\n  reg [35:0] q;\n"
        f"  always @(posedge clock) begin if (we) m[wa] <= d; {read} end\n"
        f"  {after_read}\nendmodule\n")
    subprocess.run(["yosys", "-q", "-p", "synth_ecp5 -top ram -json ram.json", "ram.v"], cwd=tmp_path, check=True)
    return json.loads((tmp_path / "ram.json").read_text())


def _cells(netlist: dict, kind: str) -> list[dict]:
    return [c for c in netlist["modules"]["ram"]["cells"].values() if c["type"] == kind]


def test_the_register_after_a_block_ram_read_becomes_its_output_register(tmp_path: Path):
    """The flow moves a plain register after a DP16KD's read into the RAM (REGMODE OUTREG): the same logic, the
    data leaving the RAM ~1 ns after the clock instead of ~6 (docs/monitor.md, "On an FPGA")."""
    from cohtb.fpga import ebr_outreg

    netlist = _synthesized_ram(tmp_path, "always @(posedge clock) q2 <= q;\n  assign peek = 0;")
    ram, = _cells(netlist, "DP16KD")
    flip_flops = len(_cells(netlist, "TRELLIS_FF"))
    q2 = netlist["modules"]["ram"]["ports"]["q2"]["bits"]
    assert [a.flip_flops for a in ebr_outreg.absorb(netlist)] == [36]
    assert len(_cells(netlist, "TRELLIS_FF")) == flip_flops - 36
    assert ram["parameters"]["REGMODE_A"] == ram["parameters"]["REGMODE_B"] == "OUTREG"
    assert ram["connections"]["OCEA"] == ram["connections"]["OCEB"] == ["1"]
    # the RAM now drives what the register drove: the output port q2, bit for bit
    driven = {b for port in ebr_outreg.DATA_OUTPUTS for b in ram["connections"].get(port, [])}
    assert set(q2) <= driven
    assert ebr_outreg.absorb(netlist) == []   # done once


def test_a_register_that_is_not_a_plain_copy_of_the_read_stays_in_the_fabric(tmp_path: Path):
    """An enable, a reset, a read that also goes elsewhere, or a RAM that does not read on every clock: the output
    register could not do the same, or might not."""
    from cohtb.fpga import ebr_outreg

    for after_read, read in (("always @(posedge clock) if (en) q2 <= q;\n  assign peek = 0;", "q <= m[ra];"),
                             ("always @(posedge clock) if (en) q2 <= 0; else q2 <= q;\n  assign peek = 0;", "q <= m[ra];"),
                             ("always @(posedge clock) q2 <= q;\n  assign peek = q;", "q <= m[ra];"),
                             ("always @(negedge clock) q2 <= q;\n  assign peek = 0;", "q <= m[ra];"),
                             ("always @(posedge clock) q2 <= q;\n  assign peek = 0;", "if (en) q <= m[ra];")):
        netlist = _synthesized_ram(tmp_path, after_read, read)
        before = json.dumps(netlist, sort_keys=True)
        assert ebr_outreg.absorb(netlist) == [], after_read
        assert json.dumps(netlist, sort_keys=True) == before, after_read
