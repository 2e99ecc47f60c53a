"""Test bench of the CoherenceMonitor: clock, reset, an event driver that honours valid/ready,
and CSR access through cocotbext-axi's AXI4-Lite master. The configuration under test comes from
the monitor.json named by COHTB_MONITOR_JSON (set by the pytest runner).

Idle cycles and back-pressure come from generators, as in cocotbext-axi's own benches: a generator
yields one value per clock, 1 for "pause this clock". `set_idle_generator` pauses the channels the
bench drives (the event port between events, and the AXI4-Lite AW, W and AR channels);
`set_backpressure_generator` pauses the ones it receives (BREADY and RREADY). Without generators the
bench drives back to back, as it always has."""

from __future__ import annotations

import itertools
import logging
import os
import random
from pathlib import Path
from typing import Callable, Iterable, Iterator

import cocotb
from cocotb.clock import Clock
from cocotb.simtime import get_sim_time
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp

from cohtb import contract as ct
from cohtb.monitor import config, csr
from cohtb.monitor.counters import Counters, diff_counters
from cohtb.monitor.models import BoundedModel

OKAY = AxiResp.OKAY
CLOCK_NS = 10

PauseGenerator = Callable[[], Iterator[int]]


def cycle_pause() -> Iterator[int]:
    """cocotbext-axi's pattern: three clocks paused, one clock free."""
    return itertools.cycle([1, 1, 1, 0])


def random_pause(seed: int, duty: float) -> PauseGenerator:
    """A seeded generator factory: each call gives a fresh, reproducible stream that pauses a clock with
    probability `duty` (the calls are numbered, so two channels never share a stream)."""
    calls = itertools.count()

    def make() -> Iterator[int]:
        rng = random.Random(f"{seed}/{next(calls)}")
        while True:
            yield int(rng.random() < duty)

    return make


class CsrError(Exception):
    """The monitor answered a CSR access with an error response."""


