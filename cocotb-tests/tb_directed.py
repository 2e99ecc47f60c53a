"""Directed scenarios: each states its expected counts by hand, then also holds the RTL to the model."""

from __future__ import annotations

import json
import os

import cocotb
from cocotb.triggers import RisingEdge

from cohtb import contract as ct
from cohtb.contract import Kind, contiguous_socket_map
from cohtb.monitor.config import MonitorParams
from cohtb.monitor.counters import HotEntry
from monitor_bench import CsrError, MonitorBench

R, W, E = int(Kind.READ), int(Kind.WRITE), int(Kind.EVICT)
P = MonitorParams(**json.load(open(os.environ["COHTB_MONITOR_JSON"]))["params"])
LINE = 0x2A  # an arbitrary line address that fits every variant


SOCKET_OF = contiguous_socket_map(P.cores, P.sockets)


def two_cores(cross_socket: bool) -> tuple[int, int]:
    """Core 0 and a core in the same socket, or in the last socket."""
    same = [c for c in range(1, P.cores) if SOCKET_OF[c] == SOCKET_OF[0]]
    return (0, P.cores - 1) if cross_socket else (0, same[0] if same else 0)


async def bench(dut) -> MonitorBench:
    tb = MonitorBench(dut)
    await tb.reset()
    return tb


@cocotb.test()
async def ping_pong_one_line_same_socket(dut):
    tb = await bench(dut)
    a, b = two_cores(cross_socket=False)
    n = 40
    model = tb.model()
    await tb.send([(LINE, (a, b)[i % 2], tb.socket_of((a, b)[i % 2]), W) for i in range(n)], model)
    got = await tb.check_against(model, "ping-pong")
    assert got.totals["transfers"] == n - 1
    assert got.totals["crossSocketTransfers"] == 0
    assert got.totals["invalidations"] == n - 1  # the old owner's copy each time
    assert got.matrix[tb.socket_of(a)][tb.socket_of(a)] == n - 1
    assert got.hot[0] == HotEntry(line=LINE, count=n - 1, error=0, valid=1)


@cocotb.test()
async def ping_pong_across_sockets(dut):
    tb = await bench(dut)
    a, b = two_cores(cross_socket=True)
    sa, sb = tb.socket_of(a), tb.socket_of(b)
    assert sa != sb
    n = 41
    model = tb.model()
    await tb.send([(LINE, (a, b)[i % 2], (sa, sb)[i % 2], W) for i in range(n)], model)
    got = await tb.check_against(model, "cross-socket ping-pong")
    assert got.totals["transfers"] == n - 1
    assert got.totals["crossSocketTransfers"] == n - 1
    assert got.matrix[sa][sb] == n // 2 and got.matrix[sb][sa] == n // 2


@cocotb.test()
async def false_sharing_two_fields_one_line(dut):
    """Two fields written by different cores: on one line they ping-pong, on two lines they do not.
    Each field has its own address region, so the per-field numbers show it."""
    tb = await bench(dut)
    a, b = two_cores(cross_socket=True)
    model = tb.model()
    full = (1 << P.lineAddrBits) - 1
    shared_line, split_a, split_b = 0x100, 0x200, 0x201
    await tb.set_region(0, shared_line, full, model)        # both fields, shared layout
    if P.regions > 1:
        await tb.set_region(1, split_a, full, model)        # field a, split layout
    n = 30
    evs = [(shared_line, (a, b)[i % 2], tb.socket_of((a, b)[i % 2]), W) for i in range(n)]
    evs += [((split_a, split_b)[i % 2], (a, b)[i % 2], tb.socket_of((a, b)[i % 2]), W) for i in range(n)]
    await tb.send(evs, model)
    got = await tb.check_against(model, "false sharing")
    assert got.regions[0]["transfers"] == n - 1
    assert got.regions[0]["writes"] == n
    if P.regions > 1:
        assert got.regions[1]["transfers"] == 0 and got.regions[1]["writes"] == n // 2
    assert got.totals["transfers"] == n - 1


@cocotb.test()
async def readers_after_a_writer(dut):
    tb = await bench(dut)
    model = tb.model()
    writer = 0
    readers = [c for c in range(1, min(P.cores, 4))]
    evs = [(LINE, writer, tb.socket_of(writer), W)]
    evs += [(LINE, c, tb.socket_of(c), R) for c in readers]
    evs += [(LINE, writer, tb.socket_of(writer), W)]     # upgrade: no transfer, invalidate the readers
    await tb.send(evs, model)
    got = await tb.check_against(model, "readers")
    first_remote = tb.socket_of(readers[0]) != tb.socket_of(writer)
    assert got.totals["dirtyReadsRemote"] == int(first_remote)
    assert got.totals["dirtyReadsLocal"] == int(not first_remote)   # only the first read finds it dirty
    assert got.totals["transfers"] == 0
    assert got.totals["invalidations"] == len(readers)


