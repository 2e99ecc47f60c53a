"""docs/results.md: for each seed, the experiment, published vs simulated with the spread of the
repetitions, the attribution to lines and fields, a plot, and where the two disagree, why. Written by
`cohtb results` from kept runs (reference-runs/ or results/runs/); the README carries its headline table.
Every number on the page is computed here from those runs."""

from __future__ import annotations

import textwrap
from dataclasses import replace
from pathlib import Path

from cohtb.analysis import lock_queue
from cohtb.analysis.compare import TURNS_TITLE, attribution, chain_table
from cohtb.atomic import write_text_atomic
from cohtb.errors import CohtbError
from cohtb.analysis.metrics import RunMetrics
from cohtb.analysis.profile import hot_instructions
from cohtb.analysis.steady import fairness
from cohtb.report import advice as advice_report
from cohtb.report import profile as profile_report
from cohtb.report.arm_summary import arm_table
from cohtb.report.queue_table import queue_table
from cohtb.report.turns_summary import turns_summary
from cohtb.report.lister_table import lister_table
from cohtb.experiments import advice, method_changes, power, profile_band
from cohtb.run.kernels import built_label
from cohtb.experiments.declarations import REPETITION_SOURCES, Declaration, machines
from cohtb.experiments.magnitude import __doc__ as MAGNITUDE
from cohtb.experiments.reproduce import PointResult, SeriesResult, Spread
from cohtb.experiments.rules import __doc__ as RULES, COLLAPSED_TO
from cohtb.experiments.judging import (Effect, SeedResult, collapsed, differences_beside_machine, machine_pairs, shown,
                                      standing)
from cohtb.experiments.seeds import Experiment
from cohtb.places import ROOT
from cohtb.run import cost
from cohtb.tables import Table, count, wrap

COMMAND = "cohtb results"
BEGIN, END = f"<!-- results: written by `{COMMAND}`; do not edit -->", "<!-- end of results -->"


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if v >= 1000 else f"{v:g}"


def _speedup(r: float) -> str:
    return f"{(r - 1) * 100:+.0f}%"


def _change(r) -> str:
    return f"{_speedup(r.mean)} ({_speedup(r.lo)} to {_speedup(r.hi)})"


def point_table(res: SeedResult) -> Table:
    e, d = res.experiment, res.declaration
    n = d.skew_only_repetitions
    rows = []
    for p in res.points:
        if not p.complete:
            continue
        for pub in p.point.published:
            v = res.verdict(p, pub)
            rows.append([p.point.label, pub.configuration, f"{_fmt(pub.base)} -> {_fmt(pub.new)} {pub.unit}",
                         _speedup(pub.ratio), p.base_throughput.text(1e-6), p.new_throughput.text(1e-6),
                         *([_change(p.ratio_of_first(n))] if n else []), _change(p.ratio), v.text])
    by_source = ([f"simulated change, start skew only (repetitions 1-{n})"] if n else [])
    return Table(f"Seed {e.seed}, declaration {d.id}: {e.base_name} -> {e.new_name}",
                 ["simulated", "published", "published base -> new", "published change", f"simulated {e.base_name} (ops/µs)",
                  f"simulated {e.new_name} (ops/µs)", *by_source,
                  "simulated change" + (", every source" if n else "") + " (range)", "reproduced"], rows,
                 f"Simulated: mean (min-max) of the {d.repetitions} repetitions; the range of the speed-up is over "
                 "every pair of repetitions" + (f"; the first {n} vary the start skew alone, the others "
                                                f"{' and '.join(d.repetition_sources[1:])} too, so the two ranges are "
                                                "the spread by source" if n else "") +
                 f". Reproduced: by the rule {d.rule} (docs/results.md, 'How to read').")


def fairness_table(res: SeedResult) -> Table:
    """Per configuration, the least over the most busy thread's window ops (and socket's), over the repetitions:
    each point's base and new, and each series' runs by label."""
    groups = [(p.point.label, name, runs) for p in res.points
              for name, runs in ((res.experiment.base_name, p.base), (res.experiment.new_name, p.new))]
    groups += [(sr.series.label, label, runs) for sr in res.series for label, runs in sr.runs.items()]
    rows = []
    for where, name, runs in groups:
        fs = [f for f in (fairness(m.run) for m in runs) if f]
        if fs:
            rows.append([where, name, f"{min(f.ratio for f in fs):.2f}-{max(f.ratio for f in fs):.2f}",
                         f"{min(f.socket_ratio for f in fs):.2f}-{max(f.socket_ratio for f in fs):.2f}"])
    return Table(f"Seed {res.experiment.seed}: fairness (window ops, least / most)",
                 ["simulated", "runs", "thread min/max (range over repetitions)", "socket min/max (per thread)"], rows)


def representative(p: PointResult) -> tuple[RunMetrics, RunMetrics] | None:
    """The first repetition of base and new (the attribution's pair)."""
    if not p.complete:
        return None
    return first_repetition(p.base), first_repetition(p.new)


def first_repetition(runs: list[RunMetrics]) -> RunMetrics:
    """Repetition 1 (the lowest seed) of a set of runs: the one an attribution is drawn from."""
    return min(runs, key=lambda m: m.spec.seed)


