"""The CSR port under traffic: snapshot, read-and-clear and clear-state commands written over AXI4-Lite
while a concurrent coroutine drives events, with idle cycles and back-pressure from seeded generators
(cocotbext-axi's pause generators on AW, W, AR, B and R; the bench's own on the event port).

Time is read at the ports, black-box: the event driver stamps every event with the clock edge of its
handshake, and a watcher on the AXI4-Lite write channel stamps every command with the edge at which the
monitor took it (AWVALID and AWREADY high; the monitor takes AW and W together). Signals read at a rising
edge hold their values from before it (cocotb applies writes in the ReadWrite phase), on Icarus and on
Verilator alike, so both stamps are the edge at which the handshake happened. Streams are tb_random's
phases, endless until the CSR side is done, and the model is replayed over exactly the events sent.

COHTB_SEED picks the streams, the regions and the generators; every test derives its own generator from
it and its parameters, so one test reproduces alone with the same seed and variant."""

from __future__ import annotations

import dataclasses
import json
import os
import random
from bisect import bisect_right
from collections import Counter as Tally
from pathlib import Path

import cocotb
from cocotb.triggers import RisingEdge

from cohtb import contract as ct
from cohtb.contract import Kind
from cohtb.monitor import config
from cohtb.monitor.counters import Counters, diff_counters, read_counters
from cohtb.monitor.models import BoundedModel
from monitor_bench import MonitorBench, random_pause
from tb_random import phase_events

SEED = int(os.environ.get("COHTB_SEED", "1"))
# The pipeline as the ports show it (monitor.json's "pipeline", docs/monitor.md): a CMD write whose AW handshake
# is at edge t acts at edge t + command_stage; an event whose handshake is at edge a reaches the counters' stage
# at edge a + count_stage and is in the live counters from the edge after, so a snapshot written at edge t holds
# exactly the events taken at edges <= t - PIPELINE; and the line table writes it back at edge a + write_stage.
STAGES = config.load(Path(os.environ["COHTB_MONITOR_JSON"])).pipeline
PIPELINE = STAGES.count_stage + 1 - STAGES.command_stage
IDLE_DUTY = 0.3          # the "random" idle generator: a channel pauses 30 % of the clocks
BACKPRESSURE_DUTY = 0.4  # the "random" back-pressure generator: BREADY/RREADY low 40 % of the clocks
THIN_DUTY = 0.75         # event-port idling for counters under 16 bits, so the sums checked do not saturate
SNAPSHOTS = 3
READ_AND_CLEARS = 4
STATE_CLEARS = 3

Event = tuple[int, int, int, int]


class Stream:
    """tb_random's phases, endless until stop(). The driver takes the next event only after the previous
    one's handshake, so `sent` and the driver's `stamps` line up one to one."""

    def __init__(self, tb: MonitorBench, rng: random.Random):
        self.tb = tb
        self.rng = random.Random(rng.randrange(1 << 32))
        self.sent: list[Event] = []
        self.stamps: list[int] = []
        self._stopped = False

    def stop(self) -> None:
        self._stopped = True

    def __iter__(self):
        while True:
            for ev in phase_events(self.rng, self.tb, self.rng.randint(50, 500)):
                if self._stopped:
                    return
                self.sent.append(ev)
                yield ev

    def taken_by(self, edge: int) -> int:
        """How many events had their handshake at or before `edge`."""
        return bisect_right(self.stamps, edge)


