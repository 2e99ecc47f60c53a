"""The import graph of the cohtb package: stages in one order, each importing only the stages its row of ALLOWED
names; no import cycle between modules; no cohtb import inside a function, where it could hide a cycle (the CLI
imports a verb's module by name, with importlib, only when the verb is given); and the gem5-config files cohtb
executes by path (read by gem5 and by cohtb alike) named, and standard library only. docs/architecture.md
describes the stages."""

import ast
import sys
from pathlib import Path

from cohtb.analysis.cache import analysis_files
from cohtb.cli import VERBS
from cohtb.places import ROOT

PACKAGE = ROOT / "cohtb"
# Earliest first. A module may import from its own stage and from earlier ones, never from a later one.
STAGES = [
    {"errors", "places", "atomic", "digest", "toolchain", "tables", "data_file"},   # what every stage uses
    {"contract"},      # the event format and the counting rules, generated into Python, C and Scala
    {"trace"},         # gem5's ProtocolTrace -> event files
    {"monitor"},       # counting: the models and the Verilated RTL, offline and live
    {"verify"},        # the soak, and the generators of test streams
    {"fpga"},          # the FPGA flow of the monitor's Verilog
    {"run"},           # a run: its spec, manifest, directory; the recorder and the scheduler
    {"se", "fs"},      # the two runners: syscall emulation and full system
    {"launch"},        # the runners put together
    {"analysis"},      # a run's counters, reconciled with gem5, and its metrics
    {"experiments"},   # the seeds' declared experiments, their rules and plans
    {"recording"},     # runs recorded as every verb records them: the checks, then the launch
    {"report"},        # tables, plots, pages
    {"mainjob"},       # cohtb run
    {"commands"},      # one module per verb
    {"cli"},
]
STAGE_OF = {name: i for i, names in enumerate(STAGES) for name in names}

BASE = {"errors", "places", "atomic", "digest", "toolchain", "tables", "data_file"}
# Which other stages each stage may import: the dependencies the design has, not merely an order. Above `run`,
# a run is read through its manifest and run/'s vocabulary (machines, kernels): no stage above `launch` imports
# how a run is recorded (se, fs) or launched.
ALLOWED = {
    "contract": BASE, "trace": BASE | {"contract"}, "monitor": BASE | {"contract", "trace"},
    "verify": BASE | {"contract", "trace", "monitor"}, "fpga": BASE,
    "run": BASE | {"contract", "trace", "monitor"},
    "se": BASE | {"run"}, "fs": BASE | {"contract", "trace", "run"},
    "launch": BASE | {"run", "se", "fs"},
    "analysis": BASE | {"contract", "trace", "monitor", "run"},
    "experiments": BASE | {"run", "analysis"},
    "recording": BASE | {"run", "launch", "experiments"},
    "report": BASE | {"monitor", "run", "analysis", "experiments"},   # monitor: the counting rules' table
    "mainjob": BASE | {"trace", "run", "recording", "analysis", "experiments", "report"},
    "commands": set(STAGE_OF) - {"cli"},
    "cli": BASE,
    **{name: BASE for name in BASE},
}
# The gem5-config files cohtb runs by their path (importlib), by the module that runs them: gem5 runs them too, so
# they import only the standard library and each other.
EXECUTED_BY_PATH = {"cohtb.run.machines": {"gem5-configs/multisocket/__init__.py",
                                           "gem5-configs/multisocket/json_file.py",
                                           "gem5-configs/multisocket/machine_file.py",
                                           "gem5-configs/multisocket/placement.py",
                                           "gem5-configs/multisocket/topology.py"}}


def modules() -> dict[str, Path]:
    out = {}
    for p in PACKAGE.rglob("*.py"):
        name = ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        out[name] = p
    return out