def disagreement(res: SeedResult) -> list[str]:
    """A plain statement for every published row of a judged point the simulation misses (in sign, effect or
    magnitude) or whose magnitude its rule calls out; under a shape rule, for every curve it does not reproduce."""
    out = []
    curves = res.curves
    if curves:   # a shape rule judges curves, not points: each curve it does not reproduce
        return [f"{name}: {v.text}." for name, v in curves.items() if not v.reproduced]
    for p in res.points:
        if not p.complete or not p.point.judged:
            continue
        for pub in p.point.published:
            v = res.verdict(p, pub)
            if not v.reproduced or v.called_out:
                out.append(f"{p.point.label} vs {pub.configuration}: published {_speedup(pub.ratio)}, simulated "
                           f"{_speedup(p.ratio.mean)} — {v.text}.")
    return out


def verdict_rows(res: SeedResult) -> list[list[str]]:
    """[effect, published, simulated, verdict] of the headline point and of each series, under res's declaration."""
    e, d = res.experiment, res.declaration
    if not res.complete and d.recorded_repetitions:
        return [[e.title, "-", "-", f"no verdict under {d.id}: {d.recorded_repetitions} of its {d.repetitions} "
                                    "repetitions were recorded (no spread)"]]
    if res.failed:
        return [[e.title, "-", "-", f"no verdict under {d.id}: {len(res.failed)} of its {len(e.specs())} runs failed "
                                    f"({len(res.missing)} not kept; each failure's record, with why: <run id>.failed.json beside "
                                    "the kept runs)"]]
    if not res.complete:
        return [[e.title, "-", "-", not_complete(res)]]
    return [effect_row(e, x) for x in res.effects]


def effect_row(e: Experiment, x: Effect) -> list[str]:
    """[effect, published, simulated, verdict] of one verdict of the declaration."""
    if x.kind == "curve":
        published = "; ".join(f"{p.point.base.sockets}: " + " to ".join(dict.fromkeys(
            _speedup(r) for r in (min(q.ratio for q in p.point.published), max(q.ratio for q in p.point.published))))
            for p in x.points)
        simulated = "; ".join(f"{p.point.base.sockets}: {_speedup(p.ratio.mean)}" for p in x.points)
        return [f"{e.title}: {e.base_name} -> {e.new_name}, {x.name} (shape over the sockets)", published,
                simulated, x.verdict.text]
    if x.kind == "point":
        main, pub = x.points[0], x.published
        return [f"{e.title}: {e.base_name} -> {e.new_name}, {main.point.label} (vs {pub.configuration})",
                _speedup(pub.ratio), f"{_speedup(main.ratio.mean)} ({_speedup(main.ratio.lo)} to "
                f"{_speedup(main.ratio.hi)})", x.verdict.text]
    sr = x.series
    return [f"{e.title}: {sr.series.label}", f"{sr.series.published[0].ratio:.2f} of its level, lasting (retry100)",
            _series_text(sr), x.verdict.text]


def seed_text(res: SeedResult) -> str:
    """A declaration's judgement for the terminal (`cohtb seeds --seed S`): its speed-up table, which holds the
    headline point's verdict, then every other verdict, one wrapped line each (a shape rule's curves, the series)."""
    lines = [point_table(res).text()] if res.points else []   # a seed of series alone has no speed-up table
    rows = verdict_rows(res)[1 if res.points and not res.curves else 0:]
    lines += [wrap(f"{row[0]}: {row[-1]}") for row in rows]
    return "\n".join(lines)


def not_complete(res: SeedResult) -> str:
    """A declaration without all its runs: none yet, or how many are kept."""
    n, missing = len(res.experiment.specs()), len(res.missing)
    if missing == n:
        return f"not run yet under {res.declaration.id} ({count(n, 'run')} to record)"
    return f"incomplete under {res.declaration.id}: {n - missing} of its {n} runs kept, {missing} missing"


def headline(history: dict[str, list[SeedResult]]) -> Table:
    """Per seed, the verdict under its current declaration; until its runs are recorded, the latest earlier
    declaration whose runs are all kept, named as such. A version that judges seen runs again comes after the
    verdict declared before those runs, named as written after them; a verdict whose rule has no power says so."""
    def rows_of(seed: str, res: SeedResult, label: str) -> list[list[str]]:
        lacks = res.lacks_power
        said = f" (its rule has no power: {lacks[0].lacks})" if lacks and res.complete else ""
        return [[seed, label, *row[:-1], conclusion(row[-1]) + said] for row in verdict_rows(res)]

    rows = [row for seed, versions in history.items() for res, label in standing(versions)
            for row in rows_of(seed, res, label)]
    return Table("Seeds: published vs simulated speed-up",
                 ["seed", "declaration", "effect", "published", "simulated (range)", "reproduced"], rows,
                 "Each verdict is its declaration's rule on the runs recorded under it; an earlier declaration's "
                 "verdict stands until the current one's runs are recorded. A version that judges runs again after "
                 "they were seen stands below the verdict declared before them (docs/results.md, 'Method "
                 "changes'). A rule without power (one of its answers no simulated outcome could give) says so. "
                 "Each verdict's figures are on its seed's page (docs/results/).")