class Traffic:
    """A bench with regions programmed, pause generators set, a CSR write watcher and an event stream."""

    def __init__(self, tb: MonitorBench, rng: random.Random):
        self.tb, self.rng = tb, rng
        self.regions: list[tuple[int, int, int]] = []
        self.writes = tb.record_csr_writes()
        self.stream = Stream(tb, rng)
        self.driver = None

    @staticmethod
    async def start(dut, test: str, idle: str | None, backpressure: str | None) -> "Traffic":
        tb = MonitorBench(dut)
        await tb.reset()
        rng = random.Random(f"{SEED}/{test}/{idle}/{backpressure}")
        t = Traffic(tb, rng)
        full = tb.p.line_mask
        for r in range(tb.p.regions):    # as tb_random: exact lines and aligned blocks
            base = rng.randrange(1 << min(tb.p.lineAddrBits, 20))
            mask = full if rng.random() < 0.5 else full & ~((1 << rng.randint(1, 6)) - 1)
            await tb.set_region(r, base & mask, mask)
            t.regions.append((r, base & mask, mask))
        if idle == "random":
            tb.set_idle_generator(random_pause(rng.randrange(1 << 32), IDLE_DUTY))
        if backpressure == "random":
            tb.set_backpressure_generator(random_pause(rng.randrange(1 << 32), BACKPRESSURE_DUTY))
        return t

    def model(self, counter_width: int | None = None) -> BoundedModel:
        p = self.tb.p if counter_width is None else dataclasses.replace(self.tb.p, counterWidth=counter_width)
        m = BoundedModel(p)
        for r, base, mask in self.regions:
            m.set_region(r, base, mask)
        return m

    def run_events(self) -> None:
        self.driver = cocotb.start_soon(self.tb.send(self.stream, stamps=self.stream.stamps))

    async def stop_events(self) -> list[Event]:
        self.stream.stop()
        await self.driver
        assert len(self.stream.sent) == len(self.stream.stamps)
        return self.stream.sent

    async def command(self, bits: int) -> int:
        """Write CMD; returns the clock edge at which the monitor took the write."""
        n = len(self.writes)
        await self.tb.command(bits)
        taken = [edge for edge, addr, data in self.writes[n:] if addr == self.tb.rm.cmd]
        assert len(taken) == 1 and self.writes[n][2] == bits, self.writes[n:]
        cover_command(bits, any(taken[0] - PIPELINE <= s <= taken[0] for s in self.stream.stamps))
        return taken[0]


COMMAND_BINS = {ct.CMD_SNAPSHOT: "snapshot", ct.CMD_SNAPSHOT | ct.CMD_CLEAR_COUNTERS: "read-and-clear",
                ct.CMD_CLEAR_STATE: "clear-state"}


def cover_command(bits: int, under_traffic: bool) -> None:
    """Coverage bin "CSR/<command>-under-traffic": the command landed while an event was in the pipeline
    (taken within the pipeline's depth before it). Counted into COHTB_COVERAGE_OUT, which the pytest side gates."""
    out = os.environ.get("COHTB_COVERAGE_OUT")
    if not out or not under_traffic or bits not in COMMAND_BINS:
        return
    path = Path(out)
    bins = json.loads(path.read_text()) if path.exists() else {}
    key = f"CSR/{COMMAND_BINS[bits]}-under-traffic"
    bins[key] = bins.get(key, 0) + 1
    path.write_text(json.dumps(bins, indent=1, sort_keys=True))


def comparable(c: Counters) -> dict:
    """Everything a snapshot holds. STATUS's saturated and dropped bits are live, not snapshot copies, so
    they are left out of mid-stream comparisons (check_against compares them when the monitor is idle)."""
    d = c.to_json()
    del d["saturated"], d["dropped"]
    return d


def sums(c: Counters) -> dict[str, int]:
    """The counters that add up over a stream: all global and region counters and the matrix."""
    out = {f"global.{k}": v for k, v in c.totals.items()}
    for r, rc in enumerate(c.regions):
        out.update({f"region{r}.{k}": v for k, v in rc.items()})
    for a, row in enumerate(c.matrix):
        out.update({f"matrix[{a}][{b}]": v for b, v in enumerate(row)})
    return out


async def read_sums(tb: MonitorBench) -> dict[str, int]:
    """Read every counter slot except the hot-line table, from the current snapshot."""
    values = {s.addr: await tb.read64(s.addr) for s in tb.rm.counters if s.group != "hot"}
    return sums(read_counters(tb.cfg, lambda a: values.get(a, 0), 0))


