"""`cohtb compare`: base vs new, as the seeds' tables (configuration, base, new, % change), then an
attribution of the throughput change to the cache lines whose traffic changed."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from cohtb.errors import CohtbError
from cohtb.analysis.metrics import RunMetrics, lock_model, placement
from cohtb.run.manifest import split_object_field
from cohtb.run.spec import RunSpec
from cohtb.tables import Table, num, pct
from cohtb.tables import count

METRICS = [("throughput (ops/sim µs)", lambda m: m.throughput / 1e6),
           ("transfers/op", lambda m: m.per_op["transfers"]),
           ("cross-socket transfers/op", lambda m: m.per_op["crossSocketTransfers"]),
           ("dirty reads (HITM)/op", lambda m: m.per_op["dirtyReads"]),
           ("invalidations/op", lambda m: m.per_op["invalidations"])]


def pair_table(base: RunMetrics, new: RunMetrics) -> Table:
    rows = [[name, num(f(base)), num(f(new)), pct(f(base), f(new))] for name, f in METRICS]
    if base.locked_share is not None and new.locked_share is not None:
        rows.append(["operations that took the lock", f"{base.locked_share * 100:.1f}%", f"{new.locked_share * 100:.1f}%",
                     pct(base.locked_share, new.locked_share)])
    fields = list(dict.fromkeys(list(base.fields) + list(new.fields)))
    alone = one_object(fields)
    for field in fields:
        b, n = base.fields.get(field, {}), new.fields.get(field, {})
        if b.get("lines") and n.get("lines"):
            bv, nv = b["transfers"] + b["dirtyReads"], n["transfers"] + n["dirtyReads"]
            if bv or nv:   # a field untouched in both runs says nothing about the change
                rows.append([f"{fields_text([field], alone)}: transfers + HITM/op", num(bv), num(nv), pct(bv, nv)])
    return Table(f"{base.label} -> {new.label}", ["", "base", "new", "% change"], rows)


def configuration_tables(pairs: list[tuple[RunMetrics, RunMetrics]], base_name: str, new_name: str) -> list[Table]:
    """One row per configuration, as the seed tables are laid out."""
    out = []
    for title, f in METRICS[:3]:
        rows = [[configuration(b, base_name.split("=")[0]), num(f(b)), num(f(n)), pct(f(b), f(n))] for b, n in pairs]
        out.append(Table(f"{title}: {base_name} vs {new_name}", ["Configuration", f"{base_name}", f"{new_name}", "% Change"], rows))
    return out


def configuration(m: RunMetrics, compared: str) -> str:
    """The run's configuration apart from the key being compared."""
    s = m.spec
    parts = [f"{count(s.sockets, 'socket')} x {count(s.cores_per_socket, 'core')}"]
    if s.kernel:   # the kernel variant is the policy and the layout; the placement is what else differs
        parts += [f"kernel {s.kernel}"] if compared != "kernel" else []
        parts.append(placement(s))
    else:
        parts += [f"{k} {getattr(s, k)}" for k in ("policy", "layout") if k != compared]
        lock = lock_model(m.run)
        parts += [f"spinlock {lock}"] if lock else []
    return ", ".join(parts) + (", intruder" if s.intruder_period_us else "")


@dataclass
class LineCost:
    key: str
    base_ns: float
    new_ns: float


def line_keys(m: RunMetrics, lines=None, alone: bool | None = None) -> dict[int, str]:
    """Each line of the run's ideal statistics (or each of `lines`) named by the fields on it (or, in a full-system
    run, the kernel globals on it), so lines can be matched across runs whose layouts put the fields at other
    addresses; with their object's name unless `alone` (by default: whether the run's fields are of one object; runs
    compared pass what holds for all of them, objects_alone, so that a line has one name in each)."""
    names = {r.line: r.fields for r in m.analysis.regions}
    symbols = {k.line: k.symbols for k in m.run.manifest.kernel_symbols}   # full-system runs: the kernel's globals
    alone = objects_alone(m) if alone is None else alone
    out = {}
    for line in m.analysis.ideal.lines if lines is None else lines:
        fields = names.get(line)
        if fields:
            out[line] = "line of " + fields_text(fields, alone)
        elif line in symbols:
            out[line] = "line of kernel " + symbols_text(symbols[line])
        else:
            out[line] = f"line at {m.analysis.address(line):#x}"   # an address, as perf c2c shows a line
    return out