def machine_table(history: dict[str, list[SeedResult]]) -> Table:
    """Per seed, the verdict on the flat machine beside the one on the socket machine, each under its own
    declaration, and whether the conclusion changes with the machine."""
    rows = []
    for seed, flat, socket in machine_pairs(history):
        flat_rows = verdict_rows(flat) if flat else []
        socket_rows = verdict_rows(socket) if socket else []
        concluded = lambda res, i: res.effects[i].conclusion if res and i < len(res.effects) else None
        for i in range(max(len(flat_rows), len(socket_rows))):
            # a declaration without its runs has one row for all its effects: it stands for each
            f = flat_rows[i] if i < len(flat_rows) else (flat_rows[0] if flat and not flat.complete else None)
            k = socket_rows[i] if i < len(socket_rows) else (socket_rows[0] if socket and not socket.complete else None)
            powerless = [res.declaration.id for res in (flat, socket) if res and res.lacks_power]
            if f is None or k is None or not (flat.complete and socket.complete):
                changes = "-"
            elif powerless:   # a verdict that could not come out otherwise concludes nothing
                changes = f"-: {', '.join(powerless)}'s rule has no power"
            elif concluded(flat, i) == concluded(socket, i):
                changes = "no"
            else:
                changes = f"yes: {concluded(flat, i)[0]} -> {concluded(socket, i)[0]}"
            # The effect's point may differ between the machines (004: 8 sockets flat, one socket as published).
            same = f is not None and k is not None and f[0] == k[0]
            label = (f if f is not None and (flat.complete or k is None) else k)   # the row that names the effect
            side = lambda r, res: (f"{res.declaration.id}{'' if same or ': ' not in r[0] else ', ' + r[0].split(': ', 1)[1]}:"
                                   f" {r[2]}, {r[3]}" + (" (no power)" if res.declaration.id in powerless else "")
                                   ) if r else "not declared"
            rows.append([seed, label[0] if same else label[0].split(": ")[0], label[1],
                         side(f, flat), side(k, socket), changes, what_else_differs(flat, socket)])
    return Table("The seeds on the flat and the socket machine",
                 ["seed", "effect", "published", "flat machine", "socket machine", "conclusion changes?",
                  "what else differs"], rows,
                 "Each side is its own declaration's verdict on its own runs (the socket machine: per socket a "
                 "shared cache that is its cores' point of coherence, calibrated and frozen, docs/machine.md); a "
                 "conclusion changes when the verdict or the sign of the simulated change does. What else differs: "
                 "every declared field besides the machine, and every input of the runs besides the machine and its "
                 "gem5 build whose digests differ (cohtb/experiments/method_changes.py: INPUTS); where anything "
                 "does, the row is not the machine's effect alone.")


def what_else_differs(flat: SeedResult | None, socket: SeedResult | None) -> str:
    """The differences besides the machine of two declarations set side by side (judging.differences_beside_machine)."""
    if flat is None or socket is None:
        return "-"
    return "; ".join(differences_beside_machine(flat, socket)) or "nothing: the machine alone"


def _series_text(s: SeriesResult) -> str:
    """The last quarter against the level before, per label (the lowest intervals are the seed section's)."""
    parts = [f"{policy} {late.text()}" for policy in s.runs if (late := s.falls(policy)) is not None]
    return "last quarter / level before: " + "; ".join(parts) if parts else "-"


def conclusion(verdict: str) -> str:
    """A verdict's text up to its first '; ' outside parentheses: what it concludes, without the figures it gives
    after (the seed's section has them whole)."""
    depth = 0
    for i, c in enumerate(verdict):
        depth += {"(": 1, ")": -1}.get(c, 0)
        if depth == 0 and verdict.startswith("; ", i):
            return verdict[:i]
    return verdict


def cost_table(history: dict[str, list[SeedResult]], ms: list[RunMetrics]) -> Table:
    """What each seed's current declaration costs in gem5 CPU time: measured for its kept runs, predicted for the
    missing ones from the kept runs (cohtb/run/cost.py), as `cohtb seeds --seed S --launch --dry-run` prints it."""
    kept = cost.kept_costs([m.run for m in ms])
    measured = {k.spec.id: k.seconds for k in kept}
    rows, total = [], [0.0, 0.0]
    for seed, versions in history.items():
        e = versions[-1].experiment
        specs = e.specs()
        have = [measured[s.id] for s in specs if s.id in measured]
        guesses = [cost.predict(s, kept) for s in specs if s.id not in measured]
        predicted = sum(p.seconds for p in guesses if p.seconds is not None)
        unknown = sum(p.seconds is None for p in guesses)
        total[0] += sum(have)
        total[1] += predicted
        rows.append([seed, e.declaration.id, f"{len(specs)}", f"{len(have)}", f"{sum(have) / 3600:,.1f}",
                     f"{predicted / 3600:,.1f}" + (f" ({count(unknown, 'run')} unpredicted)" if unknown else "")])
    rows.append(["all", "", "", "", f"{total[0] / 3600:,.1f}", f"{total[1] / 3600:,.1f}"])
    return Table("The seeds' cost in gem5 CPU hours, current declarations",
                 ["seed", "declaration", "runs", "kept", "kept: measured", "missing: predicted"], rows,
                 "Measured: the kept runs' gem5 CPU seconds (host seconds for runs recorded before those were kept). "
                 "Predicted: each missing run from the kept runs nearest to it (cohtb/run/cost.py: of its "
                 "configuration, else fitted over its workload's); `cohtb seeds --seed S --launch --dry-run` prints "
                 "it per run, with the wall time on a number of slots. A full-system kernel build and boot "
                 "checkpoint not yet cached come on top.")


