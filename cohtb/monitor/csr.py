"""The monitor's CSR driver, written once for both of its ports: the Verilated monitor's (cohtb/monitor/rtl.py,
calls that answer at once) and the cocotb bench's (cocotb-tests/monitor_bench.py, an AXI4-Lite master whose
answers are awaited).

Each operation is a generator of 32-bit accesses, ("read", addr) answered with the word read and ("write", addr,
value); a port runs it with `run` or `run_async` and gets its result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator

from cohtb import contract as ct
from cohtb.monitor.config import MonitorConfig, RegisterMap
from cohtb.monitor.counters import read_counters

Op = Generator[tuple, int | None, object]


def read32(addr: int) -> Op:
    return (yield ("read", addr))


def write32(addr: int, value: int) -> Op:
    yield ("write", addr, value & 0xFFFFFFFF)


def read64(addr: int) -> Op:
    low = yield from read32(addr)
    return low | (yield from read32(addr + 4)) << 32


def write64(addr: int, value: int) -> Op:
    yield from write32(addr, value)
    yield from write32(addr + 4, value >> 32)


def set_ctrl(rm: RegisterMap, enable: bool = True, tap: bool = False) -> Op:
    yield from write32(rm.ctrl, (ct.CTRL_ENABLE if enable else 0) | (ct.CTRL_TAP if tap else 0))


def set_region(rm: RegisterMap, r: int, base: int, mask: int) -> Op:
    """Region r watches the lines with line & mask == base, and is enabled beside those already enabled."""
    yield from write64(rm.region_base[r], base)
    yield from write64(rm.region_mask[r], mask)
    enabled = yield from read32(rm.region_enable)
    yield from write32(rm.region_enable, enabled | 1 << r)


def snapshot(cfg: MonitorConfig, take: bool = True) -> Op:
    """CMD.snapshot (unless take is False: the one taken already), then every counter read back."""
    if take:
        yield from write32(cfg.regmap.cmd, ct.CMD_SNAPSHOT)
    values = {}
    for slot in cfg.regmap.counters:
        values[slot.addr] = yield from read64(slot.addr)
    status = yield from read32(cfg.regmap.status)
    return read_counters(cfg, values.__getitem__, status)


def run(op: Op, read: Callable[[int], int], write: Callable[[int, int], None]):
    """The operation through a port whose accesses answer at once."""
    try:
        access = next(op)
        while True:
            if access[0] == "read":
                access = op.send(read(access[1]))
            else:
                write(access[1], access[2])
                access = op.send(None)
    except StopIteration as done:
        return done.value


async def run_async(op: Op, read: Callable[[int], Awaitable[int]], write: Callable[[int, int], Awaitable[None]]):
    """The operation through a port whose accesses are awaited."""
    try:
        access = next(op)
        while True:
            if access[0] == "read":
                access = op.send(await read(access[1]))
            else:
                await write(access[1], access[2])
                access = op.send(None)
    except StopIteration as done:
        return done.value
