"""A run's label names what tells it from the other runs of a report: the kernel variant and the dentry's
placement for full-system runs, the lock model for SE runs, and the repetition."""

import re

from cohtb.analysis.metrics import run_label
from cohtb.places import REFERENCE_RUNS
from cohtb.run.runs import discover


def test_every_bundled_run_has_a_label_of_its_own():
    runs = discover([REFERENCE_RUNS])
    labels = [run_label(r) for r in runs]
    same = {label for label in labels if labels.count(label) > 1}
    assert len(runs) > 50 and not same, sorted(same)


def test_full_system_runs_are_named_by_kernel_and_placement():
    by_id = {r.id: run_label(r) for r in discover([REFERENCE_RUNS])}
    fs = {i: label for i, label in by_id.items() if i.startswith("fs-stat_file-")}
    assert fs
    for i, label in fs.items():
        # pre611 recorded before issue 32's fix was the 184-byte dentry, and its label says so; since, the shipped one
        # (every run recorded under a declaration, 004-fsv3 on, is since the fix)
        variant, size = re.match(r"fs-stat_file-(.+?)-(\d+x\d+)-", i).groups()
        kernel = "pre611 (built as hybrid184)" if variant == "pre611" and "-d004-" not in i else variant
        op = "open_close" if "-opopenclose" in i else "stat"   # the operation each CPU repeats
        assert label.startswith(f"fs {kernel} {op} {size}, dentry "), label
        window = re.search(r"-win(\d+)-", i).group(1)   # each run's own window
        assert label.split(", ")[-1].split(" #")[0].split(" [")[0] == f"{window} µs window", label
        assert "retry100" not in label and "shared" not in label   # the kernel is the policy and the layout
        assert ("line offset" in label) == ("dentrylineoffset" in i)


def test_full_system_runs_of_a_workload_of_their_own_are_named_by_its_policy():
    labels = {r.id: run_label(r) for r in discover([REFERENCE_RUNS]) if r.id.startswith("fs-rwsem-")}
    assert labels
    for i, label in labels.items():
        policy = "sleep" if "-sleep-" in i else "spin"
        assert label.startswith(f"fs rspin rwsem {policy} 2x4, 1000 µs window"), label


def test_se_runs_name_their_lock_model():
    labels = [run_label(r) for r in discover([REFERENCE_RUNS]) if r.spec.workload == "open_close"]
    assert any("spinlock=ticket" in label for label in labels) and any("spinlock=tas" in label for label in labels)