def method_change_table(history: dict[str, list[SeedResult]]) -> Table:
    """Every change to a model, parameter, rule or run set since the seeds were first run, with the verdict its
    experiment had before and after (each computed from the runs kept under that declaration)."""
    def verdict_of(seed: str, version: int) -> str:
        if version == 0:
            return "no runs kept from before it"
        if seed not in history:   # a change to every SE seed: each seed's first declaration has its verdict
            return f"each seed's declaration v{version}, below"
        res = history[seed][version - 1]
        rows = verdict_rows(res)
        return "; ".join(f"{r[-1]} (simulated {r[2]})" if r[2] != "-" else r[-1] for r in rows)

    rows = [[c.commit, c.date, c.experiment, f"v{c.before} -> v{c.after}", c.what, ", ".join(c.inputs) or "-",
             c.reason, c.results_seen, verdict_of(c.experiment, c.before), verdict_of(c.experiment, c.after)]
            for c in method_changes.load()]
    return Table("Method changes", ["commit", "date", "seed", "declarations", "what changed",
                                    "inputs changed (the runs' digests)", "why", "results seen before?",
                                    "verdict before", "verdict after"], rows)


def provenance(ms: list[RunMetrics]) -> str:
    """Where the runs are and which gem5 recorded them, from their manifests."""
    if not ms:
        return "no runs are recorded yet"

    dirs = sorted({str(m.run.path.parent.relative_to(ROOT)) if m.run.path.is_relative_to(ROOT) else str(m.run.path.parent)
                   for m in ms})
    versions = sorted({m.run.manifest.gem5.version for m in ms})
    return (f"the {count(len(ms), 'run')} some declaration names, in {', '.join(f'`{d}/`' for d in dirs)}, recorded "
            f"with gem5 {', '.join(versions)}")


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


def declaration_table(d: Declaration) -> Table:
    how = ("reconstructed after its runs from the repository's history (runs bundled in "
           f"{d.recorded_in}{', rule of ' + d.rule_in if d.rule_in else ''})" if d.reconstructed else
           f"after {d.runs_id}'s runs were seen: it judges them again by its own rule and records none (the "
           "method-change table gives why, and both verdicts)" if d.rejudges else
           "committed before its runs (`cohtb seeds --launch` records only under a committed declaration)")
    rows = [["written", how], ["machine", f"{d.machine}: {machines()[d.machine]}"
                                          + (f". For this seed: {d.machine_why}" if d.machine_why else "")], ["lock", f"{d.lock}: {d.lock_why}"],
            ["sockets", ", ".join(map(str, d.sockets)) + f" (x {d.cores_per_socket} cores)"],
            ["measure", f"warm-up {d.warmup_us} µs, window {d.window_us} µs in intervals of {d.interval_us} µs"],
            ["repetitions", f"{d.repetitions}" + (f" declared, {d.recorded_repetitions} recorded" if
                                                  d.recorded_repetitions else "") + ", varying: " + "; ".join(f"{s} ({REPETITION_SOURCES[s]})"
                                                                    for s in d.repetition_sources)],
            ["minimum effect", f"{d.min_effect:.0%}"], ["verdict rule", d.rule + (f", series: {d.collapse_rule}"
                                                                              if d.collapse_rule else "")],
            ["magnitude", d.magnitude + (f": {d.magnitude_why}" if d.magnitude_why else "")]]
    if d.control_lock:
        rows.append(["control", f"{d.control_lock} at {', '.join(map(str, d.control_sockets))} sockets, "
                                f"{'judged' if d.control_judged else 'not judged'}"])
    if d.kernels:
        rows.append(["kernels", " -> ".join(d.kernels) + (f" ({d.kernel_note})" if d.kernel_note else "")])
    if d.intruder_period_us:
        rows.append(["intruder", f"lists the file's directory every {d.intruder_period_us} µs from the release"
                                 + (f", {d.intruder_listings} times" if d.intruder_listings else ", to the end")])
    return Table(f"Declaration {d.id}", ["", ""], rows)


def power_tables(e: Experiment) -> list[str]:
    """What the declaration's rule can say, found before any run (cohtb/experiments/power.py): a table per verdict."""
    out = []
    for p in power.powers(e):
        title = f"Declaration {e.declaration.id}, {p.what}: what its rule can say, found before any run"
        if not p.rows():   # nothing can be said before the runs
            out += [f"**{title}:** nothing. No power: {p.lacks}.", ""]
            continue
        out.append(Table(title, [p.outcome, "answer"], [list(row) for row in p.rows()],
                         (f"No power: {p.lacks}. " if p.lacks else "") +
                         "Each answer with the simulated outcomes that give it, from the declared rule run on made-up "
                         "outcomes (a spread widens a band and can turn a sign into 'within the spread'); a rule "
                         "without power is refused by `cohtb seeds --launch`.").markdown())
    return out


