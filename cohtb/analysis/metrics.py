"""What a report says about one run, computed from its manifest and its analysis."""

from __future__ import annotations

from dataclasses import dataclass, field

from cohtb.analysis.analyse import Analysis
from cohtb.analysis.reconcile import LineCheck
from cohtb.analysis.steady import fairness
from cohtb.run.kernels import built_label
from cohtb.monitor.models import LineStats
from cohtb.run.runs import Run
from cohtb.run.spec import GUEST_BENCHMARK


@dataclass
class RunMetrics:
    run: Run
    analysis: Analysis
    label: str = ""
    per_op: dict[str, float] = field(default_factory=dict)
    fields: dict[str, dict] = field(default_factory=dict)
    hot: list[dict] = field(default_factory=list)
    check: dict = field(default_factory=dict)

    @property
    def spec(self):
        return self.run.spec

    @property
    def throughput(self) -> float:
        return self.run.throughput

    @property
    def locked_share(self) -> float | None:
        w = self.run.manifest.workload
        if w.locked_ops is None:
            return None
        updates = w.lockref_updates if w.lockref_updates is not None else 2 * self.run.ops   # older runs: a get and a put
        return w.locked_ops / updates if updates else None

    @property
    def fairness(self):
        return fairness(self.run)

    def to_json(self) -> dict:
        f = self.fairness
        return {"run": self.run.id, "fairness": f.to_json() if f else None, "label": self.label, "spec": self.run.spec.to_json(),
                "throughput_ops_per_sim_s": self.throughput, "roi_seconds": self.run.roi_seconds, "ops": self.run.ops,
                "locked_share": self.locked_share, "per_op": self.per_op, "fields": self.fields, "hot": self.hot,
                "check": self.check}


def per_op(counts: dict[str, int], ops: float) -> dict[str, float]:
    """Ping-pong per operation from counters named as the monitor names them (global, region or line)."""
    dr = counts["dirtyReadsLocal"] + counts["dirtyReadsRemote"]
    vals = {"transfers": counts["transfers"], "crossSocketTransfers": counts["crossSocketTransfers"], "dirtyReads": dr,
            "dirtyReadsRemote": counts["dirtyReadsRemote"], "invalidations": counts["invalidations"]}
    return {k: v / ops for k, v in vals.items()}


def extra_text(extra: tuple[str, ...]) -> str:
    """A run's extra workload flags as name=value words ("--spinlock ticket" -> "spinlock=ticket")."""
    return " ".join(f"{a.lstrip('-')}={b}" for a, b in zip(extra[::2], extra[1::2]))


def lock_model(run: Run) -> str | None:
    """The spinlock of an SE run that takes one (lockref's lock word, list_batch's list lock): the one its workload
    recorded, or tas, the only one before the workloads had --spinlock. None for runs without one (rwsem,
    stat_counter; full system: the kernel's own)."""
    if run.spec.kernel:
        return None
    flags = getattr(run.manifest.workload, "flags", None) or {}
    if "spinlock" in flags:
        return flags["spinlock"]
    # before --spinlock: lockref's tuning flags (workloads/common/lockref.h) say the run took the tas lock
    return "tas" if "retries" in flags or run.spec.workload == "list_batch" else None


def kernel_name(run: Run) -> str:
    """A full-system run's kernel variant, and the dentry its build had when the name means another now."""
    return built_label(run.spec.kernel, run.manifest.kernel or {})


def placement(spec) -> str:
    """Where a full-system run's file dentry sits in its cache line (stat_file --dentry-line-offset)."""
    extra = dict(zip(spec.extra[::2], spec.extra[1::2]))
    offset = extra.get("--dentry-line-offset")
    return "dentry as allocated" if offset is None else f"dentry at line offset {offset}"


