"""The pages `cohtb results` writes from the bundled runs, the same on every checkout: docs/results.md and its
figures, and the generated results blocks of README.md, docs/machine.md (from the calibration runs) and
docs/workloads.md (the PAUSE runs); and docs/counting-rules.md's table of the rules, from their data file."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from cohtb.analysis.pipeline import metrics_for
from cohtb.atomic import write_text_atomic, writing
from cohtb.experiments.judging import VERDICTS, SeedResult, judge_kept, shown, verdicts_text
from cohtb.monitor import rule_table
from cohtb.places import CALIBRATION_RUNS, REFERENCE_RUNS, ROOT
from cohtb.report import atomicity, costs, html, latency, results, seed_plots
from cohtb.report.pause_table import pause_table
from cohtb.run.machines import hierarchy_of
from cohtb.run.runs import discover
from cohtb.run.spec import RunSpec

RESULTS, README, FIGURES = "docs/results.md", "README.md", "docs/results"   # in the checkout
MACHINE_DOC = "docs/machine.md"
WORKLOADS_DOC = "docs/workloads.md"
RULES_DOC = "docs/counting-rules.md"


@dataclass
class Pages:
    root: Path                         # the checkout they are written into
    pages: dict[Path, str]             # docs/results.md and each seed's page under docs/results/
    blocks: list[tuple[Path, str]]     # (page, its generated block)
    history: dict[str, list[SeedResult]]
    verdicts: tuple[Path, str]          # (the file, every declaration's judgement of the bundled runs)
    runs: int                          # runs the pages are written from
    missing: int                       # runs declared but not recorded (their declarations say so on the page)

    def stale(self) -> list[Path]:
        """The pages that are not what the kept runs give."""
        out = [p for p, text in self.pages.items() if not (p.exists() and p.read_text() == text)]
        path, text = self.verdicts
        out += [] if path.exists() and path.read_text() == text else [path]
        return out + [p for p, b in self.blocks if not results.write_block(p, b, check=True)]

    def write(self) -> None:
        figures = self.root / FIGURES
        with writing(figures):   # the figures are written by their own means
            seed_plots.write_all([r for r in map(shown, self.history.values()) if r is not None], figures,
                                 self.history)
        for path, text in self.pages.items():
            write_text_atomic(path, text)
        write_text_atomic(*self.verdicts)
        for path, block in self.blocks:
            with writing(path):
                results.write_block(path, block, check=False)


def machine_block(calibration_runs: Path, seed_runs: list) -> str:
    """docs/machine.md's measured tables from the runs bundled in calibration-runs/: the latency tables per machine,
    the locked-instruction check, one line under contention, and the full-system runs on a new machine (the monitor held against gem5, and
    their host time beside their flat counterparts' among the seed runs)."""
    by_machine: dict[str, list] = {}
    mesh: dict[str, tuple[list, list]] = {}   # a mesh machine's cclat and chase runs
    runs = discover([calibration_runs]) if calibration_runs.is_dir() else []
    for run in runs:
        machine = run.manifest.system.machine or "flat"
        if run.spec.workload in ("cclat", "chase") and hierarchy_of(machine) == "mesh":
            mesh.setdefault(machine, ([], []))[run.spec.workload == "chase"].append(run)
        elif run.spec.workload == "cclat":
            by_machine.setdefault(machine, []).append(run)
    checks = [r for r in runs if r.spec.workload == "atomicity" and not r.spec.traced]
    handoff = [r for r in runs if r.spec.workload == "atomicity" and r.spec.traced]
    contended = [r for r in runs if r.spec.workload == "contention"]
    full_system = [r for r in runs if r.spec.kernel]
    tables = []
    if full_system:
        flat = [r for r in seed_runs if r.spec.kernel and any(_counterparts(r.spec, f.spec) for f in full_system)]
        checked = metrics_for(full_system, None, check_model=False)
        tables += [html.check_table(checked).markdown().strip(), "", costs.costs_table(full_system + flat).markdown().strip(), ""]
    return "\n".join([results.BEGIN, "", latency.calibration_markdown(by_machine).strip(), "",
                      *[part for m, (cclat, chase) in mesh.items()
                        for part in (latency.mesh_calibration_markdown(m, cclat, chase).strip(), "")],
                      *([atomicity.atomicity_table(checks).markdown().strip(), ""] if checks else []),
                      *([atomicity.handoff_table(metrics_for(handoff, None, check_model=False)).markdown().strip(), ""]
                        if handoff else []),
                      *([atomicity.contention_table(metrics_for(contended, None, check_model=False)).markdown().strip(),
                         ""] if contended else []), *tables,
                      results.END])


def workloads_block(reference_runs: Path) -> str:
    """docs/workloads.md's measured table: what a spin-wait poll costs, from the kept runs of the `pause` plan."""
    runs = [r for r in discover(sorted(reference_runs.glob("pause-*"))) if r.spec.workload == "pause"]
    return "\n".join([results.BEGIN, "", pause_table(runs).markdown().strip(), "", results.END])


def rules_block() -> str:
    """docs/counting-rules.md's table: every counting rule, from cohtb/monitor/counting_rules.toml."""
    return "\n".join([results.BEGIN, "", rule_table.table(rule_table.load()).markdown().strip(), "", results.END])


def _counterparts(flat: RunSpec, other: RunSpec) -> bool:
    """A seed run on the flat machine (recorded under a declaration) that is the other run but for the machine."""
    return (flat.machine == "flat" and bool(flat.declaration)
            and replace(flat, declaration="") == replace(other, machine="flat", declaration=""))


def build(root: Path | None = None, reference_runs: Path | None = None,
          calibration_runs: Path | None = None) -> Pages:
    """The pages of the checkout at `root` (default: this one) from the runs bundled in `reference_runs` and
    `calibration_runs`."""
    root, reference_runs = root or ROOT, reference_runs or REFERENCE_RUNS
    calibration_runs = calibration_runs or CALIBRATION_RUNS
    judged = judge_kept([reference_runs], bundle=reference_runs)
    runs, missing, ms, history = judged.runs, judged.missing, judged.metrics, judged.history
    drawn = [r for r in map(shown, history.values()) if r is not None]
    checks = [r for r in (discover([calibration_runs]) if calibration_runs.is_dir() else []) if r.spec.kernel]
    written = results.pages(history, seed_plots.figure_names(drawn), ms, seed_plots.history_figure_names(history),
                            results.machine_check_text(checks))
    pages = {root / "docs" / name: text for name, text in written.items()}
    blocks = [(root / README, results.readme_block(history)), (root / MACHINE_DOC, machine_block(calibration_runs, runs)),
              (root / WORKLOADS_DOC, workloads_block(reference_runs)), (root / RULES_DOC, rules_block())]
    return Pages(root, pages, blocks, history, (reference_runs / VERDICTS, verdicts_text(history)), len(runs),
                 len(missing))