def profile_band_tables(e: Experiment) -> list[str]:
    """What the declared profile band can say, found before any run (cohtb/experiments/profile_band.py)."""
    d = e.declaration
    out = []
    for pub in dict.fromkeys(pub.configuration for p in e.points for pub in p.published) if d.profile_functions else ():
        base = profile_band.published_for(d, pub, "base")
        if base is not None:
            out.append(profile_report.outcomes_table(d, profile_band.outcomes(d, base)).markdown())
    return out


def advice_sections(versions: list[SeedResult]) -> list[str]:
    """The seed's declared layout advice (cohtb/experiments/advice.py), from the runs of its declaration."""
    out = []
    for res in versions:
        for found in res.advice:
            out += advice_report.seed_advice_section(found)
    return out


def profile_sections(res: SeedResult) -> list[str]:
    """Each point's arms beside the seed's published profiles, once any of its runs has a profile."""
    out = []
    for p in res.points:
        checks = res.profile_checks(p)
        if any(c.runs for c in checks):
            out.append(profile_report.band_table(res.declaration, p.point.label, checks).markdown())
            out += hot_instruction_tables(p)
    return out


def hot_instruction_tables(p: PointResult) -> list[str]:
    """Each arm's hottest instructions in its first repetition: how often each retired per operation (a retry
    loop's shows) and how long each retirement waited, which a function's share does not say."""
    out = []
    for runs in (p.base, p.new):
        if runs:
            run = first_repetition(runs).run
            doc = run.profile()
            if doc and doc.get("addresses"):
                out.append(profile_report.instructions_table(run, hot_instructions(doc, run.region_ops), top=6).markdown())
    return out


def recording_text(res: SeedResult) -> str:
    """How the declaration's runs were recorded: from a clean checkout or not, and whether when and where is kept."""
    runs = [m.run.manifest for _, ms in res.arms() for m in ms]
    if not runs:
        return ""
    dirty = sum(1 for m in runs if (m.cohtb or {}).get("changed"))
    unknown = sum(1 for m in runs if m.cohtb is None)
    timed = sum(1 for m in runs if m.recorded is not None)
    return (f"**Recorded.** {count(len(runs), 'run')}: {len(runs) - dirty - unknown} from a clean checkout, {dirty} from a "
            f"checkout with uncommitted changes" + (f", {unknown} before the checkout was kept" if unknown else "") +
            f"; {timed} keep their host and recording time" + (" (the others were recorded before it was kept)"
                                                              if timed < len(runs) else "") + ".")


def shape_figure_name(seed: str) -> str:
    """The file of a seed's shape figure (under a shape rule: cohtb/report/seed_plots.py, draw_shape)."""
    return f"seed-{seed}-shape.png"


def turns_figure_name(seed: str) -> str:
    """The file of a seed's turns figure (under a shape rule, when every run has a chain: seed_plots.draw_turns)."""
    return f"seed-{seed}-turns.png"


