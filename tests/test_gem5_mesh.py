"""The mesh machine on the real gem5 built with CHI (GEM5_CHI: c4's build; docs/gem5.md): it builds, and a
compare-and-exchange on a line another core holds modified costs more the farther its legs run over the mesh.
Skipped, with the reason, without that build; must pass with it. `make test-gem5` runs it with the other gem5
tests."""

import pytest

from cohtb.analysis.latency import mesh_cells
from cohtb.experiments.plans import mesh_calibration_plan
from cohtb.launch import launch
from cohtb.run import gem5
from cohtb.run.runs import load

MACHINE = "sapphire-rapids-1s-c1"


UNUSABLE = gem5.unusable(MACHINE)
pytestmark = [pytest.mark.gem5, pytest.mark.skipif(UNUSABLE is not None, reason=UNUSABLE or "")]


def test_a_modified_line_costs_more_the_farther_its_slice_sits(tmp_path):
    """The calibration plan's compare-and-exchange cells with the line's slice on tiles 8 and 63 (12 and 28 hops
    over the legs requester -> slice -> owner -> requester): the farther one costs more."""
    specs = [s for s in mesh_calibration_plan(MACHINE) if (s.policy, s.layout) == ("cas", "M")
             and s.extra[-1] in ("8", "63")]
    outcomes = launch(specs, tmp_path, jobs=1, timeout=3600)
    assert [o.status for o in outcomes] == ["done"] * 2, [o.error for o in outcomes]
    near, far = (mesh_cells(load(tmp_path / s.id))[0] for s in specs)
    assert (near.owner_tile, near.target_tile, near.home_tile, near.legs_hops) == (0, 48, 8, 12)
    assert (far.home_tile, far.legs_hops) == (63, 28) and near.median_cycles < far.median_cycles, (near, far)