def one_object(fields: list[str]) -> bool:
    """Whether the fields ("object.field") are all of one object: then a field's name alone says which it is."""
    return len({f.split(".", 1)[0] for f in fields}) <= 1


def objects_alone(*ms: RunMetrics) -> bool:
    """Whether the runs' monitored fields are all of one object (one_object over every run's)."""
    return one_object([f for m in ms for r in m.analysis.regions for f in r.fields])


def fields_text(fields: list[str], alone: bool) -> str:
    """The fields ("object.field") on one line; unless the run's fields are all of one object (alone), each
    object's after its name once ("tmpfs_root's d_lockref, d_lru/d_wait"): two objects of one type (a file's dentry
    and its directory's) have the same fields, and their lines must not be taken, or added up, as one."""
    if alone:
        return ", ".join(f.split(".", 1)[-1] for f in fields)
    objects: dict[str, list[str]] = {}
    for f in fields:
        o, _, field = f.partition(".") if "." in f else ("", "", f)
        objects.setdefault(o, []).append(field)
    return "; ".join(f"{o}'s {', '.join(fs)}" if o and fs != [o] else ", ".join(fs)   # a lone counter is its field
                     for o, fs in objects.items())


def symbols_text(syms: list[str], most: int = 3, most_fields: int = 8) -> str:
    """Kernel names on one line, each object's fields after its name once ("thread 3's task_struct: __state,
    on_cpu"), at most `most` names or objects and `most_fields` fields of each (a scheduler line's telling field,
    pi_lock or wake_q, is rarely its first)."""
    objects: dict[str, list[str]] = {}
    for name in syms:
        split = split_object_field(name)   # a field of a reported object (a benchmark thread's task_struct)
        if split:
            objects.setdefault(split[0], []).append(split[1])
        else:
            objects.setdefault(name, [])

    def some(names: list[str], k: int, sep: str = ", ") -> str:
        return sep.join(names[:k]) + (f" and {len(names) - k} more" if len(names) > k else "")
    grouped = any(objects.values())
    return some([f"{o}: {some(f, most_fields)}" if f else o for o, f in objects.items()], most,
                "; " if grouped else ", ")


def line_costs(m: RunMetrics, alone: bool | None = None) -> dict[str, float]:
    """Estimated coherence latency per operation on each line (ns), by line_keys' names: each transfer or dirty
    read costs a round trip over the links it crosses (cross-socket: socket + local links; local: local links)."""
    system = m.run.manifest.system
    ghz = system.clock_hz / 1e9
    local = 2 * system.params.local_latency / ghz
    remote = 2 * (system.params.socket_latency + system.params.local_latency) / ghz
    keys = line_keys(m, alone=alone)
    out: dict[str, float] = {}
    for line, st in m.analysis.ideal.lines.items():
        key = keys[line]
        rem = st.crossSocketTransfers + st.dirtyReadsRemote
        loc = st.transfers - st.crossSocketTransfers + st.dirtyReadsLocal
        out[key] = out.get(key, 0.0) + (rem * remote + loc * local) / m.run.region_ops
    return out


