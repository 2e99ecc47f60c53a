"""gem5 integration: short 2x2 runs through cohtb launch (lockref fixed work; stat_path timed), held against
gem5's own evidence. Skipped, with the reason, when gem5 is absent (set GEM5 or put gem5.opt on PATH); must pass
when it is present.
`make test-gem5` runs it with the other gem5 tests."""

import json
from pathlib import Path

import pytest

from cohtb.analysis.reconcile import reconcile
from cohtb.fs import initramfs, kernel, symbols
from cohtb.fs.runner import PMEM
from cohtb.places import kernel_cache
from cohtb.run import gem5
from cohtb.launch import launch
from cohtb.run.spec import RunSpec
from cohtb.run.runs import load

pytestmark = [pytest.mark.gem5, pytest.mark.skipif(gem5.find() is None, reason=gem5.why_missing())]


def test_lockref_2x2_cmpxchg(tmp_path):
    spec = RunSpec("lockref", "cmpxchg", "shared", 2, 2, ops=40)
    [outcome] = launch([spec], tmp_path, jobs=1, timeout=1800)
    assert outcome.status == "done", outcome.error
    run = load(tmp_path / spec.id)
    m = run.manifest
    assert (m.system.sockets, m.system.cores) == (2, 4)
    assert [c.socket for c in m.controllers.l1] == [0, 0, 1, 1]
    assert m.workload.threads == 4 and m.workload.ops == 4 * 40
    assert 0 < m.roi.seconds < 0.1 and m.roi.begin_tick < m.roi.end_tick
    header, recs = run.events()
    # the trace holds the region of interest only
    assert len(recs) and recs["tick"].min() >= m.roi.begin_tick and recs["tick"].max() <= m.roi.end_tick
    # the lockref word was placed through the TLB mappings; in the shared layout the lookup fields share its line
    lref = next(f for f in m.layout if f.name == "d_lockref")
    assert lref.how in ("tlb", "object-offset") and lref.lines
    sharing = {f.name for f in m.layout if f.lines == lref.lines}
    assert "d_name" in sharing or "d_inode" in sharing, sharing
    # every transfer and dirty read the monitor counts is matched by gem5's evidence, and the lockref line ping-pongs
    rec = reconcile(recs, header.num_sockets)
    totals, line = rec.totals(), rec.lines[lref.lines[0]]
    assert line.transfersMatched > 0 and totals.unexplained <= 0.01 * totals.matched, totals


@pytest.mark.parametrize("layout", ["shared", "split"])
def test_stat_path_2x2_timed_window(tmp_path, layout):
    """Seed 004's workload as the seed experiments run it (a warm-up, then a window of simulated time): the
    region of interest is the window, the dentry's count word sits where the kernel's layout puts it, and the
    monitor's counts agree with gem5's evidence by the reconciliation's verdict."""
    from cohtb.analysis.analyse import analyse

    spec = RunSpec("stat_path", "retry100", layout, 2, 2, warmup_us=20, window_us=60, interval_us=10, seed=1)
    [outcome] = launch([spec], tmp_path, jobs=1, timeout=1800)
    assert outcome.status == "done", outcome.error
    run = load(tmp_path / spec.id)
    m, w = run.manifest, run.manifest.workload
    assert w.measure.mode == "window" and w.measure.window_ns == 60_000 and len(w.intervals.total) == 6
    assert sum(w.intervals.total) == w.ops == sum(w.per_thread_ops) and min(w.per_thread_ops) > 0
    assert w.final_count == 1 and w.invariants == "ok"
    # thread 0 opens and closes the region at its first op boundary past the window's: within a few µs
    assert abs(m.roi.seconds - 60e-6) < 10e-6, m.roi.seconds
    fields = {f"{f.object}.{f.name}": set(f.lines) for f in m.layout}
    count, name = fields["file.d_lockref"], fields["file.d_iname"]
    lookup = set().union(*(fields[f"file.{n}"] for n in ("d_flags", "d_seq", "d_parent", "d_name", "d_inode")))
    assert count and not (count & lookup)
    assert (count <= name) == (layout == "shared")       # before the reorder the name's tail shares the count's line
    a = analyse(run, tmp_path / "analysis" / "counters.json", check_model=True)
    assert a.model_check == "identical" and a.gem5.verdict.startswith("agrees"), a.gem5.verdict


def test_live_2x2_counts_what_the_traced_run_replays(tmp_path):
    """The same run twice, traced to a file and live: gem5 SE is deterministic, so the live run's snapshots and
    final counters are the offline replay of the traced run's events, interval by interval."""
    from cohtb.monitor import live, rtl
    from cohtb.run.recorder import Live

    spec = RunSpec("lockref", "retry100", "shared", 2, 2, warmup_us=5, window_us=20, interval_us=5, seed=1)
    [traced] = launch([spec], tmp_path / "traced", jobs=1, timeout=1800)
    [streamed] = launch([spec], tmp_path / "live", jobs=1, timeout=1800, live=Live())
    assert traced.status == streamed.status == "done", (traced.error, streamed.error)
    doc = json.loads((tmp_path / "live" / spec.id / "live.json").read_text())
    _, recs = load(tmp_path / "traced" / spec.id).events()
    assert doc["events"] == len(recs) > 0 and len(doc["intervals"]) >= 4
    offline = live.series(recs, doc["variant"], [], doc["interval_ticks"])
    assert doc == {"variant": doc["variant"], "regions": [], **offline.to_json()}
    final, _ = rtl.replay(recs, [], doc["variant"])
    assert doc["final"] == final.to_json() and final.totals["transfers"] > 0


