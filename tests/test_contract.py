"""The contract is defined once: the generated C header and Python constants match what the Chisel build
emitted, and no hand-written copy of a contract definition is left anywhere else in the repository."""

import ast
import re
import subprocess

import pytest

from cohtb import contract as ct
from cohtb.contract import codegen
from cohtb.monitor import config
from cohtb.run.gem5 import BUILDS
from cohtb.run.machines import HIERARCHIES
from cohtb.toolchain import ROOT


def test_generated_files_are_current():
    if not codegen.CONTRACT_JSON.exists():
        pytest.fail(f"{codegen.CONTRACT_JSON} missing: run the set-up (make rtl)")
    stale = [str(p.relative_to(ROOT)) for p, text in codegen.outputs().items() if p.read_text() != text]
    assert not stale, f"generated from an older contract: {stale}; run `make contract` and commit them"


def test_every_variant_agrees_with_the_contract():
    for variant in ("default", "small", "lru"):
        cfg = config.variant(variant)
        assert cfg.regmap.param_values["cores"] == cfg.params.cores
        names = {(s.group, s.name) for s in cfg.regmap.counters}
        assert {("global", n) for n in ct.GLOBAL_COUNTERS} <= names
        assert {("regions", n) for n in ct.REGION_COUNTERS} <= names
        assert {("hot", n) for n in ct.HOT_FIELDS} <= names


# (what, pattern, the only files allowed to hold it besides the generated ones and the docs)
DEFINITIONS = [
    ("the event file's magic", r"COHTBEVT", {"rtl/src/cohtb/EventFile.scala"}),
    ("an event-kind enumeration", r"\b(READ|WRITE|EVICT|FWD_GETS|FWD_GETX|INV)\s*=\s*\d", set()),
    ("an event-kind code table", r"EventKindInfo\(\"", {"rtl/src/cohtb/CoherenceEvent.scala"}),
    ("the record layout", r"\(\"tick\", ?\"<u8\"\)|struct record \{|uint64_t tick, line", set()),
    ("the header layout", r"<8sHH|8 \+ 2 \* 6", set()),
    ("a CSR address", r"\b(kCtrl|kCmd|kStatus|kRegionBase0)\b|\b(ctrl|cmd|status|region_enable)\s*(:\s*int)?\s*=\s*0x",
     {"rtl/src/cohtb/RegisterMap.scala"}),
    ("the global counter list", r"\"eventsRead\",\s*\"eventsWrite\"", {"rtl/src/cohtb/RegisterMap.scala"}),
    ("the region counter list", r"\"reads\",\s*\"writes\",\s*\"evicts\"", {"rtl/src/cohtb/RegisterMap.scala"}),
    ("the contiguous core->socket rule", r"\*\s*sockets\s*//\s*cores|//\s*per_socket|/\s*per_socket\b",
     {"cohtb/contract/__init__.py"}),
    ("the L1 state list", r"\"IS_I\",\s*\"M_I\"", {"rtl/src/cohtb/EventFile.scala"}),
    ("a default line size", r"line_size\s*(:\s*int)?\s*=\s*64|--line-size\", \"64", set()),
]


def _monitor_limit_copies() -> list[tuple[str, str, set[str]]]:
    """A comparison of a monitor parameter with its upper limit written out (`cores <= 64`, `2 <= self.cores <= 64`,
    `64 >= p.cores`): the limits are MonitorParams.scala's table, which Python reads from the contract."""
    out = []
    for limit in ct.MONITOR_LIMITS.values():
        name, most = re.escape(limit.name), limit.most
        out.append((f"the monitor's limit on {limit.name}",
                    rf"\b{name}\b\s*(<=|<|>=|>)\s*{most}\b|\b{most}\s*(>=|>)\s*[\w.]*\b{name}\b", set()))
    return out