@cocotb.test()
async def eviction_forgets_the_owner(dut):
    tb = await bench(dut)
    model = tb.model()
    a, b = two_cores(cross_socket=True)
    evs = [(LINE, a, tb.socket_of(a), W), (LINE, a, tb.socket_of(a), E), (LINE, b, tb.socket_of(b), W),
           (LINE, b, tb.socket_of(b), E), (LINE, a, tb.socket_of(a), R)]
    await tb.send(evs, model)
    got = await tb.check_against(model, "eviction")
    assert got.totals["transfers"] == 0
    assert got.totals["dirtyReadsLocal"] + got.totals["dirtyReadsRemote"] == 0
    assert got.totals["eventsEvict"] == 2


@cocotb.test()
async def table_replacement_under_pressure(dut):
    """More lines in one set than ways: the victim's state is lost, and the bounded count misses a transfer."""
    tb = await bench(dut)
    model = tb.model()
    a, b = two_cores(cross_socket=False)
    same_set = [line for line in range(1 << min(P.lineAddrBits, 16)) if P.set_index(line) == P.set_index(LINE)]
    others = [x for x in same_set if x != LINE][:P.ways]
    evs = [(LINE, a, tb.socket_of(a), W)] + [(x, a, tb.socket_of(a), W) for x in others] + [(LINE, b, tb.socket_of(b), W)]
    await tb.send(evs, model)
    got = await tb.check_against(model, "pressure")
    assert got.totals["stateEvictions"] >= 1
    assert got.totals["transfers"] == 0   # the ideal count would say 1


def same_set_lines(n: int) -> list[int]:
    return [line for line in range(1 << min(P.lineAddrBits, 16)) if P.set_index(line) == P.set_index(LINE)][:n]


async def probe_tracked(tb: MonitorBench, model, prober: int, tracked: list[int], forgotten: int) -> None:
    """Whether the table still holds a line, seen through the counters: a WRITE by `prober` to a line the table
    holds (written by another core) is a transfer, to a forgotten line none. The held lines are probed first (hits do not
    allocate); the forgotten one last."""
    for line in tracked:
        before = (await tb.check_against(model, f"before probing {line:#x}")).totals["transfers"]
        await tb.send([(line, prober, tb.socket_of(prober), W)], model)
        after = (await tb.check_against(model, f"probing {line:#x}")).totals["transfers"]
        assert after == before + 1, f"line {line:#x} was forgotten"
    before = (await tb.check_against(model, "before the last probe")).totals["transfers"]
    await tb.send([(forgotten, prober, tb.socket_of(prober), W)], model)
    assert (await tb.check_against(model, "last probe")).totals["transfers"] == before, f"line {forgotten:#x} was kept"


@cocotb.test(skip=P.replacement != "roundrobin")
async def round_robin_victims_by_hand(dut):
    """ways+1 lines of one set: the last replaces way 0; then the first again replaces way 1 (the pointer moved on)."""
    tb = await bench(dut)
    model = tb.model()
    a, b = two_cores(cross_socket=False)
    s = same_set_lines(P.ways + 1)
    await tb.send([(x, a, tb.socket_of(a), W) for x in s + [s[0]]], model)
    got = await tb.check_against(model, "round robin")
    assert got.totals["stateEvictions"] == 2
    await probe_tracked(tb, model, b, [s[0], *s[2:]], forgotten=s[1])


@cocotb.test(skip=P.replacement != "lru")
async def lru_victim_and_evict_does_not_touch_ages(dut):
    """s1 held by two cores, the other ways written after it; an EVICT of s1 that keeps the line must leave s1 the
    oldest, so the next line replaces s1."""
    tb = await bench(dut)
    model = tb.model()
    a, b = two_cores(cross_socket=False)
    s = same_set_lines(P.ways + 1)
    evs = [(s[0], a, tb.socket_of(a), W), (s[0], b, tb.socket_of(b), R)]
    evs += [(x, a, tb.socket_of(a), W) for x in s[1:P.ways]]
    evs += [(s[0], b, tb.socket_of(b), E), (s[P.ways], a, tb.socket_of(a), W)]
    await tb.send(evs, model)
    got = await tb.check_against(model, "lru")
    assert got.totals["stateEvictions"] == 1
    await probe_tracked(tb, model, b, s[1:], forgotten=s[0])