@pytest.mark.kernel
@pytest.mark.skipif(not __import__("pathlib").Path("/usr/src/linux-source-6.12.tar.xz").exists(),
                    reason="Debian's linux-source-6.12 is not installed (`make kernel` installs it)")
def test_full_system_2x2_boot_and_measure(tmp_path, monkeypatch):
    """The real kernel on 2x2: built (cached), booted to a checkpoint (about 2.5 minutes), restored into timing
    CPUs and Ruby, stat(2) on one tmpfs file measured in a window; the dentry the kernel reported is where the
    trace shows the file's count word ping-ponging, and the monitor agrees with gem5's evidence."""
    from cohtb.experiments.plans import full_system_runs

    [spec] = full_system_runs(["pre611"], 2, 2, [1], warmup_us=300, window_us=60, interval_us=20, skew_ns=0)
    [outcome] = launch([spec], tmp_path, jobs=1, timeout=3600)
    assert outcome.status == "done", outcome.error
    run = load(tmp_path / spec.id)
    m, w = run.manifest, run.manifest.workload
    assert w.benchmark == "stat_file" and w.invariants == "ok" and w.ops > 0 and len(w.intervals.total) == 3
    assert m.kernel["variant"] == "pre611"
    fields = {f"{f.object}.{f.name}": f for f in m.layout}
    lref = fields["file.d_lockref"]
    assert lref.how == "kernel-report" and lref.paddr - fields["file.d_flags"].paddr == 96   # 6.8-6.10 as shipped
    assert set(lref.lines) & set(fields["file.d_iname"].lines)   # 6.10's layout: the name's tail shares the line
    header, recs = run.events()
    rec = reconcile(recs, header.num_sockets)
    totals, line = rec.totals(), rec.lines[lref.lines[0]]
    assert line.transfersMatched > 0 and totals.unexplained <= 0.01 * totals.matched, totals
    # each CPU's MCS nodes, where the boot put that CPU's per-CPU area: four areas, inside the 1 GiB of memory
    ramfs = initramfs.build()
    vmlinux = kernel.build("pre611", ramfs.list_path, ramfs.digest).vmlinux   # the cached build the run used
    ckpt = Path(m.checkpoint.path.replace("{kernel_cache}", str(kernel_cache())))
    named = symbols.kernel_symbols(vmlinux, ckpt / "ckpt" / PMEM, 4)
    qnodes = [s for s in named if s.name.startswith("qnodes (CPU ")]
    assert len(qnodes) == 4 and len({s.paddr // 64 for s in qnodes}) == 4 and all(s.paddr < 1 << 30 for s in qnodes)


def _guest_run(tmp_path, workload: str, kernel: str, policy: str):
    spec = RunSpec(workload, policy, "shared", 2, 2, warmup_us=300, window_us=60, interval_us=20, kernel=kernel)
    [outcome] = launch([spec], tmp_path, jobs=1, timeout=3600)
    assert outcome.status == "done", outcome.error
    run = load(tmp_path / spec.id)
    header, recs = run.events()
    rec = reconcile(recs, header.num_sockets)
    assert rec.totals().unexplained <= 0.01 * rec.totals().matched, rec.totals()
    return run, rec


@pytest.mark.kernel
@pytest.mark.skipif(not __import__("pathlib").Path("/usr/src/linux-source-6.12.tar.xz").exists(),
                    reason="Debian's linux-source-6.12 is not installed (`make kernel` installs it)")
def test_full_system_2x2_the_workloads_rwsem_sleeps_on_the_kernels_futex(tmp_path):
    """rwsem --guest on the real kernel: it runs whole, its layout map is physical (the guest's pagemap) and
    its count word's line is the one the trace shows moving between the cores."""
    run, rec = _guest_run(tmp_path, "rwsem", "rspin", "sleep")
    w, fields = run.manifest.workload, {f"{f.object}.{f.name}": f for f in run.manifest.layout}
    assert w.benchmark == "rwsem" and w.invariants == "ok" and w.ops > 0
    count = fields["rwsem.count"]
    assert count.how == "guest-pagemap" and rec.lines[count.lines[0]].transfersMatched > 0


@pytest.mark.kernel
@pytest.mark.skipif(not __import__("pathlib").Path("/usr/src/linux-source-6.12.tar.xz").exists(),
                    reason="Debian's linux-source-6.12 is not installed (`make kernel` installs it)")
@pytest.mark.parametrize("policy", ["sleep", "spin"])
def test_full_system_2x2_the_kernels_rwsem_with_and_without_reader_spinning(tmp_path, policy):
    """kernel_rwsem on variant rspin: its switch set by the policy, the kernel's benchmark rwsem (a global, laid
    out from its symbol and DWARF) is the line the trace shows moving."""
    run, rec = _guest_run(tmp_path, "kernel_rwsem", "rspin", policy)
    w, fields = run.manifest.workload, {f"{f.object}.{f.name}": f for f in run.manifest.layout}
    assert w.benchmark == "kernel_rwsem" and w.invariants == "ok" and w.ops > 0
    count = fields["cohtb_rwsem.count"]
    assert count.how == "kernel-symbol" and rec.lines[count.lines[0]].transfersMatched > 0