DEFINITIONS += [
    ("a monitor parameter's limits", r"ParamLimit\(\"|must be (a power of two, )?\d+\.\.\d+", {"rtl/src/cohtb/MonitorParams.scala"}),
    ("a contract limit as a constant",
     r"\bMAX_(CORES|SOCKETS|LINE_BITS)\b[\w, ]*=\s*\d|#define\s+\w*MAX_(CORES|SOCKETS|LINE_BITS)\s+\d", set()),
    *_monitor_limit_copies(),
    # issue 33's repeated definitions, each now in one place
    ("the socket map's numbering check", r"sorted\(set\(range\(max\(", {"cohtb/trace/events.py"}),
    ("the block core->socket rule", r"\bcores?\s*//\s*(self\._)?cores_per_socket\b",
     {"gem5-configs/multisocket/placement.py"}),
    ("the home-socket rotation", r"\+\s*\(?\s*(self\._|spec\.|run\.spec\.)?home_socket\b[^%\n]*\)\s*%",
     {"gem5-configs/multisocket/placement.py"}),
    ("gem5's command line", r"\"-re\",\s*f?\"--outdir", {"cohtb/run/gem5.py"}),
    ("a file written whole by hand", r"\bos\.replace\(|\bmkstemp\(",
     {"cohtb/atomic.py", "gem5-configs/multisocket/region.py", "native/ingest/cohtb_ingest.c"}),
    ("a 64-bit CSR access as two 32-bit ones", r"read32\(\s*addr\s*\+\s*4\s*\)", {"cohtb/monitor/csr.py"}),
]
GENERATED = {"cohtb/contract/generated.py", "native/include/cohtb_contract.h"}
SOURCE = re.compile(r"\.(py|c|h|cpp|hpp|scala|sc)$")


def tracked_sources() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    return [f for f in out.stdout.split() if SOURCE.search(f) and f not in GENERATED and f != "tests/test_contract.py"]


@pytest.mark.parametrize("what, pattern, allowed", DEFINITIONS, ids=[d[0] for d in DEFINITIONS])
def test_no_hand_written_copy(what, pattern, allowed):
    rx = re.compile(pattern)
    hits = [f"{f}:{n}: {line.strip()}" for f in tracked_sources() if f not in allowed
            for n, line in enumerate((ROOT / f).read_text(errors="replace").splitlines(), 1) if rx.search(line)]
    assert not hits, f"{what} written out by hand (take it from the contract):\n" + "\n".join(hits)


def test_monitor_limits_are_the_contracts():
    """The Python side refuses what MonitorParams.scala's limits refuse, with the same rule, and takes a monitor up
    to them; its defaults are the Scala ones."""
    from dataclasses import replace

    from cohtb.errors import CohtbError
    from cohtb.monitor import ondemand

    base = config.MonitorParams()
    assert {f: getattr(base, f) for f in ct.MONITOR_DEFAULTS} == ct.MONITOR_DEFAULTS
    top = replace(base, **{limit.name: limit.most for limit in ct.MONITOR_LIMITS.values()})
    for limit in ct.MONITOR_LIMITS.values():
        bad = [limit.least - 1, limit.most + 1] + ([limit.most - 1] if limit.power_of_two else [])
        for value in bad:
            with pytest.raises(CohtbError, match=re.escape(limit.rule)):
                replace(top, **{limit.name: value})
    with pytest.raises(CohtbError, match=re.escape(ct.MONITOR_LIMITS["sockets"].rule)):
        replace(base, cores=4, sockets=5)
    assert (ondemand.CORES, ondemand.SOCKETS) == (ct.MONITOR_LIMITS["cores"], ct.MONITOR_LIMITS["sockets"])


def test_cohtb_and_the_gem5_configs_name_the_same_machines():
    """The configs run inside gem5 and cannot import cohtb: the hierarchies cohtb finds a gem5 build for
    (cohtb/run/gem5.py) must be the ones gem5-configs/multisocket/machine.py builds and its machine files name."""
    tree = ast.parse((ROOT / "gem5-configs" / "multisocket" / "machine.py").read_text())
    [table] = [n.value for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "MACHINES"]
    assert tuple(ast.literal_eval(k) for k in table.keys) == HIERARCHIES == tuple(BUILDS)
