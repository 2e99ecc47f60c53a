"""docs/results.md and the README's results block are what `cohtb results` writes from the kept runs: a
change that moves a figure (or a run that is re-recorded) fails here until the page is written again."""

import json
import re
import subprocess
import sys
from types import SimpleNamespace as NS

from cohtb.experiments.published import PUBLISHED
from cohtb.experiments import rules
from cohtb.experiments.seeds import EXPERIMENTS, HISTORY
from cohtb.places import REFERENCE_RUNS
from cohtb.experiments import judging
from cohtb.report import results
from cohtb.report.arm_summary import arm_table
from cohtb.run.manifest import LineSymbols
from cohtb.report.queue_table import queue_table
from cohtb.toolchain import ROOT

import doc_figures
from doc_figures import results_pages, unbacked_figures


def test_results_page_and_readme_block_are_current():
    proc = subprocess.run([sys.executable, "-m", "cohtb.cli", "results", "--check"], capture_output=True, text=True,
                          cwd=ROOT, timeout=3000)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "match the kept runs" in proc.stdout


def test_the_page_names_every_seed_and_how_it_was_made():
    """The index links every seed's page; each seed's page says what wrote it and links back."""
    page = (ROOT / "docs" / "results.md").read_text()
    assert f"Written by `{results.COMMAND}`" in page
    for seed in HISTORY:
        name = f"{results.SEED_PAGES}/{results.seed_page_name(seed)}"
        assert f"]({name})" in page, seed
        seed_page = (ROOT / "docs" / name).read_text()
        assert seed_page.startswith(f"# Seed {seed}:") and f"Written by `{results.COMMAND}`" in seed_page
        assert "](../results.md)" in seed_page
    readme = (ROOT / "README.md").read_text()
    assert results.BEGIN in readme and "docs/results.md" in readme.split(results.BEGIN, 1)[1]


RUN_DERIVED = re.compile(r"(?<![\w.])(?:[+-]\d+(?:\.\d+)?%|\d+(?:\.\d+)? ops/µs|\d+(?:\.\d+)?x the published)"
                         r"|[A-Z]+\d+%")   # the last: a substitution that never happened ("MEAN41%")
NEAR = re.compile(r"ops|stat\b|`stat`|simulated|throughput|speed-up|faster|slower|layout|repetition", re.I)


def _outside_generated(text: str) -> str:
    while results.BEGIN in text and results.END in text:
        head, rest = text.split(results.BEGIN, 1)
        text = head + rest.split(results.END, 1)[1]
    return text


def test_no_run_derived_number_in_the_docs_but_from_cohtb_results():
    """A speed-up, a throughput or an 'Nx the published' figure in README.md, docs/*.md or docs/decisions/*.md is
    written by `cohtb results` from kept runs (docs/results.md, or the generated blocks of README.md and docs/fs.md),
    or is a seed's own published figure. One typed by hand (the 'MEAN41%' and the 4x4 '+10%' that no run held) fails here."""
    published = {q for seed in PUBLISHED.values() for pub in seed.values() for q in pub.quote}
    published_text = " ".join(published)
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "docs" / "decisions").glob("*.md"))]
    found = []
    for page in pages:
        if page.name == "results.md":
            continue
        text = _outside_generated(page.read_text())
        for m in RUN_DERIVED.finditer(text):
            around = text[max(0, m.start() - 120):m.end() + 120]
            if NEAR.search(around) and m.group(0) not in published_text:
                found.append(f"{page.name}: {m.group(0)}: ...{' '.join(around.split())}...")
    assert not found, "\n".join(found)


def test_every_figure_in_the_docs_is_backed():
    """A time, share or ratio in README.md, docs/*.md or docs/decisions/*.md is in a table `cohtb results` writes, in
    a seed's published lines, beside the command that prints it, or in docs/figures-allowed.toml with why
    (tests/doc_figures.py)."""
    found = unbacked_figures()
    assert not found, "\n".join(" | ".join(f) for f in found)
    allowed = {(page, fig) for page, figs in doc_figures.allowed().items() for fig in figs}
    pages = {doc_figures.key(p): p.read_text() for p in doc_figures.PAGES}
    assert all(fig in pages.get(page, "") for page, fig in allowed)   # an allowance outlives no figure


def test_a_figure_typed_into_the_docs_is_found(tmp_path, monkeypatch):
    page = tmp_path / "new.md"
    page.write_text("# New\n\nThe lock's line moved in 417.3 ns per operation.\n\n# Other\n\n`cohtb seeds` prints 9.99 ns.\n")
    monkeypatch.setattr(doc_figures, "PAGES", [page])
    assert [f[:2] for f in unbacked_figures()] == [("new.md", "417.3 ns")]