class MonitorBench:
    def __init__(self, dut):
        self.dut = dut
        self.cfg = config.load(Path(os.environ["COHTB_MONITOR_JSON"]))
        self.p = self.cfg.params
        self.rm = self.cfg.regmap
        self.log = logging.getLogger("cocotb.bench")
        logging.getLogger(f"cocotb.{dut._name}.s_axil").setLevel(logging.WARNING)  # it logs every access
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clock, dut.reset)
        self.sent = 0
        self._event_idle: Iterator[int] | None = None
        cocotb.start_soon(Clock(dut.clock, CLOCK_NS, unit="ns").start())
        dut.event_valid.value = 0
        dut.event_bits_line.value = 0
        dut.event_bits_core.value = 0
        dut.event_bits_socket.value = 0
        dut.event_bits_kind.value = 0

    def model(self, **kw) -> BoundedModel:
        return BoundedModel(self.p, **kw)

    def socket_of(self, core: int) -> int:
        return self.socket_map[core]

    @property
    def socket_map(self) -> list[int]:
        return ct.contiguous_socket_map(self.p.cores, self.p.sockets)

    def set_idle_generator(self, generator: PauseGenerator | None = None) -> None:
        """Idle cycles on the channels the bench drives: the event port (checked between events: while the
        generator yields 1, valid stays low) and the AXI4-Lite AW, W and AR sources. `generator` is called
        once per channel; None removes them (back-to-back driving)."""
        self.set_event_idle_generator(generator)
        for channel in (self.axil.write_if.aw_channel, self.axil.write_if.w_channel, self.axil.read_if.ar_channel):
            channel.set_pause_generator(generator() if generator else None)

    def set_event_idle_generator(self, generator: PauseGenerator | None = None) -> None:
        """Idle cycles on the event port only."""
        self._event_idle = generator() if generator else None

    def set_backpressure_generator(self, generator: PauseGenerator | None = None) -> None:
        """Back-pressure on the AXI4-Lite response channels: BREADY and RREADY drop while the generator
        yields 1 (cocotbext-axi's sinks)."""
        for channel in (self.axil.write_if.b_channel, self.axil.read_if.r_channel):
            channel.set_pause_generator(generator() if generator else None)

    def clock_edge(self) -> int:
        """The number of the rising edge the simulation is at (edges every CLOCK_NS from time 0)."""
        return round(get_sim_time("ns") / CLOCK_NS)

    async def reset(self) -> None:
        self.dut.reset.value = 1
        for _ in range(3):
            await RisingEdge(self.dut.clock)
        self.dut.reset.value = 0
        await self.wait_idle()

    async def wait_idle(self, limit: int = 100_000) -> None:
        """Wait until the pipeline is empty and no sweep is running."""
        for _ in range(limit):
            await RisingEdge(self.dut.clock)
            if not int(self.dut.busy.value):
                return
        raise AssertionError("monitor stayed busy")

    # ------------------------------------------------------------------ CSR
    async def read32(self, addr: int) -> int:
        r = await self.axil.read(addr, 4)
        if r.resp != OKAY:
            raise CsrError(f"CSR read {addr:#06x}: {r.resp.name}")
        return int.from_bytes(r.data, "little")

    async def write32(self, addr: int, value: int) -> None:
        r = await self.axil.write(addr, (value & 0xFFFFFFFF).to_bytes(4, "little"))
        if r.resp != OKAY:
            raise CsrError(f"CSR write {addr:#06x}: {r.resp.name}")

    async def csr(self, op: csr.Op):
        """A CSR operation (cohtb/monitor/csr.py: the driver the replay uses too) over AXI4-Lite."""
        return await csr.run_async(op, self.read32, self.write32)

    async def read64(self, addr: int) -> int:
        return await self.csr(csr.read64(addr))

    async def command(self, bits: int) -> None:
        await self.write32(self.rm.cmd, bits)

    async def set_ctrl(self, enable: bool = True, tap: bool = False) -> None:
        await self.csr(csr.set_ctrl(self.rm, enable, tap))

    async def set_region(self, r: int, base: int, mask: int, model: BoundedModel | None = None) -> None:
        await self.csr(csr.set_region(self.rm, r, base, mask))
        if model is not None:
            model.set_region(r, base, mask)

    async def read_counters(self, snapshot: bool = True) -> Counters:
        """Take a snapshot (unless one is taken) and read every counter back."""
        return await self.csr(csr.snapshot(self.cfg, take=snapshot))

    async def check_against(self, model: BoundedModel, what: str = "") -> Counters:
        """Drain, snapshot, and require the RTL counters to equal the model's, field by field."""
        await self.wait_idle()
        got = await self.read_counters()
        want = model.snapshot()
        diffs = diff_counters(want, got)
        assert not diffs, f"RTL != model {what}: " + "; ".join(diffs[:12])
        return got

    # ------------------------------------------------------------------ events
    async def send(self, events: Iterable[tuple[int, int, int, int]], model: BoundedModel | None = None,
                   stamps: list[int] | None = None) -> None:
        """Drive (line, core, socket, kind) events, one per clock while ready is high, back to back unless
        an idle generator is set. `stamps` gets the clock edge of each event's handshake (valid and ready
        both high at that edge); an event is taken from `events` only after the previous one's handshake."""
        dut = self.dut
        clk = dut.clock
        valid, line_s, core_s, sock_s, kind_s, ready = (dut.event_valid, dut.event_bits_line, dut.event_bits_core,
                                                        dut.event_bits_socket, dut.event_bits_kind, dut.event_ready)
        idle = self._event_idle
        for ev in events:
            if idle is not None:
                while next(idle):
                    valid.value = 0
                    await RisingEdge(clk)
            line, core, socket, kind = ev
            line_s.value = line
            core_s.value = core
            sock_s.value = socket
            kind_s.value = kind
            valid.value = 1
            while True:
                await RisingEdge(clk)
                if int(ready.value):
                    break
            if stamps is not None:
                stamps.append(self.clock_edge())
            if model is not None:
                model.apply(line, core, socket, kind)
            self.sent += 1
        valid.value = 0

    def record_csr_writes(self) -> list[tuple[int, int, int]]:
        """Watch the AXI4-Lite write address/data handshake: returns a list that fills with
        (clock edge, address, data) of every write the monitor takes (AW and W are taken together)."""
        dut, log = self.dut, []

        async def watch() -> None:
            while True:
                await RisingEdge(dut.clock)
                if int(dut.s_axil_awvalid.value) and int(dut.s_axil_awready.value):
                    log.append((self.clock_edge(), int(dut.s_axil_awaddr.value), int(dut.s_axil_wdata.value)))

        cocotb.start_soon(watch())
        return log

    async def idle_cycles(self, n: int) -> None:
        for _ in range(n):
            await RisingEdge(self.dut.clock)