PACES = {"idle": [None, "random"], "backpressure": [None, "random"]}


@cocotb.test()
@cocotb.parametrize(**PACES)
async def snapshot_mid_stream_is_a_prefix(dut, idle, backpressure):
    """CMD.snapshot while events flow, then every counter and the hot-line table read back (some hundreds
    of CSR reads, while the live counters keep moving). Each readout must equal the model's counters after
    some prefix of the stream: the model is replayed over the events sent, its counters recorded after
    every event, and the readout searched for among them. The prefix must lie between the events taken
    when the command was issued (less the PIPELINE in flight) and those taken when its response came
    back; and it must be exactly the events taken PIPELINE edges before the edge at which the monitor
    took the command. Matches are unique while `accepted` has not saturated (it grows by one per event)."""
    t = await Traffic.start(dut, "snapshot", idle, backpressure)
    tb = t.tb
    t.run_events()
    readouts = []
    for _ in range(SNAPSHOTS):
        await tb.idle_cycles(t.rng.randint(0, 200))
        issued = len(t.stream.stamps)
        edge = await t.command(ct.CMD_SNAPSHOT)
        answered = len(t.stream.stamps)
        readouts.append((issued, answered, edge, await tb.read_counters(snapshot=False)))
    sent = await t.stop_events()

    model = t.model()
    prefixes = [comparable(model.c)]
    for ev in sent:
        model.apply(*ev)
        prefixes.append(comparable(model.c))
    await tb.check_against(model, f"seed {SEED}, after {len(sent)} events")
    for issued, answered, edge, got in readouts:
        want = t.stream.taken_by(edge - PIPELINE)
        found = [k for k, snap in enumerate(prefixes) if snap == comparable(got)]
        diffs = diff_counters(prefixes[want], comparable(got))
        assert found, (f"seed {SEED}: snapshot at edge {edge} is the model after no prefix of the stream; "
                       f"against the prefix of {want} events: " + "; ".join(diffs[:12]))
        assert any(issued - PIPELINE <= k <= answered for k in found), (
            f"seed {SEED}: snapshot matches prefixes {found[:5]}, but {issued} events were taken when the "
            f"command was issued and {answered} when it was answered")
        assert want in found, (f"seed {SEED}: snapshot at edge {edge} matches prefixes {found[:5]}, not the "
                               f"{want} events taken by edge {edge - PIPELINE}: " + "; ".join(diffs[:12]))
        tb.log.info("snapshot at edge %d: prefix %d (issued after %d events, answered after %d)",
                    edge, want, issued, answered)


def delta(after: dict[str, int], before: dict[str, int], top: int) -> dict[str, int]:
    """What a counter cleared at `before` holds at `after`: the sum, clamped as saturating counters do."""
    return {k: min(top, after[k] - before[k]) for k in after}


