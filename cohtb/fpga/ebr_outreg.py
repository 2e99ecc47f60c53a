"""Take the register after an ECP5 block RAM's read into the block RAM (its output register, REGMODE OUTREG).

A DP16KD without its output register gives its data ~5.8 ns after the clock (nextpnr's timing for the -6 part),
and the register after it, in the fabric, is wherever the placer puts it: on the default monitor 27 rows away,
3.1 ns of route, more than a 125 MHz clock. With the output register the data leaves the block RAM ~1 ns after the
clock. Vendor flows move such a register into the RAM by themselves; Yosys 0.23's ECP5 mapping does not
(brams_map.v sets REGMODE NOREG), so the flow does it on Yosys' JSON netlist before nextpnr reads it.

A RAM's register is taken only where nothing changes but where it sits: the RAM reads on every clock (both ports'
clock enables tied on: whatever they gate, they gate nothing then), and every read output it drives goes to exactly
one flip-flop, on the RAM's clock and edge, that is always enabled and never reset (the output register then has
its enable tied on and its reset off). Anything else leaves the RAM as it is."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from cohtb.atomic import write_text_atomic

DATA_OUTPUTS = tuple(f"DO{port}{i}" for port in "AB" for i in range(18))


@dataclass(frozen=True)
class Absorbed:
    ram: str
    flip_flops: int


def _top(netlist: dict) -> dict:
    tops = [m for m in netlist["modules"].values() if int(str(m.get("attributes", {}).get("top", "0")), 2)]
    if len(tops) != 1:
        raise ValueError(f"the netlist has {len(tops)} top modules, not one")
    return tops[0]


def _param(cell: dict, name: str, default: str = "") -> str:
    # Yosys writes a string parameter that looks like a binary number with a trailing space.
    return str(cell.get("parameters", {}).get(name, default)).strip()


def _tied(cell: dict, port: str, value: str) -> bool:
    """The port is tied to `value`, or left open (a flip-flop's CE and LSR then take their inactive defaults)."""
    return cell.get("connections", {}).get(port, [value]) == [value]


def _tied_on(ram: dict, port: str) -> bool:
    """The block RAM's port is connected, to a constant 1 (an open port's default is not relied on)."""
    return ram["connections"].get(port) == ["1"]


def _plain_register(ff: dict, clock: list, inverted: bool) -> bool:
    """A TRELLIS_FF on `clock` (and its edge) that loads on every clock and is never set or reset."""
    c = ff["connections"]
    enabled = (_param(ff, "CEMUX", "CE") == "1" or (_param(ff, "CEMUX", "CE") == "CE" and _tied(ff, "CE", "1"))
               or (_param(ff, "CEMUX", "CE") == "INV" and _tied(ff, "CE", "0")))
    never_reset = ((_param(ff, "LSRMUX", "LSR") == "LSR" and _tied(ff, "LSR", "0"))
                   or (_param(ff, "LSRMUX", "LSR") == "INV" and _tied(ff, "LSR", "1")))
    edge_matches = (_param(ff, "CLKMUX", "CLK") == "INV") == inverted
    return ff["type"] == "TRELLIS_FF" and c.get("CLK") == clock and edge_matches and enabled and never_reset


def absorb(netlist: dict) -> list[Absorbed]:
    """Give every DP16KD whose outputs all feed plain registers (see the module's text) its output register, and
    remove those flip-flops; the netlist is changed in place. The RAMs changed, with the flip-flops each took."""
    top = _top(netlist)
    cells: dict[str, dict] = top["cells"]
    loads: dict[int, list[tuple[str, str]]] = {}
    for name, cell in cells.items():
        for port, bits in cell.get("connections", {}).items():
            if cell.get("port_directions", {}).get(port) != "output":
                for b in bits:
                    loads.setdefault(b, []).append((name, port))
    for port_name, port in top.get("ports", {}).items():
        if port.get("direction") != "input":
            for b in port["bits"]:
                loads.setdefault(b, []).append(("", port_name))

    done = []
    for name, ram in list(cells.items()):
        if ram["type"] != "DP16KD" or _param(ram, "REGMODE_A", "NOREG") != "NOREG" \
                or _param(ram, "REGMODE_B", "NOREG") != "NOREG":
            continue
        c = ram["connections"]
        clock = c.get("CLKA")
        inverted = _param(ram, "CLKAMUX", "CLKA") == "INV"
        if clock != c.get("CLKB") or inverted != (_param(ram, "CLKBMUX", "CLKB") == "INV") \
                or not (_tied(ram, "RSTA", "0") and _tied(ram, "RSTB", "0")) \
                or not (_tied_on(ram, "CEA") and _tied_on(ram, "CEB")):
            continue
        registers: dict[str, str] = {}      # data output -> the flip-flop it alone feeds
        for out in DATA_OUTPUTS:
            bits = c.get(out, [])
            sinks = [s for b in bits if isinstance(b, int) for s in loads.get(b, [])]
            if not sinks:
                continue
            if len(sinks) != 1 or sinks[0][1] != "DI" or not sinks[0][0] \
                    or not _plain_register(cells[sinks[0][0]], clock, inverted):
                registers = {}
                break
            registers[out] = sinks[0][0]
        if not registers:
            continue
        for out, ff in registers.items():
            c[out] = cells.pop(ff)["connections"]["Q"]
        ram["parameters"]["REGMODE_A"] = ram["parameters"]["REGMODE_B"] = "OUTREG"
        c["OCEA"] = c["OCEB"] = ["1"]     # whichever half of the port the output register's enable belongs to
        done.append(Absorbed(name, len(registers)))
    return done


def absorb_file(path: Path) -> list[Absorbed]:
    """absorb() on a Yosys JSON netlist file, rewritten through a temporary name."""
    netlist = json.loads(path.read_text())
    done = absorb(netlist)
    write_text_atomic(path, json.dumps(netlist))
    return done
