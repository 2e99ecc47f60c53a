"""Randomized differential test: RTL against the bit-exact model on reproducible streams.

COHTB_SEED picks the stream, COHTB_EVENTS its length, COHTB_CHECK_EVERY how often the stream pauses
for a mid-run snapshot comparison, COHTB_COVERAGE_OUT where the kind x line-state bins are written (every
kind that changes line state: READ, WRITE and EVICT)."""

from __future__ import annotations

import json
import os
import random
from collections import Counter

import cocotb

from cohtb import contract as ct
from cohtb.contract import STATE_KINDS, Kind
from monitor_bench import MonitorBench

SEED = int(os.environ.get("COHTB_SEED", "1"))
EVENTS = int(os.environ.get("COHTB_EVENTS", "20000"))
CHECK_EVERY = int(os.environ.get("COHTB_CHECK_EVERY", "5000"))


def phase_events(rng: random.Random, tb: MonitorBench, n: int) -> list[tuple[int, int, int, int]]:
    """One phase of a stream with its own shape: how many lines, which kinds, how many cores."""
    p = tb.p
    shape = rng.choice(["hot", "pressure", "mixed", "few-cores"])
    line_space = 1 << min(p.lineAddrBits, 20)
    if shape == "hot":
        lines = [rng.randrange(line_space) for _ in range(rng.randint(1, 3))]
    elif shape == "pressure":
        # Many lines folded onto a few sets: forces replacement.
        wanted_sets = {rng.randrange(p.sets) for _ in range(rng.randint(1, 2))}
        lines = [x for x in (rng.randrange(line_space) for _ in range(4000)) if p.set_index(x) in wanted_sets][: p.ways * 4]
    else:
        lines = [rng.randrange(line_space) for _ in range(rng.randint(4, 4 * p.sets * p.ways))]
    cores = list(range(p.cores)) if shape != "few-cores" else rng.sample(range(p.cores), 2)
    weights = rng.choice([(5, 5, 2), (2, 8, 1), (8, 2, 1), (3, 3, 4)])
    out = []
    for _ in range(n):
        core = rng.choice(cores)
        socket = tb.socket_of(core) if rng.random() > 0.02 else rng.randrange(p.sockets)
        r = rng.random()
        if r < 0.03:
            kind = rng.choice((Kind.FWD_GETS, Kind.FWD_GETX, Kind.INV))     # rule X: counted, no state
        elif r < 0.035:
            kind = rng.randrange(len(Kind), len(Kind) + 2)                  # malformed: rejected
        else:
            kind = rng.choices(STATE_KINDS, weights)[0]                     # rules R, W, E
        out.append((rng.choice(lines), core, socket, kind))
    return out


@cocotb.test()
async def random_stream_matches_model(dut):
    tb = MonitorBench(dut)
    await tb.reset()
    rng = random.Random(SEED)
    coverage: Counter = Counter()
    model = tb.model(coverage=coverage)
    full = (1 << tb.p.lineAddrBits) - 1
    for r in range(tb.p.regions):
        base = rng.randrange(1 << min(tb.p.lineAddrBits, 20))
        mask = full if rng.random() < 0.5 else full & ~((1 << rng.randint(1, 6)) - 1)
        await tb.set_region(r, base & mask, mask, model)
    done = checks = 0
    while done < EVENTS:
        n = min(rng.randint(200, 3000), EVENTS - done)
        await tb.send(phase_events(rng, tb, n), model)
        done += n
        if done // CHECK_EVERY > checks or done >= EVENTS:
            checks = done // CHECK_EVERY
            await tb.check_against(model, f"seed {SEED} after {done} events")
        action = rng.random()
        if action < 0.05:
            await tb.wait_idle()
            await tb.command(ct.CMD_CLEAR_COUNTERS)
            model.clear_counters()
        elif action < 0.08:
            await tb.wait_idle()
            await tb.command(ct.CMD_CLEAR_STATE)
            model.clear_state()
            await tb.wait_idle()
        elif action < 0.15:
            # A passive tap that is paused: the events it sees are dropped and counted, never taken.
            await tb.wait_idle()
            await tb.set_ctrl(enable=False, tap=True)
            k = rng.randint(1, 40)
            await tb.send(phase_events(rng, tb, k))
            model.drop(k)
            await tb.set_ctrl(enable=True, tap=False)
    got = await tb.check_against(model, f"seed {SEED} at the end")
    assert tb.sent >= EVENTS       # every event of the plan went over the port (counters may have been cleared since)
    out = os.environ.get("COHTB_COVERAGE_OUT")
    if out:
        with open(out, "w") as f:
            json.dump({f"{k}/{s}": n for (k, s), n in sorted(coverage.items())}, f, indent=1)
