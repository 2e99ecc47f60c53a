"""pytest entry points of the RTL verification (cocotb 2 Python runner; Verilator and Icarus)."""

from __future__ import annotations

import pytest

VARIANTS = ["default", "small", "lru"]


@pytest.mark.parametrize("variant", VARIANTS)
def test_directed_verilator(rtl_sim, variant):
    rtl_sim("verilator", variant).run("tb_directed")


@pytest.mark.parametrize("variant", VARIANTS)
def test_directed_icarus(rtl_sim, variant):
    rtl_sim("icarus", variant).run("tb_directed")