def run_label(run: Run) -> str:
    """What tells a run from the others of a report, with the repetition after the first. SE: policy/layout SxC,
    with the workload unless lockref, the lock model, its other extra flags (name=value) and the intruder.
    Full system: the kernel variant (and the dentry its build had, when the name meant another then), the guest's
    operation (or a workload of its own and its policy), SxC, where the dentry sits, its other flags, the lister's
    period and the window. The declaration a run was recorded under, if any, last."""
    spec = run.spec
    rep = (f" #{spec.seed}" if spec.seed > 1 else "") + (f" [{spec.declaration}]" if spec.declaration else "")
    if spec.kernel:
        flags = dict(zip(spec.extra[::2], spec.extra[1::2]))
        own = spec.workload != GUEST_BENCHMARK   # a workload of its own has its policy; stat_file's is the kernel's
        what = f"{spec.workload} {spec.policy}" if own else flags.get("--op", "stat")
        more = [f"{k.lstrip('-')}={v}" for k, v in flags.items() if k not in ("--op", "--dentry-line-offset")]
        more += [f"lister every {spec.intruder_period_us} µs"] if spec.intruder_period_us else []
        return (f"fs {kernel_name(run)} {what} {spec.sockets}x{spec.cores_per_socket}, "
                + "".join(f"{part}, " for part in ([] if own else [placement(spec)]) + more)
                + f"{spec.window_us} µs window{rep}")
    s = f"{spec.policy}/{spec.layout} {spec.sockets}x{spec.cores_per_socket}"
    if spec.workload != "lockref":
        s = f"{spec.workload} {s}"
    lock = lock_model(run)
    extra = [w for w in extra_text(spec.extra).split() if not w.startswith("spinlock=")]
    s += "".join(f" {w}" for w in ([f"spinlock={lock}"] if lock else []) + extra)
    s += " +intruder" if spec.intruder_period_us else ""
    return s + rep


FIELD_COUNTS = ("transfers", "crossSocketTransfers", "dirtyReadsLocal", "dirtyReadsRemote", "invalidations")
SOURCE_REGION = "monitor region"
SOURCE_IDEAL = "ideal model (no region left)"


def compute(run: Run, a: Analysis) -> RunMetrics:
    m = RunMetrics(run, a, run_label(run))
    ops = run.region_ops
    m.per_op = per_op(a.rtl.totals, ops)
    region_of_line = a.region_of_line()
    for f in run.fields:
        if not f.lines:
            m.fields[f.label] = {"lines": [], "source": "unmapped"}
            continue
        total = dict.fromkeys(FIELD_COUNTS, 0)
        source = SOURCE_REGION
        for line in f.lines:
            r = region_of_line.get(line)
            if r is not None:
                counts = a.rtl.regions[r.index]
            else:
                source = SOURCE_IDEAL
                st = a.ideal.lines.get(line)
                counts = st.to_json() if st else {}
            for k in total:
                total[k] += counts.get(k, 0)
        m.fields[f.label] = {"lines": f.lines, "source": source, "shares_line_with": sorted(
            {n for line in f.lines for n in (region_of_line[line].fields if line in region_of_line else []) if n != f.label}),
            **per_op(total, ops)}
    symbols_of_line = {k.line: k.symbols for k in run.manifest.kernel_symbols}
    for h in sorted((h for h in a.rtl.hot if h.valid), key=lambda h: -h.count)[:8]:
        st = a.ideal.lines.get(h.line) or LineStats()
        remote = st.crossSocketTransfers + st.dirtyReadsRemote
        m.hot.append({"line": h.line, "fields": region_of_line[h.line].fields if h.line in region_of_line else [],
                      "symbols": symbols_of_line.get(h.line, []),
                      "count": h.count, "error": h.error, "ideal_items": st.pingpong, "transfers": st.transfers,
                      "dirty_reads": st.dirty_reads, "remote_share": remote / st.pingpong if st.pingpong else 0.0,
                      "gem5": (a.gem5.lines.get(h.line) or LineCheck()).to_json()})
    it, g, c = a.ideal.totals, a.rtl.totals, a.gem5.totals
    m.check = {"ideal_transfers": it.transfers, "ideal_dirty_reads": it.dirty_reads, **c.to_json(),
               "matched": c.matched, "explained": c.explained, "unexplained": c.unexplained,
               "contended_lines": len(a.gem5.contended),
               "lines_outside_tolerance": len(a.gem5.outside), "verdict": a.gem5.verdict,
               "event_format": a.gem5.event_format,
               "bounded_transfers": g["transfers"], "missed_by_bounded": it.transfers - g["transfers"],
               "state_evictions": g["stateEvictions"], "saturated": a.rtl.saturated, "model_check": a.model_check,
               "fwd_getx": it.fwdGetx, "inv": it.inv, "fwd_gets": it.fwdGets}
    return m