def attribution(base: RunMetrics, new: RunMetrics, top: int = 6) -> tuple[Table, str]:
    """Splits the change in simulated time per operation over the lines whose estimated cost changed."""
    alone = objects_alone(base, new)
    bc, nc = line_costs(base, alone), line_costs(new, alone)
    rows = [LineCost(k, bc.get(k, 0.0), nc.get(k, 0.0)) for k in dict.fromkeys(list(bc) + list(nc))]
    rows.sort(key=lambda r: -abs(r.new_ns - r.base_ns))
    total = sum(r.new_ns - r.base_ns for r in rows)
    gross = sum(abs(r.new_ns - r.base_ns) for r in rows)
    measured = 1e9 / new.throughput - 1e9 / base.throughput
    shown = rows[:top]
    # the line that costs most may change little, and is then what both runs pay alike: shown too
    costliest = max(rows, key=lambda r: max(r.base_ns, r.new_ns), default=None)
    if costliest is not None and costliest not in shown:
        shown.append(costliest)
    table = Table(f"Attribution: {base.label} -> {new.label}",
                  ["line (fields on it)", "base ns/op", "new ns/op", "change ns/op", "share of all line changes"],
                  [[r.key, num(r.base_ns, 1), num(r.new_ns, 1), f"{r.new_ns - r.base_ns:+.1f}",
                    f"{(r.new_ns - r.base_ns) / gross * 100:+.0f}%" if gross else "-"] for r in shown],
                  "Estimated from each line's exact transfers and dirty reads per operation, weighted by the round trip over "
                  "the system's links (the run's local and socket link latencies). System time per operation is "
                  "1 / throughput; the estimate is a latency budget, not a cycle-accurate account. The share is of the "
                  "lines' changes in either direction (their absolute sum), so it stays meaningful when they cancel. "
                  f"The {top} largest changes, and the line that costs most in either run if it is not among them.")
    lead = rows[0] if rows else None
    thr = pct(base.throughput, new.throughput)
    text = (f"{new.label} vs {base.label}: throughput {thr} ({measured:+.0f} ns of simulated time per operation). "
            f"Estimated coherence cost changed by {total:+.0f} ns/op")
    if lead:
        b_line = line_stats(base, lead.key, alone)
        n_line = line_stats(new, lead.key, alone)
        text += (f"; the largest part, {lead.new_ns - lead.base_ns:+.0f} ns/op, is on the {lead.key}: "
                 f"cross-socket transfers per operation {b_line[0]:.3f} -> {n_line[0]:.3f}, "
                 f"dirty reads (HITM) {b_line[1]:.3f} -> {n_line[1]:.3f}.")
    return table, text


TURNS_TITLE = "The hottest line's turns"
CHAIN_ROWS = [("a core of another socket", "other_socket"), ("another core of the same socket", "same_socket"),
              ("the same core again", "same_core")]


@dataclass
class TurnsPerOp:
    """One run's hottest-line turns per operation of the trace's region: per kind (CHAIN_ROWS' keys), turns and ns;
    the line's span in ns; and the run's simulated time per operation (1 / throughput)."""

    per_op: dict[str, float]
    ns_per_op: dict[str, float]
    span_ns_per_op: float
    time_ns_per_op: float

    def each_ns(self, kind: str) -> float | None:
        """The mean time a turn of the kind lasted (ns); None when the run had none."""
        n = self.per_op[kind]
        return self.ns_per_op[kind] / n if n else None


def turns_per_op(m: RunMetrics) -> TurnsPerOp | None:
    """The run's TurnsPerOp (None when its analysis has no chain). The trace is the region of interest, which a timed
    run's window gives to within one of thread 0's operations: the turns are per operation of the region (the
    window's operations at the window's rate)."""
    c = m.analysis.chain
    if c is None:
        return None
    ops = m.run.region_ops
    return TurnsPerOp(per_op={k: getattr(c, k).count / ops for _, k in CHAIN_ROWS},
                      ns_per_op={k: getattr(c, k).ticks / 1000 / ops for _, k in CHAIN_ROWS},   # ticks are ps
                      span_ns_per_op=c.span_ticks / 1000 / ops, time_ns_per_op=1e9 / m.throughput)


def chain_table(base: RunMetrics, new: RunMetrics) -> Table | None:
    """Where the time per operation went on each run's hottest line (cohtb/analysis/line_chain.py): per kind of
    turn, turns per operation, their mean gap and the product; None when a run's analysis has no chain."""
    ts = turns_per_op(base), turns_per_op(new)
    if None in ts:
        return None

    def cells(t: TurnsPerOp, k: str) -> list[str]:
        each = t.each_ns(k)
        return [num(t.per_op[k]), "-" if each is None else num(each, 0), num(t.ns_per_op[k], 0)]

    def change(k: str) -> str:
        return f"{ts[1].ns_per_op[k] - ts[0].ns_per_op[k]:+.0f}"
    rows = [[label, *cells(ts[0], k), *cells(ts[1], k), change(k)] for label, k in CHAIN_ROWS]
    for label, f in (("all turns (the line's first to last event)", lambda t: t.span_ns_per_op),
                     ("simulated time per operation (1 / throughput)", lambda t: t.time_ns_per_op)):
        rows.append([label, "", "", num(f(ts[0]), 0), "", "", num(f(ts[1]), 0), f"{f(ts[1]) - f(ts[0]):+.0f}"])
    names = [line_keys(m, [m.analysis.chain.line], objects_alone(base, new))[m.analysis.chain.line] for m in (base, new)]
    line = (names[0] if names[0] == names[1] else
            f"{names[0]} (base), {names[1]} (new): the rows compare two lines, each its run's hottest")
    return Table(f"{TURNS_TITLE}: {base.label} -> {new.label}",
                 ["the line went to", "base per op", "base mean ns", "base ns/op", "new per op", "new mean ns",
                  "new ns/op", "change ns/op"], rows,
                 f"The line: {line}. In each run's trace, the hottest line's reads and writes (a core obtaining it) "
                 "and the gaps between one and the next, put under where the line went "
                 "(cohtb/analysis/line_chain.py), per operation of the trace's region (a timed run's window to within "
                 "one of thread 0's operations). They add up to the line's span, which is at most the region: "
                 "all turns against the time per operation shows how much of it the line's turns cover. A gap is a "
                 "transfer and the new owner's time with the line until the next one took it (a critical section, a "
                 "lock's hand-over), and any time nobody wanted the line: the trace does not tell these apart.")