def result_sections(res: SeedResult, figures: list[str]) -> list[str]:
    e = res.experiment
    out = [point_table(res).markdown()] if res.points else []   # a seed of series alone has no speed-up table
    out += profile_sections(res)
    out.append(fairness_table(res).markdown())
    queued = queue_table(f"Seed {e.seed}, declaration {res.declaration.id}: queued spinlock acquisitions per "
                         "operation, from the kernel's side", res.arms())
    if queued:
        out.append(queued.markdown())
    series_from = len(figures) - len(res.series)   # figure_names' order: the series' figures come last
    for i, name in enumerate(figures):
        out += [f"![seed {e.seed}]({name})", ""]
        if name == shape_figure_name(e.seed):
            out += [textwrap.fill(
                "Per curve, the simulated speed-up at each socket count (mean; whisker: the extremes over the pairs "
                "of repetitions) beside the published ones (bar: their range over the seed's configurations at that "
                f"count): the series the declared rule ({res.declaration.rule}) judges, by its shape.", 100), ""]
        if name == profile_figure_name(e.seed):
            out += [textwrap.fill(
                "Per arm with a published profile, each function the seed's profile names: its published share of "
                "the time (perf) beside the simulated share of every core's window (time-proportional: docs/gem5.md, "
                "'The profile of the window'; mean over the repetitions, whisker: their extremes), and on the judged "
                "arm the declared band around the published share.", 100), ""]
        if name == turns_figure_name(e.seed):
            out += [textwrap.fill(
                "Per curve and socket count, each arm's simulated time per operation, 1 / throughput over all "
                "threads (bar: the mean; whisker: the extremes over the repetitions; the base arm hatched), split by "
                "where each run's hottest line went between one core obtaining it and the next (the turns tables "
                "below, cohtb/analysis/line_chain.py): to a core of another socket, to another core of the same "
                "socket, to the same core again, and the time the line's turns do not cover (before its first event "
                "or after its last in the trace). A turn is the transfer and the new owner's time with the line; "
                "where the line waits for nobody, its gaps hold that wait too.", 100), ""]
            summary = turns_summary(f"Seed {e.seed}, declaration {res.declaration.id}: the hottest line's turns per "
                                    "operation, every repetition", res.arms())
            out += [summary.markdown()] if summary else []
        if i >= series_from:   # a series figure
            drawn = [m for runs in res.series[i - series_from].runs.values() for m in runs]
            middle = ("queued for the spinlock (the kernel's queued acquisitions, counted from each CPU's writes "
                      "to its own qspinlock MCS-node line in the trace: docs/fs.md)" if lock_queue.counted(drawn) else
                      "took the spinlock (the workload's own count)")
            out += [textwrap.fill(
                f"Top: ops per interval. Middle: the share of the lockref updates in each interval that {middle}. "
                "Bottom: cache-line transfers per operation in each interval, "
                "from the monitor's counters over simulated time (`cohtb launch --live` snapshots the Verilated "
                "monitor while gem5 runs; for a run recorded to a file, the compiled reference model counts its "
                "event file interval by interval, the same counters bit for bit, its last held to the RTL's). The "
                "monitor's intervals start at the first traced event.", 100), ""]
    for p in res.points:
        pair = representative(p)
        if figures and pair and p.point.judged and p.point.base.sockets == max(q.point.base.sockets for q in res.points):
            table, text = attribution(*pair)
            table.title = f"Attribution, {p.point.label}, repetition 1: {table.title.split(': ', 1)[-1]}"
            out += [table.markdown(), textwrap.fill(text, 100), ""] + turns_tables(pair, f"{p.point.label}, repetition 1")
    for sr in res.series:
        cv = res.series_verdict(sr)
        per_us = 1 / (sr.series.runs[0].interval_us)
        rows = [[policy, sr.trough(policy).text() if sr.trough(policy) else "-",
                 sr.falls(policy).text() if sr.falls(policy) else "-",
                 sr.late_peak(policy).text() if sr.late_peak(policy) else "-",
                 sr.late(policy).text(per_us) if sr.late(policy) else "-"] for policy in sr.runs]
        out += [Table(f"Seed {e.seed}, {sr.series.label}, declaration {res.declaration.id}: ops per interval after "
                      f"{sr.series.event}, against the level before it (mean (min-max) of the repetitions)",
                      ["kernel" if sr.series.labels else "policy", "lowest interval / before", "last quarter / before",
                       "highest interval of the last quarter / before", "last quarter (ops/µs)"], rows,
                      f"Published (retry100): {sr.series.published[0].new:,.0f} / "
                      f"{sr.series.published[0].base:,.0f} = {sr.series.published[0].ratio:.2f}. "
                      f"Reproduced ({res.declaration.collapse_rule}): {cv.text}.").markdown()]
        visits = lister_table(sr, f"Seed {e.seed}, {sr.series.label}, declaration {res.declaration.id}: the "
                                  f"lister's takes of the file dentry's lock")
        out += [visits.markdown()] if visits else []
        if sr.series.controls:
            out += [textwrap.fill("**Collapses, and stays collapsed?** " + " ".join(
                collapse_answer(sr, label) for pair in sr.series.controls for label in pair), 100), ""]
        for label, control in (sr.series.controls if figures else ()):   # what the disturbance cost, line by line
            if sr.runs.get(label) and sr.runs.get(control):
                pair = first_repetition(sr.runs[control]), first_repetition(sr.runs[label])
                table, text = attribution(*pair)
                table.title = (f"Attribution, {label} against its control ({control}), repetition 1, the whole window: "
                               f"{table.title.split(': ', 1)[-1]}")
                out += [table.markdown(), textwrap.fill(text, 100), ""]
                out += turns_tables(pair, f"{label} against {control}, repetition 1")
    out.append(arm_table(f"Seed {e.seed}, declaration {res.declaration.id}: the runs, held against gem5, and their "
                         "host time", res.arms()).markdown())
    dis = disagreement(res)
    if dis:
        out += ["**Where the simulation disagrees.** " + " ".join(dis) + f" Differences that may explain it: "
                f"{e.differences}.", ""]
    return out


def turns_tables(pair: tuple[RunMetrics, RunMetrics], what: str) -> list[str]:
    """The hottest line's turns of an attribution's pair (nothing when an analysis has none)."""
    table = chain_table(*pair)
    if table is None:
        return []
    table.title = f"{TURNS_TITLE}, {what}: {table.title.split(': ', 1)[-1]}"
    return [table.markdown()]


def collapse_answer(sr: SeriesResult, label: str) -> str:
    """Whether one label's runs fell under half their level before the first disturbance (its lowest interval) and
    stayed there (every interval of the last quarter), in how many repetitions (judging.collapsed)."""
    c = collapsed(sr, label)
    if c is None:
        return f"{label}: no intervals."
    n = c.repetitions
    return (f"{label}: {_how_many(c.fell, n, 'collapses', 'does not collapse', 'collapses in some repetitions')} "
            f"(lowest interval under {COLLAPSED_TO:.0%} of the level before in {c.fell} of {n} repetitions) and "
            f"{_how_many(c.stayed, n, 'stays collapsed', 'does not stay collapsed', 'stays collapsed in some')} "
            f"(every interval of the last quarter under it in {c.stayed} of {n}).")


