"""docs/results.md: for each seed, the experiment, published vs simulated with the spread of the
repetitions, the attribution to lines and fields, a plot, and where the two disagree, why. Written by
`cohtb results` from kept runs (reference-runs/ or results/runs/); the README carries its headline table.
Every number on the page is computed here from those runs."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

from cohtb.analysis.compare import attribution
from cohtb.atomic import write_text_atomic
from cohtb.errors import CohtbError
from cohtb.analysis.metrics import RunMetrics
from cohtb.analysis.steady import fairness
from cohtb.experiments.reproduce import (PointResult, SeriesResult, Verdict, collapse_verdict, point_results,
                                         series_result, verdict)
from cohtb.experiments.reproduce import NULL_EFFECT, RATIO_FACTOR
from cohtb.experiments.seeds import EXPERIMENTS, INTERVAL_US, REPETITIONS, SKEW_NS, WARMUP_US, WINDOW_US, Experiment
from cohtb.report.tables import Table

COMMAND = "cohtb results"
BEGIN, END = f"<!-- results: written by `{COMMAND}`; do not edit -->", "<!-- end of results -->"


@dataclass
class SeedResult:
    experiment: Experiment
    points: list[PointResult]
    series: list[SeriesResult]
    missing: list[str]

    @property
    def complete(self) -> bool:
        return not self.missing


def seed_results(ms: list[RunMetrics]) -> list[SeedResult]:
    have = {m.run.id for m in ms}
    out = []
    for e in EXPERIMENTS.values():
        missing = [s.id for s in e.specs() if s.id not in have]
        mine = [m for m in ms if m.run.id in {s.id for s in e.specs()}]
        out.append(SeedResult(e, point_results(e.points, mine), [series_result(s, mine) for s in e.series], missing))
    return out


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if v >= 1000 else f"{v:g}"


def _speedup(r: float) -> str:
    return f"{(r - 1) * 100:+.0f}%"


def point_verdicts(p: PointResult) -> list[tuple[str, Verdict]]:
    return [(pub.configuration, verdict(pub, p.ratio)) for pub in p.point.published]


def point_table(res: SeedResult) -> Table:
    e = res.experiment
    rows = []
    for p in res.points:
        if not p.complete:
            continue
        for pub in p.point.published:
            v = verdict(pub, p.ratio)
            rows.append([p.point.label, pub.configuration, f"{_fmt(pub.base)} -> {_fmt(pub.new)} {pub.unit}",
                         _speedup(pub.ratio), p.base_throughput.text(1e-6), p.new_throughput.text(1e-6),
                         f"{_speedup(p.ratio.mean)} ({_speedup(p.ratio.lo)} to {_speedup(p.ratio.hi)})", v.text])
    return Table(f"Seed {e.seed}: {e.base_name} -> {e.new_name}",
                 ["simulated", "published", "published base -> new", "published change", f"simulated {e.base_name} (ops/µs)",
                  f"simulated {e.new_name} (ops/µs)", "simulated change (range)", "reproduced"], rows,
                 "Simulated: mean (min-max) of the repetitions; the range of the speed-up is over every pair of "
                 "repetitions. Reproduced: the sign holds beyond that range (docs/results.md, 'How to read').")


def fairness_table(res: SeedResult) -> Table:
    rows = []
    for p in res.points:
        for name, runs in ((res.experiment.base_name, p.base), (res.experiment.new_name, p.new)):
            fs = [f for f in (fairness(m.run) for m in runs) if f]
            if fs:
                rows.append([p.point.label, name, f"{min(f.ratio for f in fs):.2f}-{max(f.ratio for f in fs):.2f}",
                             f"{min(f.socket_ratio for f in fs):.2f}-{max(f.socket_ratio for f in fs):.2f}"])
    return Table(f"Seed {res.experiment.seed}: fairness (window ops, least / most)",
                 ["simulated", "runs", "thread min/max (range over repetitions)", "socket min/max (per thread)"], rows)


def representative(p: PointResult) -> tuple[RunMetrics, RunMetrics] | None:
    """The first repetition of base and new (the attribution's pair)."""
    if not p.complete:
        return None
    by_seed = lambda runs: min(runs, key=lambda m: m.spec.seed)
    return by_seed(p.base), by_seed(p.new)


def disagreement(res: SeedResult) -> list[str]:
    """A plain statement for every published row the simulation misses in sign or by more than 2x."""
    out = []
    for p in res.points:
        if not p.complete:
            continue
        for pub in p.point.published:
            v = verdict(pub, p.ratio)
            if not v.reproduced or "differs" in v.text:
                out.append(f"{p.point.label} vs {pub.configuration}: published {_speedup(pub.ratio)}, simulated "
                           f"{_speedup(p.ratio.mean)} — {v.text}.")
    return out


def headline(results: list[SeedResult]) -> Table:
    rows = []
    for res in results:
        e = res.experiment
        if not res.complete:
            rows.append([e.seed, e.title, "-", "-", f"not run ({len(res.missing)} of {len(e.specs())} runs missing)"])
            continue
        main = max(res.points, key=lambda p: p.point.base.sockets) if res.points else None
        pub = main.point.published[0]
        v = verdict(pub, main.ratio)
        rows.append([e.seed, f"{e.title}: {e.base_name} -> {e.new_name}, {main.point.label}", _speedup(pub.ratio),
                     f"{_speedup(main.ratio.mean)} ({_speedup(main.ratio.lo)} to {_speedup(main.ratio.hi)})", v.text])
        for s in res.series:
            cv = collapse_verdict(s)
            rows.append([e.seed, f"{e.title}: {s.series.label}",
                         f"{_speedup(s.series.published[0].ratio)} (retry100, lasting)",
                         _series_text(s), cv.text])
    return Table("Seeds: published vs simulated speed-up", ["seed", "effect", "published", "simulated (range)", "reproduced"], rows)


def _series_text(s: SeriesResult) -> str:
    parts = []
    for policy in s.runs:
        f = s.trough(policy)
        if f is not None:
            parts.append(f"{policy} lowest interval {_speedup(f.mean)} ({_speedup(f.lo)} to {_speedup(f.hi)})")
    return ", ".join(parts) or "-"


def provenance(ms: list[RunMetrics]) -> str:
    """Where the runs are and which gem5 recorded them, from their manifests."""
    if not ms:
        return "no runs are recorded yet"
    from cohtb.toolchain import ROOT

    dirs = sorted({str(m.run.path.parent.relative_to(ROOT)) if m.run.path.is_relative_to(ROOT) else str(m.run.path.parent)
                   for m in ms})
    versions = sorted({str((m.run.manifest.model_extra or {}).get("gem5", {}).get("version", "?")) for m in ms})
    return f"{len(ms)} runs in {', '.join(f'`{d}/`' for d in dirs)}, recorded with gem5 {', '.join(versions)}"


def sources(e: Experiment) -> list[str]:
    """Where each published figure of the experiment was published, and the lines it is printed on."""
    pubs = [pub for p in e.points for pub in p.published] + [pub for s in e.series for pub in s.published]
    out = []
    for src in dict.fromkeys(pub.source for pub in pubs):
        out += [f"**Source.** {src.citation()}. The figures, as printed there:", ""]
        out += [f"- {pub.configuration} ({pub.where}): " + " / ".join(f"`{q}`" for q in pub.quote)
                for pub in dict.fromkeys(pubs) if pub.source == src]
        out.append("")
    return out


def page(results: list[SeedResult], figures: dict[str, list[str]], ms: list[RunMetrics]) -> str:
    out = ["# Results: the seeds, simulated", "",
           f"Written by `{COMMAND}` from the kept runs ({provenance(ms)}; `cohtb seeds --seed S --launch` records "
           "them); `tests/test_results.py` fails when this page is not what the runs give. Every number below is "
           "computed from those runs.", "",
           "## Headline", "", headline(results).markdown(), "## How to read", "",
           textwrap.fill(f"Each configuration is run {REPETITIONS} times with perturbed starts (`--seed` 1-{REPETITIONS}: "
                         f"every thread waits a seeded-random 0-{SKEW_NS} ns before its first operation), after a "
                         f"warm-up of {WARMUP_US} µs, over a window of {WINDOW_US} µs of simulated time in "
                         f"{WINDOW_US // INTERVAL_US} intervals (will-it-scale's measurement; seed 004's collapse runs a "
                         "longer window, below). A change is new/base throughput - 1; its range is over every pair of "
                         "repetitions. A comparison is a reproduction only when its sign holds beyond that range; a "
                         f"row the author calls no change is reproduced by a simulated change under {NULL_EFFECT:.0%}. "
                         f"A reproduced change more than {RATIO_FACTOR:g}x (or under 1/{RATIO_FACTOR:g}) the published "
                         "one is called out. No simulation parameter was set to approach a published number.", 100,
                         break_on_hyphens=False), ""]
    for res in results:
        e = res.experiment
        out += [f"## Seed {e.seed}: {e.title}", "", f"**Change.** {e.change}.", "",
                f"**Published.** {e.published_setup}.", "", *sources(e), f"**Simulated.** {e.simulated_setup}.", "",
                f"**What differs.** {e.differences}.", ""]
        if res.missing:
            out += [f"Not run yet: {len(res.missing)} of {len(e.specs())} runs are missing "
                    f"(`cohtb seeds --seed {e.seed} --launch` records them).", ""]
            continue
        out += [point_table(res).markdown(), fairness_table(res).markdown()]
        for i, name in enumerate(figures.get(e.seed, [])):
            out += [f"![seed {e.seed}](results/{name})", ""]
            if i:   # a series figure
                out += [textwrap.fill(
                    "Top: ops per interval. Middle: the share of the lockref updates in each interval that took the "
                    "spinlock (the workload's own count). Bottom: cache-line transfers per operation in each interval, "
                    "from the coherence monitor's snapshots over simulated time (`cohtb launch --live` takes them "
                    "while gem5 runs; for a run recorded to a file, the same counting of its event file, which gives "
                    "the same numbers). The monitor's intervals start at the first traced event.", 100), ""]
        for p in res.points:
            pair = representative(p)
            if pair and p.point.base.sockets == max(q.point.base.sockets for q in res.points):
                table, text = attribution(*pair)
                table.title = f"Attribution, {p.point.label}, repetition 1: {table.title.split(': ', 1)[-1]}"
                out += [table.markdown(), textwrap.fill(text, 100), ""]
        for s in res.series:
            cv = collapse_verdict(s)
            per_us = 1 / (s.series.runs[0].interval_us)
            rows = [[policy, s.trough(policy).text() if s.trough(policy) else "-",
                     s.falls(policy).text() if s.falls(policy) else "-",
                     s.late(policy).text(per_us) if s.late(policy) else "-"] for policy in s.runs]
            out += [Table(f"Seed {e.seed}, {s.series.label}: ops per interval after the transient holder, against the "
                          "level before it (mean (min-max) of the repetitions)",
                          ["policy", "lowest interval / before", "last quarter / before", "last quarter (ops/µs)"], rows,
                          f"Published (retry100): {s.series.published[0].new:,.0f} / "
                          f"{s.series.published[0].base:,.0f} = {s.series.published[0].ratio:.2f}. "
                          f"Reproduced: {cv.text}.").markdown()]
        dis = disagreement(res)
        if dis:
            out += ["**Where the simulation disagrees.** " + " ".join(dis) + f" Differences that may explain it: "
                    f"{e.differences}.", ""]
    return "\n".join(out).rstrip() + "\n"


def readme_block(results: list[SeedResult]) -> str:
    return "\n".join([BEGIN, "", headline(results).markdown().strip(), "",
                      "Per seed: the experiment, published vs simulated with spread, the attribution to lines and "
                      "fields, plots: [docs/results.md](docs/results.md).", END])


def write_readme_block(readme: Path, block: str, check: bool) -> bool:
    text = readme.read_text()
    if BEGIN not in text or END not in text:
        raise CohtbError(f"{readme}: no results block (the lines {BEGIN!r} ... {END!r})")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    new = head + block + tail
    if check:
        return new == text
    if new != text:
        write_text_atomic(readme, new)
    return True
