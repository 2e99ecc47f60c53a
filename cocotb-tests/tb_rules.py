"""Every counting rule (cohtb/monitor/counting_rules.toml) through the RTL: set the line up, snapshot, apply A's event, and
hold the counter deltas to the row (tests/test_counting_rules.py walks the same rows through both models).
The state the row leaves behind is seen through the probes of rule_table.PROBES, each from the state after
the row, whose counters must equal the bit-exact model's (which tests/test_counting_rules.py holds to the
row's state after, and shows that the probes tell every such state apart)."""

from __future__ import annotations

import cocotb

from cohtb import contract as ct
from cohtb.contract import Kind
from cohtb.monitor import rule_table
from monitor_bench import MonitorBench

LINE = 0x2A   # fits every variant's line-address width


async def fresh(tb: MonitorBench) -> None:
    await tb.command(ct.CMD_CLEAR_COUNTERS | ct.CMD_CLEAR_STATE)
    await tb.wait_idle()


@cocotb.test()
async def every_rule_row(dut):
    tb = MonitorBench(dut)
    await tb.reset()
    role = rule_table.roles(tb.socket_map)
    await tb.set_region(0, LINE, tb.p.line_mask)
    failures = []
    for rule in rule_table.load():
        setup = [(LINE, *role[who], kind) for who, kind in rule.setup]
        event = (LINE, *role["A"], rule.kind)
        await fresh(tb)
        await tb.send(setup)
        await tb.wait_idle()
        before = await tb.read_counters()
        await tb.send([event])
        await tb.wait_idle()
        after = await tb.read_counters()
        delta = {k: after.totals[k] - before.totals[k] for k in after.totals}
        region = {k: after.regions[0][k] - before.regions[0][k] for k in after.regions[0]}
        matrix = sum(map(sum, after.matrix)) - sum(map(sum, before.matrix))
        want = {"transfers": rule.transfer, "crossSocketTransfers": rule.cross_socket,
                "invalidations": rule.invalidations, "dirtyReadsLocal": int(rule.dirty_read == "local"),
                "dirtyReadsRemote": int(rule.dirty_read == "remote"), ct.KIND_COUNTERS[rule.kind]: 1}
        got = {k: delta[k] for k in want}
        # Per kind the regions count READ, WRITE and EVICT only (an INV is not an EVICT there).
        want_region = {"transfers": rule.transfer, "reads": int(rule.kind == Kind.READ),
                       "writes": int(rule.kind == Kind.WRITE), "evicts": int(rule.kind == Kind.EVICT)}
        got_region = {k: region[k] for k in want_region}
        if got != want or got_region != want_region or matrix != rule.transfer:
            failures.append(f"{rule.name}: want {want}, got {got} (region {got_region}, want {want_region}; "
                            f"matrix {matrix})")
        for probe, steps in rule_table.PROBES.items():
            await fresh(tb)
            model = tb.model()
            await tb.send(setup + [event] + [(LINE, *role[who], kind) for who, kind in steps], model)
            await tb.wait_idle()
            await tb.command(ct.CMD_SNAPSHOT)
            got = {k: await tb.read64(tb.rm.slot("global", k)) for k in rule_table.PROBE_COUNTERS}
            want = {k: model.c.totals[k] for k in rule_table.PROBE_COUNTERS}
            if got != want:
                failures.append(f"{rule.name}, then {probe}: the state after differs from the model's: "
                                f"want {want}, got {got}")
    assert not failures, "counting rules the RTL does not follow:\n" + "\n".join(failures)