def _how_many(k: int, n: int, every: str, none: str, some: str) -> str:
    return every if k == n else none if k == 0 else some


def machine_check_text(runs: list) -> str:
    """The full-system pairs kept in calibration-runs/ to check a machine (one repetition, no declaration): their
    change, said to be no result."""
    out = []
    by_rest = {}
    for r in runs:
        by_rest.setdefault(replace(r.spec, kernel="", layout=""), []).append(r)   # the layout follows the kernel
    for spec, pair in by_rest.items():
        if len(pair) != 2:
            continue
        base, new = sorted(pair, key=lambda r: r.spec.kernel != "pre611")
        out.append(f"{spec.sockets}x{spec.cores_per_socket} on {spec.machine}: {base.spec.kernel} "
                   f"{base.throughput * 1e-6:.2f} ops/µs, {new.spec.kernel} {new.throughput * 1e-6:.2f} ops/µs, "
                   f"{_speedup(new.throughput / base.throughput)}")
    if not out:
        return ""
    return textwrap.fill("**Kept beside the table, not a verdict.** Seed 004's full-system pair recorded once to check "
                         "a machine (calibration-runs/, under no declaration): " + "; ".join(out) + ". One repetition "
                         "has no spread, so it is no result; 004-fs-8x4 declares the pair at 8x4 on the socket "
                         "machine with its repetitions.", 100)


SEED_PAGES = "results"   # beside the index (docs/results.md): one page per seed, with its figures


def profile_figure_name(seed: str) -> str:
    return f"seed-{seed}-profile.png"


def seed_page_name(seed: str) -> str:
    return f"seed-{seed}.md"


def pages(history: dict[str, list[SeedResult]], figures: dict[str, list[str]], ms: list[RunMetrics],
          declaration_figures: dict[str, str] | None = None, machine_checks: str = "") -> dict[str, str]:
    """The results pages by path under docs/: the index (docs/results.md: the headline, how to read, the method
    changes, the seeds) and one page per seed under docs/results/, beside its figures."""
    out = {"results.md": index(history, ms, machine_checks)}
    for seed, versions in history.items():
        out[f"{SEED_PAGES}/{seed_page_name(seed)}"] = seed_page(versions, figures.get(seed, []),
                                                                (declaration_figures or {}).get(seed))
    return out


def index(history: dict[str, list[SeedResult]], ms: list[RunMetrics], machine_checks: str = "") -> str:
    out = ["# Results: the seeds, simulated", "",
           f"Written by `{COMMAND}` from the kept runs ({provenance(ms)}; `cohtb seeds --seed S --launch` records "
           "them); `tests/test_results.py` fails when this page or a seed's page is not what the runs give. Every "
           "number below is computed from those runs.", "",
           "## Headline", "", headline(history).markdown(), machine_table(history).markdown(),
           *([machine_checks, ""] if machine_checks else []), "## The seeds", "",
           *[f"- [Seed {seed}: {versions[-1].experiment.title}]({SEED_PAGES}/{seed_page_name(seed)})"
             for seed, versions in history.items()], "", "## How to read", "",
           textwrap.fill("Every experiment is declared before its runs (cohtb/experiments/seed_data/, docs/experiments.md): "
                         "machine, lock "
                         "model, windows, repetitions and what varies between them, the minimum effect, the verdict "
                         "rule and the magnitude prediction. A run is judged only by the declaration it was recorded "
                         "under; a change to a declaration is a new version, and the verdicts of every version whose "
                         "runs are kept stay on the seed's page. A change is new/base throughput - 1; its range is over "
                         "every pair of repetitions. No simulation parameter was set to approach a published number.",
                         100, break_on_hyphens=False), "",
           "The rules (cohtb/experiments/rules.py):", "", "```", RULES.split("\n\n", 1)[1].rstrip(), "```", "",
           "The magnitude prediction (cohtb/experiments/magnitude.py):", "", "```", MAGNITUDE.rstrip(), "```", "",
           "What a rule can say, found before any run (cohtb/experiments/power.py):", "", "```", power.__doc__.rstrip(),
           "```", "",
           "Where a seed publishes its profile, the profile band (cohtb/experiments/profile_band.py):", "", "```",
           profile_band.__doc__.rstrip(), "```", "",
           "Where a seed's page has layout advice, the proposal and its proof (cohtb/experiments/advice.py; the "
           "proposal's rule: cohtb/analysis/layout_proposal.py):", "", "```", advice.__doc__.rstrip(), "```", "",
           "## Method changes", "",
           textwrap.fill("Every change to a model, parameter, verdict rule or set of kept runs since the seeds were "
                         "first simulated (cohtb/experiments/method_changes.toml, from the repository's history), "
                         "with the verdict under the declaration before and after it, each computed from the runs "
                         "kept under that declaration.", 100), "",
           method_change_table(history).markdown(), "## Cost", "", cost_table(history, ms).markdown()]
    return "\n".join(out).rstrip() + "\n"


