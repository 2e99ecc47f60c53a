"""Every row of docs/counting-rules.md through the RTL: set the line up, snapshot, apply A's event, and
hold the counter deltas to the row (tests/test_counting_rules.py walks the same rows through both models)."""

from __future__ import annotations

import cocotb

from cohtb import contract as ct
from cohtb.monitor import rule_table
from monitor_bench import MonitorBench

LINE = 0x2A   # fits every variant's line-address width


@cocotb.test()
async def every_rule_row(dut):
    tb = MonitorBench(dut)
    await tb.reset()
    role = rule_table.roles(tb.socket_map)
    await tb.set_region(0, LINE, tb.p.line_mask)
    failures = []
    for rule in rule_table.load():
        await tb.command(ct.CMD_CLEAR_COUNTERS | ct.CMD_CLEAR_STATE)
        await tb.wait_idle()
        await tb.send([(LINE, *role[who], kind) for who, kind in rule.setup])
        await tb.wait_idle()
        before = await tb.read_counters()
        await tb.send([(LINE, *role["A"], rule.kind)])
        await tb.wait_idle()
        after = await tb.read_counters()
        delta = {k: after.totals[k] - before.totals[k] for k in after.totals}
        region = {k: after.regions[0][k] - before.regions[0][k] for k in after.regions[0]}
        matrix = sum(map(sum, after.matrix)) - sum(map(sum, before.matrix))
        want = {"transfers": rule.transfer, "crossSocketTransfers": rule.cross_socket,
                "invalidations": rule.invalidations, "dirtyReadsLocal": int(rule.dirty_read == "local"),
                "dirtyReadsRemote": int(rule.dirty_read == "remote"), ct.KIND_COUNTERS[rule.kind]: 1}
        got = {k: delta[k] for k in want}
        if got != want or region["transfers"] != rule.transfer or matrix != rule.transfer:
            failures.append(f"{rule.name}: want {want}, got {got} (region transfers {region['transfers']}, matrix {matrix})")
    assert not failures, "rows of docs/counting-rules.md the RTL does not follow:\n" + "\n".join(failures)