@cocotb.test(skip=P.indexing != "xorfold" or P.sets < 16 or P.ways != 4)
async def xorfold_folds_distant_lines_into_one_set(dut):
    """0x01, 0x10, 0x23, 0x32, 0x45 fold to set 1 (and sit in five sets by modulo): one line too many for 4 ways."""
    tb = await bench(dut)
    model = tb.model()
    a, _ = two_cores(cross_socket=False)
    await tb.send([(x, a, tb.socket_of(a), W) for x in (0x01, 0x10, 0x23, 0x32, 0x45)], model)
    got = await tb.check_against(model, "xorfold")
    assert got.totals["stateEvictions"] == 1


@cocotb.test(skip=P.counterWidth > 12)
async def counter_lands_exactly_on_all_ones_then_saturates(dut):
    """Saturation is overflow: all-ones events leave STATUS.saturated clear, one more sets it."""
    tb = await bench(dut)
    model = tb.model()
    a, _ = two_cores(cross_socket=False)
    top = (1 << P.counterWidth) - 1
    await tb.send([(LINE, a, tb.socket_of(a), R)] * top, model)
    got = await tb.check_against(model, "all ones")
    assert got.totals["accepted"] == top and got.totals["eventsRead"] == top and not got.saturated
    await tb.send([(LINE, a, tb.socket_of(a), R)], model)
    got = await tb.check_against(model, "one past")
    assert got.totals["accepted"] == top and got.saturated


@cocotb.test(skip=P.counterWidth > 12)
async def counters_saturate_and_say_so(dut):
    tb = await bench(dut)
    model = tb.model()
    a, b = two_cores(cross_socket=True)
    n = (1 << P.counterWidth) + 20
    await tb.send([(LINE, (a, b)[i % 2], tb.socket_of((a, b)[i % 2]), W) for i in range(n)], model)
    got = await tb.check_against(model, "saturation")
    top = (1 << P.counterWidth) - 1
    assert got.totals["transfers"] == top and got.totals["eventsWrite"] == top
    assert got.saturated
    await tb.command(ct.CMD_CLEAR_COUNTERS)
    status = await tb.read32(tb.rm.status)
    assert not status & ct.STATUS_SATURATED


@cocotb.test()
async def tap_mode_drops_and_counts_while_paused(dut):
    tb = await bench(dut)
    await tb.set_ctrl(enable=False, tap=True)
    await tb.send([(LINE, 0, 0, W)] * 50)
    await tb.set_ctrl(enable=True, tap=True)
    got = await tb.read_counters()
    assert got.totals["dropped"] == 50 and got.totals["accepted"] == 0
    assert got.dropped


@cocotb.test()
async def flow_mode_backpressures_while_paused(dut):
    tb = await bench(dut)
    await tb.set_ctrl(enable=False, tap=False)
    dut.event_valid.value = 1
    await tb.idle_cycles(3)
    assert int(dut.event_ready.value) == 0
    dut.event_valid.value = 0
    await tb.set_ctrl(enable=True, tap=False)
    got = await tb.read_counters()
    assert got.totals["dropped"] == 0 and got.totals["accepted"] == 0


@cocotb.test()
async def tap_mode_drops_during_state_clear(dut):
    """CMD.clearState sweeps the line table for `sets` cycles; a tap loses what arrives meanwhile.
    The events that got through must count exactly as the model says for that suffix."""
    tb = await bench(dut)
    await tb.set_ctrl(enable=True, tap=True)
    a, b = two_cores(cross_socket=True)
    evs = [(LINE, (a, b)[i % 2], tb.socket_of((a, b)[i % 2]), W) for i in range(P.sets + 40)]
    await tb.command(ct.CMD_CLEAR_STATE)
    await tb.send(evs)
    await tb.wait_idle()
    got = await tb.read_counters()
    dropped, accepted = got.totals["dropped"], got.totals["accepted"]
    assert dropped + accepted == len(evs)
    if P.sets >= 16:
        assert dropped > 0
    model = tb.model()
    model.drop(dropped)
    for ev in evs[dropped:]:
        model.apply(*ev)
    await tb.check_against(model, "after sweep")


@cocotb.test()
async def snapshot_is_stable_and_clear_resets(dut):
    tb = await bench(dut)
    a, b = two_cores(cross_socket=True)
    evs = [(LINE, (a, b)[i % 2], tb.socket_of((a, b)[i % 2]), W) for i in range(10)]
    await tb.send(evs)
    await tb.wait_idle()
    first = await tb.read_counters()
    assert first.totals["transfers"] == 9
    await tb.send(evs)
    await tb.wait_idle()
    stale = await tb.read_counters(snapshot=False)   # no new snapshot: still the old numbers
    assert stale == first
    await tb.command(ct.CMD_SNAPSHOT | ct.CMD_CLEAR_COUNTERS)   # read-and-clear
    both = await tb.read_counters(snapshot=False)
    assert both.totals["transfers"] == 19 and both.totals["eventsWrite"] == 20
    cleared = await tb.read_counters()
    assert cleared.totals["transfers"] == 0 and not any(h.valid for h in cleared.hot)


