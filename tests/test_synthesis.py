"""FPGA readiness: the default monitor synthesizes with Yosys, without latches or simulation-only code."""

from pathlib import Path

from cohtb.monitor import synth


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