def imports(tree: ast.AST, known: dict[str, Path], module: str) -> list[str]:
    """The cohtb modules a syntax tree (a file's, a function's, of `module`) imports, relative imports resolved."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:   # from .x / ..x: relative to the module's package
            package = (module if known[module].name == "__init__.py" else module.rsplit(".", 1)[0]).split(".")
            base = package[:len(package) - node.level + 1]
            node = ast.ImportFrom(".".join(base + ([node.module] if node.module else [])), node.names, 0)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "cohtb":
            for a in node.names:
                full = f"{node.module}.{a.name}"
                out.append(full if full in known else node.module)
        elif isinstance(node, ast.Import):
            out += [a.name for a in node.names if a.name.split(".")[0] == "cohtb"]
    return out


def tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text())


def stage(module: str) -> int:
    parts = module.split(".")
    assert len(parts) > 1 and parts[1] in STAGE_OF, f"{module}: in no stage of STAGES"
    return STAGE_OF[parts[1]]


def test_every_module_is_in_a_stage():
    for m in modules():
        if m != "cohtb":
            stage(m)


def test_no_stage_imports_a_later_one():
    known = modules()
    upward = [f"{m} imports {t}" for m, p in known.items() if m != "cohtb"
              for t in imports(tree(p), known, m) if t != "cohtb" and stage(t) > stage(m)]
    assert not upward, upward


def test_each_stage_imports_only_what_its_row_allows():
    known = modules()
    assert set(ALLOWED) == set(STAGE_OF)
    edges = sorted({(m.split(".")[1], t.split(".")[1]) for m, p in known.items() if m != "cohtb"
                    for t in imports(tree(p), known, m) if t != "cohtb"})
    unlisted = [f"{a} imports {b}" for a, b in edges if a != b and b not in ALLOWED[a]]
    assert not unlisted, unlisted
    for a, b in edges:   # the table follows the stage order
        assert a == b or stage(f"cohtb.{b}") <= stage(f"cohtb.{a}"), (a, b)


def test_the_gem5_config_files_run_by_path_are_listed_and_standard_library_only():
    known = modules()
    loaders = {m for m, p in known.items() if "spec_from_file_location" in p.read_text() or "runpy" in p.read_text()}
    assert loaders == set(EXECUTED_BY_PATH)
    for files in EXECUTED_BY_PATH.values():
        for f in files:
            siblings = {Path(x).stem for x in files}
            for node in ast.walk(tree(ROOT / f)):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                         [node.module] if isinstance(node, ast.ImportFrom) and node.module else [])
                for name in names:
                    top = name.split(".")[0]
                    assert top in sys.stdlib_module_names or top in siblings, f"{f} imports {name}"


def test_no_import_cycle_between_modules():
    known = modules()
    graph = {m: {t for t in imports(tree(p), known, m) if t in known and t != m} for m, p in known.items()}
    state: dict[str, int] = {}   # 1: on the path, 2: done

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(t):] + [t]))
            if t not in state:
                visit(t, path + [t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])


def test_no_cohtb_import_inside_a_function():
    known = modules()
    hidden = []
    for m, p in known.items():
        for fn in ast.walk(tree(p)):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                hidden += [f"{m}.{fn.name} imports {t}" for t in imports(fn, known, m)]
    assert not hidden, hidden


def test_the_analysis_cache_key_covers_every_module_an_analysis_imports():
    """A cached analysis is reused while the files of cohtb/analysis/cache.py's ANALYSIS_CODE are unchanged: so no
    module among them may import one outside them (whose change would then go unseen)."""
    known = modules()
    covered = {m for m, p in known.items() if p in set(analysis_files())}
    assert "cohtb.analysis.analyse" in covered and "cohtb.monitor.compiled_model" in covered
    outside = [f"{m} imports {t}" for m in sorted(covered) for t in imports(tree(known[m]), known, m)
               if t in known and t not in covered]
    assert not outside, outside


def test_the_architecture_page_names_every_module():
    """docs/architecture.md names each module of the package (by its name in backquotes, or its path); a verb's
    module is named by `cohtb/commands/<verb>.py`, and the README lists the verbs."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    verbs = {f"cohtb.commands.{verb}" for verb in VERBS}
    unnamed = [name for name in modules() if not name.endswith("__init__") and name not in ("cohtb", *verbs)
               and f"`{name.rpartition('.')[2]}`" not in doc and name.replace(".", "/") not in doc]
    assert not unnamed, unnamed