@cocotb.test()
async def identity_and_parameters_read_back(dut):
    tb = await bench(dut)
    assert await tb.read32(tb.rm.id) == ct.ID_VALUE
    assert await tb.read32(tb.rm.version) == ct.VERSION_VALUE
    for name, addr in tb.rm.params.items():
        assert await tb.read32(addr) == tb.rm.param_values[name], name


@cocotb.test()
async def bad_csr_accesses_answer_slverr(dut):
    tb = await bench(dut)
    past_hot_table = max(s.addr for s in tb.rm.counters if s.group == "hot") + 8
    for addr in (0x3FFC, 0x0050, 0x0102, past_hot_table):
        try:
            await tb.read32(addr)
        except CsrError:
            continue
        raise AssertionError(f"read of {addr:#x} did not fail")
    for addr in (tb.rm.id, tb.rm.status, tb.rm.slot("global", "transfers"), 0x3FF0):
        try:
            await tb.write32(addr, 1)
        except CsrError:
            continue
        raise AssertionError(f"write of {addr:#x} did not fail")
    await tb.write32(tb.rm.ctrl, ct.CTRL_ENABLE)   # the bus still works after errors
    assert await tb.read32(tb.rm.ctrl) == ct.CTRL_ENABLE


@cocotb.test()
async def malformed_events_are_rejected_not_counted(dut):
    tb = await bench(dut)
    model = tb.model()
    bad_kinds = (len(Kind), len(Kind) + 1)   # codes past the last kind
    evs = [(LINE, 0, 0, W)] + [(LINE, 1 % P.cores, tb.socket_of(1 % P.cores), k) for k in bad_kinds]
    await tb.send(evs, model)
    got = await tb.check_against(model, "rejected")
    assert got.totals["rejected"] == 2 and got.totals["accepted"] == 3
    assert got.totals["transfers"] == 0


@cocotb.test()
async def matrix_read_beside_its_first_increment_after_a_snapshot(dut):
    """The counter bank's RAM takes an increment's row a clock after the add works it out; a CSR read of that row
    in the clock between must take the row from that pending write, not from the RAM, whose snapshot half still
    holds an older snapshot's value. The read is started 0..31 clocks after the increment's event, so that one of
    them lands in that clock whatever the pipeline's depth; each must read the snapshot's value."""
    tb = await bench(dut)
    a, b = two_cores(cross_socket=True)
    sa, sb = tb.socket_of(a), tb.socket_of(b)
    slot = next(s.addr for s in tb.rm.counters if s.group == "matrix" and s.index == (sa, sb))
    model = tb.model()

    def transfers(n: int) -> list[tuple[int, int, int, int]]:
        """n transfers of LINE from a's socket to b's (b's WRITE after a's), each counted in matrix[sa][sb]."""
        return [ev for _ in range(n) for ev in ((LINE, a, sa, W), (LINE, b, sb, W))]

    for delay in range(32):
        await tb.send(transfers(1), model)
        await tb.wait_idle()
        await tb.command(ct.CMD_SNAPSHOT)          # older snapshot: the row's first increment after it copies this
        await tb.send(transfers(2), model)         # ... into its snapshot half
        await tb.wait_idle()
        await tb.command(ct.CMD_SNAPSHOT)          # the snapshot read below
        want = model.snapshot().matrix[sa][sb]
        await tb.send(transfers(1), model)         # the row's first increment after it
        await tb.idle_cycles(delay)
        got = await tb.read32(slot)
        assert got == want, f"matrix[{sa}][{sb}] read {delay} clocks after its increment: {got}, snapshot {want}"
    await tb.check_against(model, "matrix reads beside increments")


@cocotb.test()
async def status_busy_while_events_are_in_flight(dut):
    """STATUS.busy reads 1 while a stream of events is in the pipeline and 0 once the monitor is idle."""
    tb = await bench(dut)
    model = tb.model()
    assert not await tb.read32(tb.rm.status) & ct.STATUS_BUSY
    cores = two_cores(cross_socket=True)
    writes = [(LINE, c, tb.socket_of(c), W) for c in (cores[i % 2] for i in range(300))]
    stream = cocotb.start_soon(tb.send(writes, model))
    for _ in range(100):
        if int(dut.busy.value):
            break
        await RisingEdge(dut.clock)
    else:
        raise AssertionError("the busy port never rose while the stream was sent")
    assert await tb.read32(tb.rm.status) & ct.STATUS_BUSY
    assert not stream.done(), "the stream should outlast the read"
    await stream
    await tb.wait_idle()
    assert not await tb.read32(tb.rm.status) & ct.STATUS_BUSY
    await tb.check_against(model, "after the stream")
