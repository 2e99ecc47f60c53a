"""Test bench of the CoherenceMonitor: clock, reset, an event driver that honours valid/ready,
and CSR access through cocotbext-axi's AXI4-Lite master. The configuration under test comes from
the monitor.json named by COHTB_MONITOR_JSON (set by the pytest runner)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster, AxiResp

from cohtb import contract as ct
from cohtb.monitor import config
from cohtb.monitor.counters import Counters, diff_counters, read_counters
from cohtb.monitor.models import BoundedModel

OKAY = AxiResp.OKAY


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
        cocotb.start_soon(Clock(dut.clock, 10, unit="ns").start())
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

    async def read64(self, addr: int) -> int:
        return await self.read32(addr) | await self.read32(addr + 4) << 32

    async def write64(self, addr: int, value: int) -> None:
        await self.write32(addr, value)
        await self.write32(addr + 4, value >> 32)

    async def command(self, bits: int) -> None:
        await self.write32(self.rm.cmd, bits)

    async def set_ctrl(self, enable: bool = True, tap: bool = False) -> None:
        await self.write32(self.rm.ctrl, (ct.CTRL_ENABLE if enable else 0) | (ct.CTRL_TAP if tap else 0))

    async def set_region(self, r: int, base: int, mask: int, model: BoundedModel | None = None) -> None:
        await self.write64(self.rm.region_base[r], base)
        await self.write64(self.rm.region_mask[r], mask)
        enabled = await self.read32(self.rm.region_enable)
        await self.write32(self.rm.region_enable, enabled | 1 << r)
        if model is not None:
            model.set_region(r, base, mask)

    async def read_counters(self, snapshot: bool = True) -> Counters:
        """Take a snapshot and read every counter back (the same assembly as the replay driver's)."""
        if snapshot:
            await self.command(ct.CMD_SNAPSHOT)
        values = {s.addr: await self.read64(s.addr) for s in self.rm.counters}
        return read_counters(self.cfg, values.__getitem__, await self.read32(self.rm.status))

    async def check_against(self, model: BoundedModel, what: str = "") -> Counters:
        """Drain, snapshot, and require the RTL counters to equal the model's, field by field."""
        await self.wait_idle()
        got = await self.read_counters()
        want = model.snapshot()
        diffs = diff_counters(want, got)
        assert not diffs, f"RTL != model {what}: " + "; ".join(diffs[:12])
        return got

    # ------------------------------------------------------------------ events
    async def send(self, events, model: BoundedModel | None = None) -> None:
        """Drive (line, core, socket, kind) events back to back, one per clock while ready is high."""
        dut = self.dut
        clk = dut.clock
        valid, line_s, core_s, sock_s, kind_s, ready = (dut.event_valid, dut.event_bits_line, dut.event_bits_core,
                                                        dut.event_bits_socket, dut.event_bits_kind, dut.event_ready)
        for ev in events:
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
            if model is not None:
                model.apply(line, core, socket, kind)
            self.sent += 1
        valid.value = 0

    async def idle_cycles(self, n: int) -> None:
        for _ in range(n):
            await RisingEdge(self.dut.clock)