@cocotb.test()
@cocotb.parametrize(**PACES)
async def read_and_clear_under_traffic_adds_up(dut, idle, backpressure):
    """CMD.snapshot|clearCounters (read-and-clear) while events flow, the additive counters (global,
    region, matrix) read back after each; at the end, once idle, a last readout. Checks:

    - each window holds exactly the events from the previous clear to this snapshot, summed and clamped
      at the counter's maximum: the snapshot at edge t holds the events taken at edges <= t - PIPELINE, and
      the clear at the same edge restarts the count with the event in the counters' stage then (taken at
      edge t - PIPELINE + 1) and after;
    - nothing counted twice, nothing lost (an atomic read-and-clear, docs/monitor.md): over every counter
      no window saturated, the readouts' sum plus the final readout equals the model's totals over the whole
      stream (an unsaturating model)."""
    t = await Traffic.start(dut, "read-and-clear", idle, backpressure)
    tb = t.tb
    top = tb.p.counter_max
    if tb.p.counterWidth < 16:
        tb.set_event_idle_generator(random_pause(t.rng.randrange(1 << 32), THIN_DUTY))
    t.run_events()
    windows = []
    for _ in range(READ_AND_CLEARS):
        await tb.idle_cycles(t.rng.randint(0, 100))
        edge = await t.command(ct.CMD_SNAPSHOT | ct.CMD_CLEAR_COUNTERS)
        windows.append((edge, await read_sums(tb)))
    sent = await t.stop_events()
    await tb.wait_idle()
    final = sums(await tb.read_counters())

    model = t.model(counter_width=64)   # totals without saturation
    prefix = [sums(model.c)]
    for ev in sent:
        model.apply(*ev)
        prefix.append(sums(model.c))
    start = 0
    read_total = Tally()
    saturated = set()
    for j, (edge, got) in enumerate(windows):
        held = t.stream.taken_by(edge - PIPELINE)        # in the snapshot; every later event in the next window
        want = delta(prefix[held], prefix[start], top)
        diffs = diff_counters(want, got)
        assert not diffs, (f"seed {SEED}: read-and-clear {j} at edge {edge} (events {start}..{held - 1}): "
                           + "; ".join(diffs[:12]))
        saturated |= {k for k, v in want.items() if v == top}
        read_total.update(got)
        start = held
    want = delta(prefix[-1], prefix[start], top)
    diffs = diff_counters(want, final)
    assert not diffs, f"seed {SEED}: final readout (events {start}..{len(sent) - 1}): " + "; ".join(diffs[:12])
    saturated |= {k for k, v in want.items() if v == top}
    read_total.update(final)
    unbalanced = [f"{k}: read {read_total[k]} != {prefix[-1][k]}" for k in final
                  if k not in saturated and read_total[k] != prefix[-1][k]]
    assert not unbalanced, f"seed {SEED}: counts lost or doubled: " + "; ".join(unbalanced[:12])
    assert "global.accepted" not in saturated, f"seed {SEED}: a window saturated `accepted`: nothing was balanced"
    tb.log.info("%d events, %d read-and-clears; %d counters balanced (%d saturated in a window)", len(sent),
                len(windows), len(final) - len(saturated), len(saturated))


@cocotb.test()
async def read_and_clear_keeps_every_event(dut):
    """A read-and-clear taken while events flow keeps the event in the counters' stage on the command's clock: the clear restarts
    the counters with that clock's increments. Flow mode, WRITEs back to back; the CMD write
    snapshot|clearCounters lands mid-stream; `accepted` in the snapshot plus `accepted` at the end is every
    event sent. (Before the fix the clear dropped that event: 29 of 30.)"""
    tb = MonitorBench(dut)
    await tb.reset()
    evs = [(0x2A, core, tb.socket_of(core), Kind.WRITE) for core in [0, tb.p.cores - 1] * 15]
    driver = cocotb.start_soon(tb.send(evs))
    await tb.idle_cycles(10)
    await tb.command(ct.CMD_SNAPSHOT | ct.CMD_CLEAR_COUNTERS)
    first = (await tb.read_counters(snapshot=False)).totals["accepted"]
    await driver
    await tb.wait_idle()
    second = (await tb.read_counters()).totals["accepted"]
    assert first + second == len(evs), f"read-and-clear: {first} + {second} accepted, {len(evs)} sent"


def watch_stalls(tb: MonitorBench) -> list[int]:
    """Clock edges at which the event port had valid high and ready low."""
    dut, log = tb.dut, []

    async def watch() -> None:
        while True:
            await RisingEdge(dut.clock)
            if int(dut.event_valid.value) and not int(dut.event_ready.value):
                log.append(tb.clock_edge())

    cocotb.start_soon(watch())
    return log


