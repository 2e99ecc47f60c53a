"""Every counting rule (cohtb/monitor/counting_rules.toml, shown in docs/counting-rules.md) through both models:
the bit-exact BoundedModel and the unbounded IdealModel. (cocotb-tests/tb_rules.py walks the same rows through the
RTL.)"""

import pytest

from cohtb.contract import KIND_COUNTERS, STATE_KINDS, Kind, contiguous_socket_map
from cohtb.errors import CohtbError
from cohtb.monitor import rule_table
from cohtb.monitor.config import MonitorParams
from cohtb.monitor.models import LINE_STATES, BoundedModel, IdealModel, LineState, line_state

RULES = rule_table.load()
P = MonitorParams(cores=8, sockets=2, sets=16, ways=4, hotEntries=4, regions=1)
SMAP = contiguous_socket_map(P.cores, P.sockets)
ROLE = rule_table.roles(SMAP)
LINE = 0x123


def run_setup(model, rule) -> None:
    for who, kind in rule.setup:
        core, socket = ROLE[who]
        model.apply(LINE, core, socket, kind)


def meaning(st: LineState | None) -> tuple | None:
    """What a state says: a line without an owner keeps its last owner's number, which means nothing."""
    if st is None:
        return None
    return (st.owner_valid, st.owner, st.owner_socket, st.dirty, st.holders) if st.owner_valid else (False, st.holders)


def expected_state(after: rule_table.After) -> LineState | None:
    if after.untracked:
        return None
    bits = sum(1 << ROLE[r][0] for r in after.holders)
    if after.owner is None:
        return LineState(holders=bits)
    core, socket = ROLE[after.owner]
    return LineState(True, core, socket, after.dirty, bits)


def test_the_table_covers_every_kind_and_state():
    """Every kind that changes line state has a row for every state; every other kind has a row (rule X)."""
    seen = {(r.kind.name, r.state) for r in RULES}
    assert {(k.name, s) for k in STATE_KINDS for s in LINE_STATES} <= seen
    assert {k.name for k in Kind} <= {k for k, _ in seen}


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_bounded_model(rule):
    m = BoundedModel(P)
    m.set_region(0, LINE, P.line_mask)
    run_setup(m, rule)
    a_core, a_socket = ROLE["A"]
    assert line_state(m.tracked(LINE), a_core) == rule.state, "the setup does not make the row's state"
    before = m.snapshot()
    m.apply(LINE, a_core, a_socket, rule.kind)
    after = m.snapshot()
    delta = {k: after.totals[k] - before.totals[k] for k in after.totals}
    assert delta["transfers"] == rule.transfer
    assert delta["crossSocketTransfers"] == rule.cross_socket
    assert delta["invalidations"] == rule.invalidations
    assert delta["dirtyReadsLocal"] == (rule.dirty_read == "local")
    assert delta["dirtyReadsRemote"] == (rule.dirty_read == "remote")
    assert delta[KIND_COUNTERS[rule.kind]] == 1
    region = {k: after.regions[0][k] - before.regions[0][k] for k in after.regions[0]}
    assert region["transfers"] == rule.transfer and region["invalidations"] == rule.invalidations
    # Per kind the regions count READ, WRITE and EVICT only.
    assert (region["reads"], region["writes"], region["evicts"]) == (
        rule.kind == Kind.READ, rule.kind == Kind.WRITE, rule.kind == Kind.EVICT)
    matrix_delta = sum(map(sum, after.matrix)) - sum(map(sum, before.matrix))
    assert matrix_delta == rule.transfer
    assert meaning(m.tracked(LINE)) == meaning(expected_state(rule.after))


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_ideal_model(rule):
    m = IdealModel(P.sockets)
    run_setup(m, rule)
    a_core, a_socket = ROLE["A"]
    assert line_state(m.lines.get(LINE), a_core) == rule.state
    before = m.totals()
    m.apply(LINE, a_core, a_socket, rule.kind)
    after = m.totals()
    assert after.transfers - before.transfers == rule.transfer
    assert after.crossSocketTransfers - before.crossSocketTransfers == rule.cross_socket
    assert after.invalidations - before.invalidations == rule.invalidations
    assert after.dirtyReadsLocal - before.dirtyReadsLocal == (rule.dirty_read == "local")
    assert after.dirtyReadsRemote - before.dirtyReadsRemote == (rule.dirty_read == "remote")
    assert meaning(m.lines.get(LINE)) == meaning(expected_state(rule.after))


def probe_signature(rule) -> tuple:
    """What each probe of rule_table.PROBES adds to the probe counters after the row (tb_rules holds the RTL to
    the model on exactly these)."""
    out = []
    for steps in rule_table.PROBES.values():
        m = BoundedModel(P)
        run_setup(m, rule)
        m.apply(LINE, *ROLE["A"], rule.kind)
        before = dict(m.snapshot().totals)
        for who, kind in steps:
            m.apply(LINE, *ROLE[who], kind)
        out.append(tuple(m.snapshot().totals[k] - before[k] for k in rule_table.PROBE_COUNTERS))
    return tuple(out)


def test_probes_tell_the_states_after_apart():
    """Rows that leave different states behind give different probe results, so the RTL, whose line table is
    seen only through its counters, cannot leave a wrong state unnoticed (cocotb-tests/tb_rules.py)."""
    by_signature: dict[tuple, set] = {}
    for rule in RULES:
        by_signature.setdefault(probe_signature(rule), set()).add(meaning(expected_state(rule.after)))
    assert all(len(states) == 1 for states in by_signature.values()), by_signature
    assert len(by_signature) == len({meaning(expected_state(r.after)) for r in RULES})



@pytest.mark.parametrize("old, new, field", [
    ("transfer = 1,", 'transfer = "1",', "rules.5.transfer"),           # a count written as text
    ('setup = ["B:W"]', 'setup = ["Q:W"]', "rules.5.setup"),            # a role no rule has
    ('event = "WRITE"', 'event = "WRIT"', "rules.5.event"),             # a kind the monitor has not
    ('holders = ["A"] }', 'holders = ["A", "Z"] }', "rules.5.after"),   # a holder no rule has
])
def test_damaged_rules_file_names_the_field(tmp_path, old, new, field):
    """A damaged rules file (here its sixth row, W-other-dirty) is one line naming the file and the field."""
    lines = rule_table.RULES.read_text().splitlines()
    row = next(i for i, line in enumerate(lines) if '"W-other-dirty"' in line)
    lines[row] = lines[row].replace(old, new)
    path = tmp_path / "counting_rules.toml"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(CohtbError) as e:
        rule_table.load(path)
    assert str(e.value).startswith(f"{path}: field '{field}") and "\n" not in str(e.value)