def test_seeds_all_prints_every_seed_under_its_declarations():
    """`cohtb seeds --seed all`: each seed in turn; a seed whose current declaration has no runs yet says so and
    prints the earlier declaration it falls back to. An unknown seed is one line, exit 2."""
    proc = subprocess.run([sys.executable, "-m", "cohtb.cli", "seeds", "--seed", "all"], capture_output=True,
                          text=True, cwd=ROOT, timeout=3000)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for seed in ("000", "000-fs", "001", "002", "002-fs", "002-kernel-fs", "003", "004", "004-fs"):
        assert f"Seed {seed}, declaration {seed}v" in proc.stdout, seed
    # a seed of series alone: its verdict, no speed-up table
    assert "Seed 004-collapse-fs, declaration" not in proc.stdout
    said = " ".join(proc.stdout.split())
    assert re.search(r"\d+ runs of declaration 004-collapse-fsv5 are not recorded", said)   # not all run yet: the
    assert "collapse after a few listings: no: the listings were not as declared" in said   # earlier one's verdict
    bad = subprocess.run([sys.executable, "-m", "cohtb.cli", "seeds", "--seed", "nope"], capture_output=True,
                         text=True, cwd=ROOT)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "all" in bad.stderr


def test_the_verdicts_file_judges_every_declaration_and_sees_a_rule_change(monkeypatch):
    """reference-runs/verdicts.json holds every declaration's judgement (test_results_page_and_readme_block_are_current
    holds it to the kept runs); here: one seed judged again gives its entry, and a rule that answers otherwise changes
    it."""
    committed = json.loads((REFERENCE_RUNS / judging.VERDICTS).read_text())
    assert {seed: list(versions) for seed, versions in committed.items()} == {
        seed: [e.declaration.id for e in versions] for seed, versions in HISTORY.items()}
    history = {"003": judging.history_in("003", [REFERENCE_RUNS])}
    assert judging.verdicts(history)["003"] == committed["003"]
    rule = history["003"][-1].declaration.rule
    monkeypatch.setitem(rules.POINT_RULES, rule, lambda pub, res, d: rules.Verdict(True, "yes: whatever the runs"))
    assert judging.verdicts({"003": judging.history_in("003", [REFERENCE_RUNS])})["003"] != committed["003"]


def test_a_declaration_whose_runs_failed_in_gem5_says_so_and_gives_no_verdict():
    """Failure records kept beside the runs turn "not run yet" into "no verdict: k runs failed"; without them a
    missing run is just not run yet."""
    e = EXPERIMENTS["002"]
    ids = [s.id for s in e.specs()]
    failed = judging.seed_result(e, [], frozenset(ids[:2]))
    assert failed.failed == ids[:2] and not failed.complete
    assert results.verdict_rows(failed)[0][-1].startswith(f"no verdict under {e.declaration.id}: 2 of its 10 runs failed")
    assert results.verdict_rows(judging.seed_result(e, []))[0][-1].startswith("not run yet")


def test_the_machine_table_puts_each_seed_s_flat_and_socket_verdicts_side_by_side():
    """One row per effect: the flat machine's declaration and the socket machine's, each with its own verdict; a
    socket declaration without its runs stands for every effect, and a conclusion changes only between verdicts."""
    history = judging.seed_history([])
    rows = results.machine_table(history).rows
    # without runs, one row per seed that has a flat declaration (the socket machine's own experiments have none),
    # and one per machine check, beside the declaration it stands beside
    checks = [s for s, h in history.items() if h[-1].declaration.stands_beside]
    assert checks == ["002-flat", "004-fs-8x4", "004-fs-o3"]
    checks.remove("004-fs-o3")   # beside 004-fsv6, on the socket machine too: another core, not another hierarchy
    assert [r[0] for r in rows] == [s for s, h in history.items() if judging.on_hierarchy(h, "flat")
                                    and s not in checks] + checks
    assert "000-fs" not in [r[0] for r in rows]
    beside = {r[0]: (r[3], r[4], r[6]) for r in rows}
    assert beside["004-fs-8x4"][0].startswith("004-fsv3") and beside["004-fs-8x4"][1].startswith("004-fs-8x4v1")
    assert beside["002-flat"][0].startswith("002-flatv1") and beside["002-flat"][1].startswith("002v5")
    # no runs yet: what their runs will differ in is not known, and the builds' patches are said
    assert beside["004-fs-8x4"][2] == ("gem5 patches: none -> chi-locked-rmw, x86-sti-shadow; the runs' inputs: not "
                                       "known until both are recorded")
    assert beside["002-flat"][2].endswith("the runs' inputs: not known until both are recorded")
    socket = {r[0]: r[4] for r in rows}
    assert socket["004"].startswith("004v5: -, not run yet") and socket["002"].startswith("002v5: -, not run yet")
    assert all(r[5] == "-" for r in rows)   # no runs, so no conclusion to compare
    assert socket["004"] and rows[[r[0] for r in rows].index("004")][6].startswith("cores_per_socket: 4 -> 20")
    # what a verdict concludes, compared across the machines: its word, and a point's simulated sign
    point = judging.Effect("point", "p", rules.Verdict(True, "sign only: published ..."), points=(NS(ratio=NS(mean=1.14)),))
    series = judging.Effect("series", "s", rules.Verdict(False, "no: retry100 does not collapse"))
    assert (point.conclusion, series.conclusion) == (("sign only", 1), ("no", 0))