@cocotb.test()
@cocotb.parametrize(mode=["tap", "flow"], **PACES)
async def clear_state_under_traffic(dut, mode, idle, backpressure):
    """CMD.clearState while events flow. The sweep stalls the monitor for its `sets` clocks; in flow
    mode ready drops, in tap mode ready stays high and what arrives is dropped and counted.

    Which events were dropped, black-box: in tap mode every valid clock is a handshake, and a stall is
    one unbroken run of clocks starting at the edge after the one that took the command. So the dropped
    events of a clear are the first D presented after the command's edge, where D is how much `dropped`
    grew across it: a snapshot taken well after the sweep (sets + 8 clocks after the command's response)
    reads `dropped`, and the difference to the previous one is that clear's D. Cross-check from the
    documented timing: the stall covers the edges t+1 .. t+1+sets after the edge t the command acts at (its
    handshake's plus pipeline.commandStage), and more while
    the line table has events to write back (the sweep waits for the last one taken, at edge a, to write at
    a + write_stage); the events presented there must be
    exactly those D. The model then takes the events up to the command's edge, clears its line state,
    counts the D events as dropped and takes the rest; the RTL must equal it, and dropped + accepted ==
    sent. In flow mode nothing is dropped, ready is low exactly in those stall windows (and comes back
    at once after them), and the model clears its state between the same two events."""
    tap = mode == "tap"
    t = await Traffic.start(dut, f"clear-state-{mode}", idle, backpressure)
    tb = t.tb
    if tb.p.counterWidth < 16:
        tb.set_event_idle_generator(random_pause(t.rng.randrange(1 << 32), THIN_DUTY))
    await tb.set_ctrl(enable=True, tap=tap)
    stalled = watch_stalls(tb)
    dropped_slot = tb.rm.slot("global", "dropped")
    t.run_events()
    clears, before = [], 0
    for _ in range(STATE_CLEARS):
        await tb.idle_cycles(t.rng.randint(0, 150))
        edge = await t.command(ct.CMD_CLEAR_STATE)
        await tb.idle_cycles(tb.p.sets + 8)
        await t.command(ct.CMD_SNAPSHOT)
        dropped = await tb.read64(dropped_slot)
        clears.append((edge, dropped - before))
        before = dropped
    sent = await t.stop_events()
    stamps = t.stream.stamps

    model = t.model()
    done = 0
    windows = []
    for edge, d in clears:
        edge += STAGES.command_stage       # the edge the command acts at
        k = t.stream.taken_by(edge)        # taken at or before it: before the sweep
        for ev in sent[done:k]:
            model.apply(*ev)
        model.clear_state()
        draining = max(0, stamps[k - 1] + STAGES.write_stage - edge) if k > 0 else 0
        stall_end = edge + 1 + tb.p.sets + draining
        windows.append((edge, stall_end))
        in_window = t.stream.taken_by(stall_end) - k
        if tap:
            assert in_window == d, (f"seed {SEED}: clear-state at edge {edge}: `dropped` grew by {d}, but "
                                    f"{in_window} events arrived in the stall (edges {edge + 1}..{stall_end})")
            model.drop(d)
            done = k + d
        else:
            assert d == 0, f"seed {SEED}: flow mode dropped {d} events"
            assert in_window == 0, f"seed {SEED}: events taken during the sweep after edge {edge}: {stamps[k:k + 3]}"
            if stall_end in stalled and k < len(stamps):
                assert stamps[k] == stall_end + 1, f"seed {SEED}: ready came back late after the sweep at {edge}"
            done = k
        tb.log.info("clear-state at edge %d: %d events before it, %d dropped, stall to edge %d",
                    edge, k, d, stall_end)
    for ev in sent[done:]:
        model.apply(*ev)
    if tap:
        assert not stalled, f"seed {SEED}: tap mode dropped ready at edges {stalled[:5]}"
    else:
        outside = [e for e in stalled if not any(a < e <= b for a, b in windows)]
        assert not outside, f"seed {SEED}: ready low outside the sweeps at edges {outside[:5]}"
    got = await tb.check_against(model, f"seed {SEED}, {mode} mode, {len(sent)} events")
    assert not got.saturated, f"seed {SEED}: counters saturated, dropped + accepted cannot be checked"
    assert got.totals["dropped"] + got.totals["accepted"] == len(sent)
    assert got.totals["dropped"] == sum(d for _, d in clears)
