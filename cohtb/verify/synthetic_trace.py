"""Synthetic ProtocolTrace text in gem5's exact printf layout (src/mem/slicc/symbols/StateMachine.py:
"%15d %3s %10s%20s %6s>%-6s %s"), for the ingest benchmark and its error tests. Real traces recorded
from gem5 are the fixtures of the ingest tests; this only supplies volume."""

from __future__ import annotations

import random
from typing import Iterator

# (machine, event, from, to) in the proportions a spinning lockref run shows: mostly hits and Seq lines.
_MIX = [
    ("Seq", "Begin", "", "", 30), ("Seq", "Done", "", "", 30),
    ("L1Cache", "Load", "S", "S", 12), ("L1Cache", "Store", "M", "M", 6), ("L1Cache", "Ifetch", "S", "S", 6),
    ("L1Cache", "Load", "I", "IS", 4), ("L1Cache", "Ifetch", "I", "IS", 2), ("L1Cache", "Data_all_Acks", "IS", "S", 4),
    ("L1Cache", "DataS_fromL1", "IS", "S", 2), ("L1Cache", "Data_Exclusive", "IS", "E", 2),
    ("L1Cache", "Data_all_Acks", "IS_I", "I", 1), ("L1Cache", "Store", "I", "IM", 3), ("L1Cache", "Store", "S", "SM", 2),
    ("L1Cache", "Data_all_Acks", "IM", "M", 3), ("L1Cache", "Ack", "SM", "SM", 1), ("L1Cache", "Ack_all", "SM", "M", 2),
    ("L1Cache", "Store", "E", "M", 1), ("L1Cache", "Fwd_GETX", "M", "I", 3), ("L1Cache", "Fwd_GETS", "M", "S", 2),
    ("L1Cache", "Fwd_GETS", "E", "S", 1), ("L1Cache", "Inv", "S", "I", 2), ("L1Cache", "Inv", "SM", "IM", 1),
    ("L1Cache", "Inv", "IS", "IS_I", 1), ("L1Cache", "Inv", "M", "I", 1), ("L1Cache", "Inv", "I", "I", 1),
    ("L1Cache", "L1_Replacement", "S", "I", 1), ("L1Cache", "L1_Replacement", "M", "M_I", 1),
    ("L1Cache", "WB_Ack", "M_I", "I", 1), ("L1Cache", "WB_Ack", "SINK_WB_ACK", "I", 1),
    ("L2Cache", "L1_GETX", "MT", "MT_MB", 3),
]


def lines(n: int, cores: int = 32, seed: int = 1) -> Iterator[str]:
    rng = random.Random(seed)
    kinds = [m for m in _MIX for _ in range(m[4])]
    tick = 1_000_000
    for _ in range(n):
        machine, event, frm, to, _w = rng.choice(kinds)
        tick += rng.randrange(0, 2000)
        addr = 0x4C0000 + 64 * rng.randrange(16) + rng.randrange(8) * 8
        line = addr & ~63
        where = f"[{addr:#x}, line {line:#x}]"
        if machine == "Seq":
            yield f"{tick:15d} {rng.randrange(cores):3d} {machine:>10s}{event:>20s} {'':>6s}>{'':<6s} {where} 12 cycles\n"
        else:
            yield f"{tick:15d} {rng.randrange(cores):3d} {machine:>10s}{event:>20s} {frm:>6s}>{to:<6s} {where} \n"