def seed_page(versions: list[SeedResult], figures: list[str], declaration_figure: str | None = None) -> str:
    """One seed's page: the experiment, its current declaration and result, then every earlier declaration's."""
    res = versions[-1]
    e = res.experiment
    out = [f"# Seed {e.seed}: {e.title}", "",
           f"Written by `{COMMAND}` from the kept runs; the headline, how to read these pages and the method changes "
           f"are on [the results page](../results.md).", "",
           f"**Change.** {e.change}.", "",
           f"**Published.** {e.published_setup}.", "", *sources(e), f"**Simulated.** {e.simulated_setup}.", "",
           f"**What differs.** {e.differences}.", "", declaration_table(res.declaration).markdown(),
           *power_tables(e), *profile_band_tables(e)]
    if declaration_figure:
        out += [f"![seed {e.seed}: every declaration]({declaration_figure})", ""]
    drawn = shown(versions)
    if res.complete:
        out += [recording_text(res), "", *result_sections(res, figures), *sensitivity_section(res)]
    else:
        out += [verdict_rows(res)[0][-1][0].upper() + verdict_rows(res)[0][-1][1:] + "." if res.failed else
                not_complete(res)[0].upper() + not_complete(res)[1:] +
                f" (`cohtb seeds --seed {e.seed} --launch` records the missing ones).", "",
                *([recording_text(res), ""] if recording_text(res) else []), *profile_sections(res)]
    out += advice_sections(versions)
    for earlier in reversed(versions[:-1]):
        if not earlier.complete:
            out += [f"## Under declaration {earlier.declaration.id} (earlier)", "",
                    f"{len(earlier.missing)} of {len(earlier.experiment.specs())} of its runs are not kept.", "",
                    *([recording_text(earlier), ""] if recording_text(earlier) else []), *kept_runs_section(earlier)]
            continue
        out += [f"## Under declaration {earlier.declaration.id} (earlier)", "", earlier.experiment.simulated_setup
                + ".", "", declaration_table(earlier.declaration).markdown(),
                *power_tables(earlier.experiment), recording_text(earlier), "",
                *result_sections(earlier, figures if earlier is drawn else []), *sensitivity_section(earlier)]
    return "\n".join(out).rstrip() + "\n"


def readme_block(history: dict[str, list[SeedResult]]) -> str:
    return "\n".join([BEGIN, "", headline(history).markdown().strip(), "",
                      "Per seed: the declared experiment, published vs simulated with spread, the attribution to lines "
                      "and fields, plots, and every method change: [docs/results.md](docs/results.md) and its seed pages.", END])


def _kernel_label(variant_name: str, runs: list[RunMetrics]) -> str:
    """A kernel variant as its runs' builds had it (cohtb/run/kernels.py: built_label)."""
    return " / ".join(sorted({built_label(variant_name, m.run.manifest.kernel or {})
                              for m in runs}))


def kept_runs_section(res: SeedResult) -> list[str]:
    """A declaration without all its runs: the throughput of each arm's runs that are kept (no verdict: no spread
    to hold it to); nothing when none is kept."""
    e, d = res.experiment, res.declaration
    rows = [[p.point.label, _kernel_label(runs[0].spec.kernel, runs) if runs[0].spec.kernel else name,
             f"{len(runs)} of {d.repetitions}", Spread(tuple(m.throughput for m in runs)).text(1e-6)]
            for p in res.points for name, runs in ((e.base_name, p.base), (e.new_name, p.new)) if runs]
    if not rows:
        return []
    return [Table(f"Declaration {d.id}: the runs kept", ["simulated", "arm", "repetitions kept",
                                                         "ops/µs: mean (min-max)"], rows).markdown()]


def sensitivity_section(res: SeedResult) -> list[str]:
    """The declaration's unjudged runs of its base kernel at each offset of a line (a sensitivity study), against
    its new kernel at a line start; nothing when it has none kept."""
    e, sens = res.experiment, res.sensitivity
    line_start = next((p for p in res.points if "line start" in p.point.label and p.complete), None)
    if not sens or line_start is None:
        return []
    ref = line_start.new_throughput.mean
    rows = [["0", f"{line_start.base_throughput.mean * 1e-6:.2f}", _speedup(line_start.base_throughput.mean / ref),
             f"{len(line_start.base_throughput.values)}"]]
    rows += [[m.spec.extra[m.spec.extra.index("--dentry-line-offset") + 1], f"{m.throughput * 1e-6:.2f}",
              _speedup(m.throughput / ref), "1"] for m in sens]
    return [Table(f"Declaration {res.declaration.id}: {_kernel_label(e.sensitivity[0].kernel, sens)} at each offset "
                  "of a line (a sensitivity study of a layout no kernel shipped)",
                  ["offset of the dentry in its line (bytes)", "ops/µs", f"against {e.new_name} at a line start",
                   "repetitions"], rows,
                  f"{e.new_name} at a line start: {ref * 1e-6:.2f} ops/µs (mean of its repetitions).").markdown()]


def write_block(readme: Path, block: str, check: bool) -> bool:
    """Replace the generated block of a page (README.md, docs/machine.md): the lines BEGIN ... END."""
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