def _arm_run(verdict: str, matched: int, unexplained: int, cpu: float | None, boot: str | None = None):
    checkpoint = NS(path=boot, cpu_seconds=100.0) if boot else None
    return NS(check={"verdict": verdict, "matched": matched, "unexplained": unexplained},
              run=NS(manifest=NS(gem5=NS(cpu_seconds=cpu), checkpoint=checkpoint)))


def test_the_arm_table_counts_a_disagreeing_run_and_each_boot_once():
    agree, disagree = "agrees: unexplained 0 of 10 items", "DISAGREES: unexplained 9 of 10 items"
    table = arm_table("t", [("a", [_arm_run(agree, 10, 0, 50.0, "ck1"), _arm_run(disagree, 10, 9, 70.0, "ck1")]),
                            ("b", [_arm_run(agree, 20, 0, 30.0, "ck2"), _arm_run("not checked", 0, 0, None)])])
    a, b, total = table.rows
    assert a[2] == "1 of 2" and a[3] == "10" and a[4] == "0-9" and a[5] == "50-70" and a[6] == "120"
    assert b[2] == "1 of 2 (1 not checked)" and b[3] == "20"
    assert total[0] == "all, with the 2 boots they started from" and total[2] == "2 of 4"
    assert total[6] == "350 (1 run or boot without a record)"   # 150 runs + two boots of 100, each once


NODE_LINE = [LineSymbols(line=100, symbols=["qnodes (CPU 0)"])]


def test_the_headline_gives_a_verdict_s_conclusion_and_leaves_its_figures_to_the_section():
    assert results.conclusion("yes: a collapses, b does not; a: last quarter 0.45 (0.45-0.46)") == \
        "yes: a collapses, b does not"
    assert results.conclusion("no: not as declared (a: [1, 1] made; b: [1] made)") == \
        "no: not as declared (a: [1, 1] made; b: [1] made)"   # a ';' inside parentheses is not the end
    assert results.conclusion("sign only: published +43% is outside") == "sign only: published +43% is outside"


def _queued_run(queue: list[int] | None, ops: int, symbols: list = NODE_LINE, region_ops: float | None = None):
    """A run's queue counts of its region, whose operations are the window's unless given."""
    return NS(analysis=NS(lock_queue=queue), run=NS(ops=ops, region_ops=region_ops or ops,
                                                    manifest=NS(kernel_symbols=symbols)))


def test_the_queue_table_gives_each_counted_arm_its_queued_acquisitions_per_operation():
    # the second run's region held 120 of its window's 200 operations: its 300 queued are 2.5 per operation
    table = queue_table("t", [("8 sockets: lockref-off", [_queued_run([90, 110], 100),
                                                          _queued_run([150, 150], 200, region_ops=120)]),
                              ("8 sockets: stock-6.12", [_queued_run([0, 2], 400, []), _queued_run(None, 400)]),
                              ("SE", [_queued_run(None, 10, [])])])
    assert table.rows == [["8 sockets: lockref-off", "2.250 (2.000-2.500)", "2"],
                          ["8 sockets: stock-6.12", "0.005", "1"]]
    assert queue_table("t", [("SE", [_queued_run(None, 10, [])])]) is None
    # zeros where no run's trace shows a node line: none queued, or named before per-CPU copies were: not said
    assert queue_table("t", [("old", [_queued_run([0, 0], 100, [])])]) is None


def test_every_complete_experiment_on_the_page_holds_its_runs_against_gem5():
    """Every declaration the page gives results for, the latest of each experiment or an earlier one, has its
    runs-against-gem5 table."""
    page = results_pages()
    shown = [(e.seed, e.declaration.id) for e in EXPERIMENTS.values()
             if f"Not run yet under {e.declaration.id}" not in page
             and f"Incomplete under {e.declaration.id}:" not in page
             and f"No verdict under {e.declaration.id}" not in page]
    for section in page.split("## Under declaration ")[1:]:   # an earlier declaration: kept, or not
        declaration, text = section.split(" (earlier)", 1)
        text = text.split("##", 1)[0]
        if "of its runs are not kept" not in text and f"No verdict under {declaration}" not in text:
            shown.append((declaration.rsplit("v", 1)[0], declaration))
    assert ("002-fs", "002-fsv1") in shown   # kept in reference-runs, with a verdict
    for seed, declaration in shown:
        assert f"Seed {seed}, declaration {declaration}: the runs, held against gem5" in page, declaration
