"""What a report says about one run, computed from its manifest and its counters.json."""

from __future__ import annotations

from dataclasses import dataclass, field

from .runs import Run

PER_OP = ("transfers", "crossSocketTransfers", "dirtyReads", "dirtyReadsRemote", "invalidations")


@dataclass
class RunMetrics:
    run: Run
    counters: dict
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
        w = self.run.manifest["workload"]
        if "locked_ops" not in w or not self.run.ops:
            return None
        return w["locked_ops"] / (2 * self.run.ops)   # a get and a put per operation

    def to_json(self) -> dict:
        return {"run": self.run.id, "label": self.label, "spec": self.run.manifest["spec"],
                "throughput_ops_per_sim_s": self.throughput, "roi_seconds": self.run.roi_seconds, "ops": self.run.ops,
                "locked_share": self.locked_share, "per_op": self.per_op, "fields": self.fields, "hot": self.hot,
                "check": self.check}


def per_op(counts: dict, ops: int) -> dict[str, float]:
    dr = counts["dirtyReadsLocal"] + counts["dirtyReadsRemote"]
    vals = {"transfers": counts["transfers"], "crossSocketTransfers": counts["crossSocketTransfers"], "dirtyReads": dr,
            "dirtyReadsRemote": counts["dirtyReadsRemote"], "invalidations": counts["invalidations"]}
    return {k: v / ops for k, v in vals.items()}


def run_label(spec) -> str:
    s = f"{spec.policy}/{spec.layout} {spec.sockets}x{spec.cores_per_socket}"
    return s + (" +intruder" if spec.intruder_period_us else "")


def compute(run: Run, counters: dict) -> RunMetrics:
    m = RunMetrics(run, counters, run_label(run.spec))
    ops = run.ops
    rtl = counters["rtl"]
    m.per_op = per_op(rtl["global"], ops)
    region_of_line = {r["line"]: r for r in counters["regions"]}
    ideal_lines = counters["ideal"]["lines"]
    for f in run.fields:
        if not f.lines:
            m.fields[f.label] = {"lines": [], "source": "unmapped"}
            continue
        total = dict.fromkeys(("transfers", "crossSocketTransfers", "dirtyReadsLocal", "dirtyReadsRemote", "invalidations"), 0)
        source = "monitor region"
        for line in f.lines:
            r = region_of_line.get(line)
            src = rtl["regions"][r["index"]] if r is not None else ideal_lines.get(str(line))
            if r is None:
                source = "ideal model (no region left)"
            if src:
                for k in total:
                    total[k] += src.get(k, 0)
        m.fields[f.label] = {"lines": f.lines, "source": source, "shares_line_with": sorted(
            {n for line in f.lines for n in (region_of_line.get(line) or {}).get("fields", []) if n != f.label}),
            **per_op(total, ops)}
    field_names = {line: r["fields"] for line, r in region_of_line.items()}
    for h in sorted((h for h in rtl["hot"] if h["valid"]), key=lambda h: -h["count"])[:8]:
        ideal = ideal_lines.get(str(h["line"]), {})
        items = ideal.get("transfers", 0) + ideal.get("dirtyReadsLocal", 0) + ideal.get("dirtyReadsRemote", 0)
        remote = ideal.get("crossSocketTransfers", 0) + ideal.get("dirtyReadsRemote", 0)
        m.hot.append({"line": h["line"], "fields": field_names.get(h["line"], []), "count": h["count"], "error": h["error"],
                      "ideal_items": items, "transfers": ideal.get("transfers", 0),
                      "dirty_reads": ideal.get("dirtyReadsLocal", 0) + ideal.get("dirtyReadsRemote", 0),
                      "remote_share": remote / items if items else 0.0})
    it = counters["ideal"]["totals"]
    m.check = {"ideal_transfers": it["transfers"], "gem5_transfers": it["gem5Transfers"],
               "bounded_transfers": rtl["global"]["transfers"], "missed_by_bounded": it["transfers"] - rtl["global"]["transfers"],
               "state_evictions": rtl["global"]["stateEvictions"], "saturated": rtl["status"]["saturated"],
               "model_check": counters["model_check"],
               "fwd_getx": it["fwdGetx"], "inv": it["inv"], "fwd_gets": it["fwdGets"]}
    return m