def line_stats(m: RunMetrics, key: str, alone: bool | None = None) -> tuple[float, float]:
    keys = line_keys(m, alone=alone)
    xs = dr = 0
    for line, st in m.analysis.ideal.lines.items():
        if keys[line] == key:
            xs += st.crossSocketTransfers
            dr += st.dirty_reads
    return xs / m.run.region_ops, dr / m.run.region_ops


def parse_by(text: str) -> tuple[str, str, str]:
    """`--by KEY=BASE,NEW` -> (key, base value, new value); KEY is a field of the runs' spec."""
    try:
        key, values = text.split("=", 1)
        base_value, new_value = values.split(",", 1)
    except ValueError:
        raise CohtbError(f"--by wants KEY=BASE,NEW (e.g. layout=shared,split), got '{text}'") from None
    keys = [f.name for f in fields(RunSpec)]
    if key not in keys:
        raise CohtbError(f"--by {key}: runs have no '{key}' (keys: {', '.join(keys)})")
    return key, base_value, new_value


def pair_by_key(ms: list[RunMetrics], key: str, base_value: str, new_value: str) -> list[tuple[RunMetrics, RunMetrics]]:
    """Pairs runs that differ only in `key` (a RunSpec field, as parse_by checks), base_value vs new_value."""
    def rest(m: RunMetrics) -> tuple:
        return tuple((k, str(v)) for k, v in sorted(m.run.spec.to_json().items()) if k != key)
    bases = {rest(m): m for m in ms if str(m.run.spec.to_json()[key]) == base_value}
    pairs = [(bases[rest(m)], m) for m in ms if str(m.run.spec.to_json()[key]) == new_value and rest(m) in bases]
    if not pairs:
        raise CohtbError(f"compare: no runs differ only in {key}={base_value} vs {key}={new_value}")
    return pairs


TOLD_APART = (("machine", "on {}"), ("cpu", "{} cores"), ("window_us", "{} µs window"), ("seed", "seed {}"))


def tell_apart(base: RunMetrics, new: RunMetrics) -> tuple[RunMetrics, RunMetrics]:
    """The pair with labels that differ: where a report's label leaves out what sets them apart (the machine, the
    core model, the window, the repetition), each label names it."""
    if base.label != new.label:
        return base, new
    differ = [(k, form) for k, form in TOLD_APART if getattr(base.spec, k) != getattr(new.spec, k)]
    return tuple(replace(m, label=m.label + "".join(f", {form.format(getattr(m.spec, k))}" for k, form in differ))
                 for m in (base, new))


def check_comparable(base: RunMetrics, new: RunMetrics, allow_mismatch: bool) -> str | None:
    """An error for runs of different machines or workloads (unless allowed); a note for a run against itself."""
    if base.run.path.resolve() == new.run.path.resolve():
        return f"note: {base.run.id} is compared with itself: every change is 0"
    b, n = base.spec, new.spec
    differ = [f"{k} {getattr(b, k)} vs {getattr(n, k)}" for k in ("workload", "sockets", "cores_per_socket")
              if getattr(b, k) != getattr(n, k)]
    builds = base.run.manifest.gem5.build, new.run.manifest.gem5.build
    if None not in builds and builds[0] != builds[1]:   # runs recorded before builds were kept say nothing
        differ.append(f"gem5 build {builds[0]} vs {builds[1]}")
    if differ and not allow_mismatch:
        raise CohtbError(f"compare: {base.run.id} and {new.run.id} differ in {', '.join(differ)}: not the same machine, "
                         "workload and simulator (--allow-mismatch compares them anyway)")
    return None
