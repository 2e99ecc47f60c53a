"""Full-system runs without gem5 or a kernel build: the DWARF layouts the variants promise (from pahole output
of the built kernels, kept as fixtures), the patches and the initramfs, the guest benchmark natively, and the
launch path end to end with a stand-in gem5 and a stand-in kernel build. Building the kernels themselves is
`make test-kernel` (marker `kernel`); booting them in gem5 is `make test-gem5`."""

import gzip
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from cohtb.analysis.compare import symbols_text
from cohtb.errors import CohtbError
from cohtb.fs import dwarf, initramfs, kernel, symbols
from cohtb.run import code_names, kernels, line_names
from cohtb import cli, launch
from cohtb.experiments import plans
from cohtb.fs import runner as fs_runner
from cohtb.run.runs import load
from cohtb.run.spec import RunSpec

FIXTURES = Path(__file__).parent / "fixtures" / "kernel"
FAKE = Path(__file__).with_name("fake_gem5.py")


def pahole_fixture(variant: str) -> dict:
    return dwarf.parse_pahole((FIXTURES / f"pahole-{variant}.txt").read_text())


SEED_004 = Path(__file__).parent / "fixtures"


def seed_after() -> dict:
    """Seed 004's pahole listing of struct dentry after its patch 2/2 (6.11 on), as the seed quotes it."""
    return dwarf.parse_pahole((SEED_004 / "seed-004-pahole-after.txt").read_text())["dentry"]


def hunk_members(text: str) -> tuple[list[str], list[str]]:
    """The struct members a unified-diff hunk names, in order: (before the change, after it). Lines starting
    with + or - are the change, the others context (the seed's quote lost the leading space)."""
    before, after = [], []
    body = text[text.index("\n@@ ") + 1:].splitlines()[1:]
    for line in body:
        sign = line[:1] if line[:1] in "+-" else " "
        code = line[1:] if sign != " " else line
        decl = code.split(";")[0] if ";" in code and "/*" not in code.split(";")[0] else None
        if decl is None:
            continue
        name = re.findall(r"\w+", re.sub(r"\[.*?\]", "", decl))[-1]
        if sign != "+":
            before.append(name)
        if sign != "-":
            after.append(name)
    return before, after


def seed_before() -> dict:
    """6.8 .. 6.10's struct dentry: the seed's listing with its hunk reversed. The members the hunk names are
    laid out again in their order before the patch, from where the first of them starts (each 8-byte aligned,
    as every member the hunk moves is); the others keep their offsets."""
    after = seed_after()
    before_order, after_order = hunk_members((SEED_004 / "seed-004-patch-2-2-hunk.txt").read_text())
    names = [f["name"] for f in after["fields"]]
    first = names.index(after_order[0])
    assert names[first:first + len(after_order)] == after_order   # the hunk's members, in the listing's order
    block = {f["name"]: f for f in after["fields"][first:first + len(after_order)]}
    offset, moved = block[after_order[0]]["offset"], []
    for n in before_order:
        if block[n]["size"] % 8 == 0:
            offset = -(-offset // 8) * 8
        moved.append({**block[n], "offset": offset})
        offset += block[n]["size"]
    last = block[after_order[-1]]
    assert offset == last["offset"] + last["size"]   # the block keeps its size: nothing after it moves
    fields = after["fields"][:first] + moved + after["fields"][first + len(after_order):]
    return {"size": after["size"], "fields": fields}


def test_the_seeds_hunk_reversed_is_6_10s_dentry():
    """The derivation itself: d_lockref back in front of d_op, d_op .. d_fsdata 8 bytes on, 192 bytes."""
    before, after = hunk_members((SEED_004 / "seed-004-patch-2-2-hunk.txt").read_text())
    assert before == ["d_inode", "d_iname", "d_lockref", "d_op", "d_sb", "d_time", "d_fsdata"]
    assert after == ["d_inode", "d_iname", "d_op", "d_sb", "d_time", "d_fsdata", "d_lockref"]
    offsets = {f["name"]: f["offset"] for f in seed_before()["fields"]}
    assert {n: offsets[n] for n in ("d_iname", "d_lockref", "d_op", "d_sb", "d_time", "d_fsdata", "d_lru/d_wait",
                                    "d_sib", "d_children", "d_u")} == {
        "d_iname": 56, "d_lockref": 96, "d_op": 104, "d_sb": 112, "d_time": 120, "d_fsdata": 128,
        "d_lru/d_wait": 136, "d_sib": 152, "d_children": 168, "d_u": 176}
    assert seed_before()["size"] == 192


# what each built kernel's struct dentry must be, field for field: the seed's listing, or it with its hunk reversed
SEED_LAYOUT = {"stock-6.12": seed_after, "pre611": seed_before}


@pytest.mark.parametrize("name", sorted(SEED_LAYOUT))
def test_a_built_kernels_dentry_is_the_seeds(name):
    """The DWARF of the built kernel (pahole output kept as a fixture) against seed 004's own listing, not
    against what the variant promises: every field's offset and size, and the structure's size."""
    fixture = FIXTURES / f"pahole-{name}.txt"
    if name == "pre611" and dwarf.parse_pahole(fixture.read_text())["dentry"]["size"] != 192:
        pytest.skip("tests/fixtures/kernel/pahole-pre611.txt is not from a build of the 6.8 .. 6.10 layout yet "
                    "(`cohtb kernel build --variant pre611`, then pahole -C dentry,inode on its vmlinux)")
    assert pahole_fixture(name)["dentry"] == SEED_LAYOUT[name]()


def test_a_variant_promises_the_seeds_layout():
    """A pre611 variant whose promise is not 6.8 .. 6.10's dentry (the seed's listing with its hunk reversed) fails
    here, as does one whose patches make another dentry than it promises."""
    for want, names in ((seed_before(), ("pre611", "pre611-wait")),
                        (seed_after(), ("stock-6.12", "wait", "lockref-off"))):
        lockref = next(f["offset"] for f in want["fields"] if f["name"] == "d_lockref")
        for n in names:
            v = kernels.VARIANTS[n]
            assert (v.d_lockref_offset, v.dentry_size) == (lockref, want["size"]), n
    for v in kernels.VARIANTS.values():
        d = kernels.variant_dentry(v)
        assert (d.d_lockref_offset, d.size) == (v.d_lockref_offset, v.dentry_size), v.name
    assert kernels.variant_dentry(kernels.VARIANTS["pre611"]) == kernels.DENTRY_68
    assert kernels.variant_dentry(kernels.VARIANTS["hybrid184"]) == kernels.DENTRY_HYBRID184


@pytest.mark.parametrize("name", ["stock-6.12", "pre611", "hybrid184"])
def test_dentry_layout_is_what_the_variant_promises(name):
    layout = pahole_fixture(name)
    dwarf.check_promise(kernels.VARIANTS[name], layout)
    fields = {f["name"]: f for f in layout["dentry"]["fields"]}
    lockref_line = fields["d_lockref"]["offset"] // 64
    lookup = ("d_seq", "d_parent", "d_name", "d_inode")
    # 6.11 on: d_lockref's line holds none of what the RCU lookup reads; before: it holds the name's tail
    # (drawn from a line start, as pahole draws it: where every 192-byte dentry starts)
    shares = {n for n, f in fields.items() if f["offset"] // 64 <= lockref_line <= (f["offset"] + f["size"] - 1) // 64}
    if name == "stock-6.12":
        assert fields["d_lockref"]["offset"] == 128 and not shares & set(lookup + ("d_iname",))
    else:
        assert fields["d_lockref"]["offset"] == {"pre611": 96, "hybrid184": 88}[name] and "d_iname" in shares
    # nested unions are one field each, named by their members; attributes are not names
    assert any(n == "d_lru/d_wait" for n in fields) and "d_u" in fields
    assert not any("attribute" in f["name"] for s in layout.values() for f in s["fields"])
    inode = {f["name"] for f in layout["inode"]["fields"]}
    assert {"i_mode", "i_lock", "i_size", "i_dentry/i_rcu"} <= inode


def test_a_broken_promise_is_an_error():
    with pytest.raises(CohtbError, match="promises 128"):
        dwarf.check_promise(kernels.VARIANTS["stock-6.12"], pahole_fixture("pre611"))
    with pytest.raises(CohtbError, match="promises 96"):
        dwarf.check_promise(kernels.VARIANTS["pre611"], pahole_fixture("hybrid184"))


def test_pahole_members_broken_across_lines_are_one_member():
    text = "not a struct {\nstruct s {\nstruct lockref d_lockref\n__attribute__((__aligned__(8))); /* 8 8 */\n" \
           "/* size: 16, cachelines: 1, members: 1 */\n};\n"
    assert dwarf.parse_pahole(text) == {"s": {"size": 16, "fields": [{"name": "d_lockref", "offset": 8, "size": 8}]}}


REFERENCE_RUNS = Path(__file__).parent.parent / "reference-runs"


def test_recorded_builds_say_which_dentry_they_had():
    """The bundled pre611 runs recorded before issue 32's fix were built with the hypothetical 184-byte dentry (the
    record says so by their tree key: they predate patch digests), those recorded since (declaration 004-fsv3 on)
    with 6.8-6.10's, by their patches' digests; each agrees with its run's own layout map."""
    runs = sorted(REFERENCE_RUNS.glob("fs-stat_file-*/manifest.json"))   # the runs whose object is the file's dentry
    assert runs
    for path in runs:
        m = json.loads(path.read_text())
        d = kernels.recorded_dentry(m["kernel"])
        paddr = {f["name"]: f["paddr"] for f in m["layout"] if f["object"] == "file"}
        assert paddr["d_lockref"] - paddr["d_flags"] == d.d_lockref_offset, path.parent.name
        fixed = "patch_digests" in m["kernel"]
        pre611 = kernels.DENTRY_68 if fixed else kernels.DENTRY_HYBRID184
        # the other variants (wait, lockref-off) change lockref's code, not the dentry: 6.12's
        assert d == (pre611 if m["kernel"]["variant"] == "pre611" else kernels.DENTRY_611), path.parent.name
        # the runs since the fix are those recorded under a declaration (004-fsv3 on); none before it had one
        assert fixed == bool(m["spec"].get("declaration")), path.parent.name
    for name, want in (("pre611", kernels.DENTRY_68), ("hybrid184", kernels.DENTRY_HYBRID184),
                       ("stock-6.12", kernels.DENTRY_611), ("pre611-wait", kernels.DENTRY_68)):
        v = kernels.VARIANTS[name]
        inputs = {"variant": name, "patches": list(v.all_patches()), "tree_key": "0" * 16,
                  "patch_digests": {p: kernels.patch_digest(p) for p in v.all_patches()}}
        assert kernels.recorded_dentry(inputs) == want
    # a pre611 build from before the digests whose tree key is not recorded: unknown, not guessed
    with pytest.raises(CohtbError, match="unknown"):
        kernels.recorded_dentry({"variant": "pre611", "tree_key": "0" * 16,
                                "patches": ["boot-lapic-timer-period", "dcache-report-objects", "dentry-pre611-layout"]})
    # a patch that changes struct dentry and is not in the record is refused before anything is built
    assert all(kernels.patch_digest(p) in kernels.RECORDED_DENTRIES for p in
               (q.stem for q in kernels.PATCHES.glob("*.patch")) if kernels.touches_dentry(p))


def test_every_variant_names_patches_that_exist_and_are_documented():
    for v in kernels.VARIANTS.values():
        for p in v.all_patches():
            text = kernels.patch_path(p).read_text()
            head = text.split("\n--- a/")[0]
            assert head.startswith("cohtb: ") and len(head.splitlines()) >= 5, p   # a title and line-by-line notes
    assert set(kernels.VARIANTS) >= {"stock-6.12", "pre611", "wait", "lockref-off", "hybrid184"}


NO_SOURCE = pytest.mark.skipif(not Path(os.environ.get("COHTB_LINUX_SOURCE", kernel.SOURCE_TARBALL)).exists(),
                               reason="Debian's linux-source-6.12 is not installed (`make kernel` installs it)")


@pytest.mark.kernel
@NO_SOURCE
def test_the_patches_apply_to_the_packaged_source(tmp_path):
    src = tmp_path / "src"
    lines = [p.read_text().splitlines() for p in kernels.PATCHES.glob("*.patch")]
    files = {b[6:].strip() for ls in lines for a, b in zip(ls, ls[1:])
             if b.startswith("+++ b/") and a != "--- /dev/null"}   # a file the patch creates is not in the tarball
    tarball = kernel.source_tarball()
    top = subprocess.run(["tar", "-tf", str(tarball)], capture_output=True, text=True).stdout.split("/")[0]
    subprocess.run(["tar", "-xf", str(tarball), "-C", str(tmp_path), *[f"{top}/{f}" for f in files]], check=True)
    shutil.move(str(tmp_path / top), src)
    for v in kernels.VARIANTS.values():
        for p in v.all_patches():
            r = subprocess.run(["patch", "-p1", "--dry-run", "-s", "-i", str(kernels.patch_path(p))], cwd=src,
                               capture_output=True, text=True)
            assert r.returncode == 0, (v.name, p, r.stdout)


def test_the_initramfs_holds_init_busybox_and_the_guest_programs(monkeypatch, tmp_path):
    monkeypatch.setenv("COHTB_KERNEL_CACHE", str(tmp_path))
    ramfs = initramfs.build()
    assert ramfs.list_path.is_relative_to(tmp_path)
    lines = ramfs.list_path.read_text().splitlines()
    files = {l.split()[1]: l.split()[2] for l in lines if l.startswith("file ")}
    assert set(files) == {"/init", "/bin/busybox", "/bin/cohtb-m5"}   # the benchmark comes with each run
    assert all(initramfs.is_static(Path(p)) for g, p in files.items() if g != "/init")
    assert "nod /dev/console 0600 0 0 c 5 1" in lines and "slink /bin/sh busybox 0777 0 0" in lines
    assert Path(files["/init"]).read_text().startswith("#!/bin/busybox sh")
    assert initramfs.build().digest == ramfs.digest   # the same contents, the same cached list


def test_the_guest_benchmark_runs_natively():
    initramfs.build_guest_programs()
    for op in ("stat", "open_close"):
        out = subprocess.run([str(initramfs.GUEST_BUILD / "stat_file"), "--threads", "2", "--op", op, "--warmup-us",
                              "2000", "--window-us", "20000", "--interval-us", "5000"], capture_output=True, text=True,
                             check=True).stdout
        doc = json.loads(out)
        assert doc["benchmark"] == "stat_file" and doc["invariants"] == "ok" and doc["ops"] > 0
        assert len(doc["intervals"]["total"]) == 4 and sum(doc["per_thread_ops"]) == doc["ops"]
        assert os.path.basename(doc["path"]).startswith(f"cohtb-{op}.") and not os.path.exists(doc["path"])


def test_the_guest_benchmarks_intruder_lists_the_directory_now_and_then(tmp_path):
    """--intruder-period-us P (issue 36, seed 004's trigger): one more thread runs getdents64 over the file's
    directory every P µs, as `ls` does; the listings are counted, each one whole."""
    initramfs.build_guest_programs()
    r = subprocess.run([str(initramfs.GUEST_BUILD / "stat_file"), "--dir", str(tmp_path), "--threads", "1",
                        "--intruder-period-us", "2000", "--warmup-us", "1000", "--window-us", "40000",
                        "--interval-us", "10000"], capture_output=True, text=True, check=True)
    doc = json.loads(r.stdout)
    assert doc["invariants"] == "ok" and doc["listing_failures"] == 0 and doc["threads"] == 1
    # at most one per period of the 41 ms and the few after it until the workers are joined; at least one
    assert 1 <= doc["listings"] <= 25
    r = subprocess.run([str(initramfs.GUEST_BUILD / "stat_file"), "--dir", str(tmp_path), "--threads", "1",
                        "--intruder-period-us", "2000", "--intruder-listings", "3", "--warmup-us", "1000",
                        "--window-us", "40000", "--interval-us", "10000"], capture_output=True, text=True, check=True)
    assert json.loads(r.stdout)["listings"] == 3   # a few listings (the seed's few `ls`), then none
    r = subprocess.run([str(initramfs.GUEST_BUILD / "stat_file"), "--dir", str(tmp_path), "--intruder-listings", "3",
                        "--window-us", "2000", "--interval-us", "1000"], capture_output=True, text=True)
    assert r.returncode == 2 and "--intruder-listings needs --intruder-period-us" in r.stderr
    r = subprocess.run([str(initramfs.GUEST_BUILD / "stat_file"), "--dir", str(tmp_path), "--threads", "1",
                        "--window-us", "2000", "--interval-us", "1000"], capture_output=True, text=True, check=True)
    assert json.loads(r.stdout)["listings"] == 0
    # the control of a run that lists: the lister runs, on a period and a count that would list, and never lists
    r = subprocess.run([str(initramfs.GUEST_BUILD / "stat_file"), "--dir", str(tmp_path), "--threads", "1",
                        "--intruder-period-us", "2000", "--intruder-listings", "3", "--idle-intruder",
                        "--warmup-us", "1000", "--window-us", "40000", "--interval-us", "10000"],
                       capture_output=True, text=True, check=True)
    doc = json.loads(r.stdout)
    assert doc["listings"] == 0 and doc["invariants"] == "ok" and doc["threads"] == 1
    r = subprocess.run([str(initramfs.GUEST_BUILD / "stat_file"), "--dir", str(tmp_path), "--idle-intruder",
                        "--window-us", "2000", "--interval-us", "1000"], capture_output=True, text=True)
    assert r.returncode == 2 and "--idle-intruder needs --intruder-period-us" in r.stderr


def test_the_guest_benchmark_gives_each_thread_its_own_file_under_a_watched_directory(tmp_path):
    """--own-files --watch-dir (issue 36, seed 000's path): every thread opens and closes its own file, with its own
    descriptor table, in a directory with an inotify watch, so only the directory's dentry is shared; every file
    is removed at the end."""
    initramfs.build_guest_programs()
    r = subprocess.run([str(initramfs.GUEST_BUILD / "stat_file"), "--dir", str(tmp_path), "--threads", "2",
                        "--op", "open_close", "--own-files", "--watch-dir", "--window-us", "4000",
                        "--interval-us", "1000"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["invariants"] == "ok" and doc["own_files"] == 1 and doc["watched_dir"] == 1 and doc["ops"] > 0
    assert not list(tmp_path.iterdir())
    r = subprocess.run([str(initramfs.GUEST_BUILD / "stat_file"), "--dir", str(tmp_path / "none"), "--watch-dir",
                        "--window-us", "2000", "--interval-us", "1000"], capture_output=True, text=True)
    assert r.returncode == 3 and "cannot create" in r.stderr


def test_the_guest_benchmark_removes_what_it_created_when_its_set_up_fails_half_way():
    """A thread's own file that cannot be created (a name already taken) or a watch that cannot be added (a
    directory it may write but not read): one clear line, exit 3, and every file it created removed, nothing else."""
    initramfs.build_guest_programs()
    binary = str(initramfs.GUEST_BUILD / "stat_file")
    args = ["--threads", "3", "--op", "open_close", "--own-files", "--window-us", "2000", "--interval-us", "1000"]
    with tempfile.TemporaryDirectory(dir="/tmp") as d:   # under /tmp, so an unprivileged user may reach it
        taken = lambda: os.mkdir(f"{d}/cohtb-open_close.{os.getpid()}.t2")   # the child's pid is the benchmark's
        r = subprocess.run([binary, "--dir", d, *args], capture_output=True, text=True, preexec_fn=taken)
        assert r.returncode == 3 and re.search(r"cannot create .*\.t2: File exists", r.stderr), r.stderr
        left = list(Path(d).iterdir())   # thread 1's file and the benchmark's own are gone; the obstacle stays
        assert len(left) == 1 and left[0].is_dir() and left[0].name.endswith(".t2")
        left[0].rmdir()
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        # root reads any directory: the benchmark then runs as nobody, which may write and search it, not read it
        nobody = (lambda: os.setuid(65534)) if os.geteuid() == 0 else None
        os.chmod(d, 0o333 if nobody else 0o300)
        r = subprocess.run([binary, "--dir", d, "--watch-dir", *args], capture_output=True, text=True,
                           preexec_fn=nobody)
        os.chmod(d, 0o700)
        assert r.returncode == 3 and f"--watch-dir {d}: Permission denied" in r.stderr, r.stderr
        assert not list(Path(d).iterdir())


def test_the_guest_benchmark_places_its_dentry_only_on_a_kernel_that_reports_it(tmp_path):
    """--dentry-line-offset reads the kernel's cohtb-object lines; a host kernel prints none: one clear line, exit 3,
    and no file left behind."""
    initramfs.build_guest_programs()
    r = subprocess.run([str(initramfs.GUEST_BUILD / "stat_file"), "--dir", str(tmp_path), "--dentry-line-offset", "24",
                        "--window-us", "2000", "--interval-us", "1000"], capture_output=True, text=True)
    assert r.returncode == 3 and "reports no dentry address" in r.stderr and not list(tmp_path.iterdir())


def test_the_guest_benchmark_pads_files_before_its_own_and_removes_them(tmp_path):
    """--pad-files N (a repetition's placement): N other files are created first and removed at the end; with
    --dentry-line-offset it is refused (both place the dentry)."""
    initramfs.build_guest_programs()
    r = subprocess.run([str(initramfs.GUEST_BUILD / "stat_file"), "--dir", str(tmp_path), "--pad-files", "3",
                        "--threads", "2", "--window-us", "2000", "--interval-us", "1000"], capture_output=True,
                       text=True, check=True)
    doc = json.loads(r.stdout)
    assert doc["pad_dentries"] == 3 and doc["invariants"] == "ok" and not list(tmp_path.iterdir())
    r = subprocess.run([str(initramfs.GUEST_BUILD / "stat_file"), "--dir", str(tmp_path), "--pad-files", "3",
                        "--dentry-line-offset", "8"], capture_output=True, text=True)
    assert r.returncode != 0 and "both place the dentry" in r.stderr and not list(tmp_path.iterdir())


def test_the_guest_m5_tool_refuses_unknown_commands():
    initramfs.build_guest_programs()
    r = subprocess.run([str(initramfs.GUEST_BUILD / "cohtb-m5"), "bogus"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage" in r.stderr


def fs_specs(kernels, sockets, cores, warmup_us, window_us, interval_us, seeds, offsets=(None,)):
    """One-off full-system runs with every measurement parameter given (none from the declaration), no skew."""
    return plans.full_system_runs(kernels, sockets, cores, seeds, offsets=offsets, warmup_us=warmup_us,
                                  window_us=window_us, interval_us=interval_us, skew_ns=0)


def test_full_system_specs_take_their_kernels_policy_and_layout():
    specs = fs_specs(["pre611", "stock-6.12"], 2, 2, 500, 100, 20, [1, 2])
    assert [(s.kernel, s.policy, s.layout, s.seed) for s in specs] == [
        ("pre611", "retry100", "shared", 1), ("pre611", "retry100", "shared", 2),
        ("stock-6.12", "retry100", "split", 1), ("stock-6.12", "retry100", "split", 2)]
    assert specs[0].id == "fs-stat_file-pre611-2x2-warm500-win100-int20-opstat-s1"
    for s in specs:
        launch.check([s])
        assert "--policy" not in s.workload_args() and "--op" in s.workload_args()
    with pytest.raises(CohtbError, match="its kernel's policy"):
        launch.check([RunSpec("stat_file", "locked", "shared", 2, 2, window_us=100, interval_us=20, kernel="pre611")])
    with pytest.raises(CohtbError, match="unknown"):
        fs_specs(["nope"], 2, 2, 500, 100, 20, [1])
    placed = fs_specs(["pre611"], 8, 4, 500, 2000, 100, [1], offsets=(None, 24))
    assert placed[0].extra == ("--op", "stat") and placed[1].extra == ("--op", "stat", "--dentry-line-offset", "24")
    assert placed[1].id == "fs-stat_file-pre611-8x4-warm500-win2000-int100-opstatdentrylineoffset24-s1"


@pytest.fixture
def fake_full_system(monkeypatch, tmp_path):
    """The stand-in gem5, and a stand-in kernel build: a vmlinux placeholder with the stock layout's DWARF."""
    monkeypatch.setenv("GEM5", str(FAKE))
    monkeypatch.setenv("COHTB_KERNEL_CACHE", str(tmp_path / "cache"))

    def fake_build(name, list_path, digest, jobs=None):
        d = tmp_path / "cache" / name
        d.mkdir(parents=True, exist_ok=True)
        (d / "vmlinux").write_bytes(b"\x7fELF fake")
        fixture = name if (FIXTURES / f"pahole-{name}.txt").exists() else "stock-6.12"
        (d / "layout.json").write_text(json.dumps(pahole_fixture(fixture)))
        (d / "inputs.json").write_text(json.dumps({"variant": name, "patches": list(kernels.variant(name).all_patches())}))
        return kernel.Built(kernels.variant(name), d)

    monkeypatch.setattr(kernel, "build", fake_build)
    # the placeholder has no symbol table: one global on the fake trace's line (the file's d_lockref line)
    monkeypatch.setattr(symbols, "kernel_symbols",
                        lambda vmlinux, pmem, cpus: [symbols.Symbol(0x743000 + 128 + 8, 4, "fake_global")])
    monkeypatch.setattr(symbols, "data_symbols", lambda vmlinux: [])
    monkeypatch.setattr(symbols, "cpu_areas", lambda vmlinux, image, pmem, cpus: ([], []))   # CPUs numbered as cores
    # and no functions: one where the stand-in gem5's profile has its kernel address
    functions = code_names.functions
    monkeypatch.setattr(code_names, "functions", lambda code: [(0xffffffff81000000, 0xffffffff81000100, "fake_kernel_function")]
                        if code.kernel else functions(code))
    return tmp_path


def test_a_workload_of_its_own_runs_in_the_guest_with_its_own_layout_map(fake_full_system):
    """rwsem in full system (issue 36: seed 002 with the kernel's futex): the payload carries it, it takes its
    policy and layout as in SE, and its layout map (physical addresses, from the guest's pagemap) is the run's."""
    runs = fake_full_system / "runs"
    spec = replace(fs_specs(["stock-6.12"], 2, 2, 2000, 20000, 5000, [1])[0], workload="rwsem", policy="spin",
                   layout="shared", extra=())
    assert spec.id.startswith("fs-rwsem-stock-6.12-spin-shared-2x2-")   # sleep and spin are two runs
    assert spec.workload_args()[:6] == ["--threads", "4", "--m5", "--policy", "spin", "--layout"]
    [o] = launch.launch([spec], runs, jobs=1, timeout=120)
    assert o.status == "done", o.error
    m = json.loads((runs / spec.id / "manifest.json").read_text())
    fields = {f["object"] + "." + f["name"]: f for f in m["layout"]}
    assert {"rwsem.count", "rwsem.owner", "rwsem.wait_seq"} <= set(fields)
    assert fields["rwsem.count"]["how"] == "guest-pagemap" and m["workload_binary"]["path"].endswith("guest/rwsem")
    assert fields["rwsem.count"]["paddr"] >= 0x40000000   # through the guest's page table (tests/fake_gem5.py)
    assert m["ingest"]["events"] > 0   # the trace's line is the count's, physically
    assert m["workload"]["invariants"] == "ok" and m["ingest"]["events"] > 0
    with pytest.raises(CohtbError, match="a full-system run's workload is one of stat_file, rwsem"):
        fs_runner.FSRunner().check(replace(spec, workload="lockref"))
    with pytest.raises(CohtbError, match="kernel_rwsem needs a kernel with rwsem-bench.patch"):
        fs_runner.FSRunner().check(replace(spec, workload="kernel_rwsem"))   # stock-6.12 has no benchmark rwsem


def test_a_guest_layout_map_goes_through_the_guests_page_table_and_a_missing_page_is_named():
    layout = {"cache_line": 64, "layout": "shared", "objects": [{"name": "rwsem", "address": 0x5010, "size": 64,
                                                                 "fields": [{"name": "count", "address": 0x5018, "size": 8}]}]}
    m = fs_runner.physical_layout({"layout_map": layout, "guest_pages": {str(0x5000): 0x9000}}, "w.json")
    assert m["objects"][0]["address"] == 0x9010 and m["objects"][0]["fields"][0]["address"] == 0x9018
    with pytest.raises(CohtbError, match="w.json: guest_pages has no page 0x5000"):
        fs_runner.physical_layout({"layout_map": layout, "guest_pages": {}}, "w.json")
    with pytest.raises(CohtbError, match="w.json: no 'layout_map' and 'guest_pages'"):
        fs_runner.physical_layout({"layout_map": layout}, "w.json")


def test_a_kernel_global_is_laid_out_from_its_symbol_and_its_structs_dwarf(monkeypatch):
    """kernel_rwsem's contended object is the kernel's cohtb_rwsem: its physical address from the vmlinux's
    symbols, its fields from struct rw_semaphore's DWARF; a vmlinux without the symbol is refused in one line."""
    monkeypatch.setattr(symbols, "data_symbols", lambda vmlinux: [symbols.Symbol(0x2a40, 64, "cohtb_rwsem")])
    monkeypatch.setattr(dwarf, "layouts", lambda vmlinux, structs: {"rw_semaphore": {"size": 40, "fields": [
        {"name": "count", "offset": 0, "size": 8}, {"name": "owner", "offset": 8, "size": 8}]}})
    m = fs_runner.global_layout(Path("vmlinux"), "cohtb_rwsem", "rw_semaphore", "shared")
    assert m["objects"] == [{"name": "cohtb_rwsem", "address": 0x2a40, "size": 64, "fields": [
        {"name": "count", "address": 0x2a40, "size": 8}, {"name": "owner", "address": 0x2a48, "size": 8}]}]
    with pytest.raises(CohtbError, match="no data symbols cohtb_other"):
        fs_runner.global_layout(Path("vmlinux"), "cohtb_other", "rw_semaphore", "shared")


def test_the_benchmark_threads_reported_objects_are_named_field_by_field_and_page_by_page(monkeypatch):
    """kernel_rwsem's threads report their task_struct (its fields from DWARF, cut at the size the kernel
    allocates: the FPU state at its end is sized at boot) and their stack pages; other log lines, and a run whose
    kernel reported nothing, name nothing."""
    monkeypatch.setattr(dwarf, "layouts", lambda vmlinux, structs: {"task_struct": {"size": 6528, "fields": [
        {"name": "__state", "offset": 24, "size": 4}, {"name": "thread", "offset": 64, "size": 6464},
        {"name": "past_the_end", "offset": 6400, "size": 8}]}})
    lines = ["[ 1.0] cohtb-object kernel_rwsem task 3 2130000 2944",
             "[ 1.0] cohtb-object kernel_rwsem stack 3 2219000 4096",
             "[ 1.0] cohtb-object cohtb-stat.1 dentry file 1234 192", "unrelated"]
    assert fs_runner.thread_symbols(lines, Path("vmlinux")) == [
        symbols.Symbol(0x2130018, 4, "thread 3's task_struct.__state"),
        symbols.Symbol(0x2130040, 2944 - 64, "thread 3's task_struct.thread"),
        symbols.Symbol(0x2219000, 4096, "thread 3's kernel stack")]
    assert fs_runner.thread_symbols(lines[2:], Path("vmlinux")) == []
    with pytest.raises(CohtbError, match=r"run x: threads \[0, 1, 2\] did not report"):
        fs_runner.thread_symbols(lines, Path("vmlinux"), threads=4, where="run x")


def test_a_lines_kernel_names_say_each_objects_fields_once():
    assert symbols_text(["runqueues (CPU 7)", "qnodes (CPU 7)"]) == "runqueues (CPU 7), qnodes (CPU 7)"
    assert symbols_text(list("abcde")) == "a, b, c and 2 more"
    fields = [f"thread 3's task_struct.f{k}" for k in range(10)]
    assert symbols_text([*fields, "thread 5's kernel stack"]) == \
        "thread 3's task_struct: f0, f1, f2, f3, f4, f5, f6, f7 and 2 more; thread 5's kernel stack"


def test_kernel_rwsem_needs_the_kernel_that_has_its_rwsem_and_switch(tmp_path):
    """Natively (no rspin kernel) kernel_rwsem stops at once, naming the switch it needs; exit 3."""
    initramfs.build_guest_programs()
    r = subprocess.run([str(initramfs.GUEST_BUILD / "kernel_rwsem"), "--window-us", "1000", "--interval-us", "500"],
                       capture_output=True, text=True)
    assert r.returncode == 3 and "rwsem_reader_spin" in r.stderr and "variant rspin" in r.stderr


def test_launch_fs_records_runs_like_se(fake_full_system, capsys):
    runs = fake_full_system / "runs"
    specs = fs_specs(["stock-6.12", "pre611"], 2, 2, 2000, 20000, 5000, [1])
    outcomes = launch.launch(specs, runs, jobs=2, timeout=120)
    assert [o.status for o in outcomes] == ["done", "done"], [o.error for o in outcomes]
    for s in specs:
        m = json.loads((runs / s.id / "manifest.json").read_text())
        assert m["spec"]["kernel"] == s.kernel and m["kernel"]["variant"] == s.kernel
        assert m["checkpoint"]["path"] and m["ingest"]["events"] > 0
        assert m["checkpoint"]["cpu_seconds"] > 0 and m["gem5"]["cpu_seconds"] > 0   # the costs table's measure
        assert m["atomic_setup"]["simulated_seconds"] == 0.001   # fake_gem5: checkpoint at 60 ms, switch at 61
        assert m["kernel_symbols"] == [{"line": (0x743000 + 128) // 64, "symbols": ["fake_global"]}]
        fields = {f["object"] + "." + f["name"]: f for f in m["layout"]}
        lockref = fields["file.d_lockref"]
        want = 0x743000 + kernels.variant(s.kernel).d_lockref_offset
        assert lockref["paddr"] == want and lockref["how"] == "kernel-report"
        assert {"tmpfs_root.d_seq", "file_inode.i_mode"} <= set(fields)
        assert (runs / s.id / "gem5" / fs_runner.CONSOLE).exists() and (runs / s.id / "events.cohtb").exists()
        # every full-system run keeps its profile, named by the kernel's and the benchmark's functions
        profile = load(runs / s.id).profile()
        assert m["files"]["profile"] == "profile.json" and (runs / s.id / "gem5" / "pc-profile.tsv").exists()
        assert {(f["object"], f["symbol"]) for f in profile["functions"]} == {
            ("[kernel.kallsyms]", "fake_kernel_function"), ("stat_file", "_start")}
        [hot] = profile["lines"]   # the fake trace's one line: its stores named by the slow retirements after them
        assert hot["line"] == (0x743000 + 128) // 64 and hot["stores"] > 0
        assert {c["symbol"] for c in hot["code"]} == {"fake_kernel_function"}
        assert cli.main(["profile", str(runs / s.id)]) == 0
        out = capsys.readouterr().out
        assert "[k] fake_kernel_function" in out and "fake_kernel_function+0x10" in out and "(file.d_" in out
    # one boot per kernel and machine, cached: a second launch of new runs boots nothing
    boots = sorted((fake_full_system / "cache" / "checkpoints").iterdir())
    assert len(boots) == 2 and all((b / "boot.json").exists() for b in boots)
    more = fs_specs(["stock-6.12"], 2, 2, 2000, 20000, 5000, [2])
    assert launch.launch(more, runs, jobs=1, timeout=120)[0].status == "done"
    assert sorted((fake_full_system / "cache" / "checkpoints").iterdir()) == boots


def test_a_kernel_that_reports_no_objects_fails_the_run_clearly(fake_full_system, monkeypatch):
    monkeypatch.setenv("FAKE_GEM5_NO_OBJECTS", "1")
    runs = fake_full_system / "runs"
    spec = fs_specs(["stock-6.12"], 2, 2, 2000, 20000, 5000, [1])[0]
    o = launch.launch([spec], runs, jobs=1, timeout=120)[0]
    assert o.status == "failed" and "did not report" in o.error and "cohtb-object" in o.error
    assert not (runs / spec.id).exists() and (runs / f"{spec.id}.failed.json").exists()


def test_a_window_without_an_operation_fails_the_run_in_one_line_and_the_launch_goes_on(fake_full_system, monkeypatch):
    """A window in which no operation completed has no throughput to compare: each such run fails with its record,
    not the launch with a traceback."""
    monkeypatch.setenv("FAKE_GEM5_NO_OPS", "1")
    runs = fake_full_system / "runs"
    specs = fs_specs(["stock-6.12"], 2, 2, 2000, 20000, 5000, [1, 2])
    outcomes = launch.launch(specs, runs, jobs=1, timeout=120)
    assert [o.status for o in outcomes] == ["failed", "failed"]
    assert all("no operation completed in the measured window" in o.error and "\n" not in o.error for o in outcomes)
    assert all((runs / f"{s.id}.failed.json").exists() and not (runs / s.id).exists() for s in specs)


def test_kernel_globals_are_named_on_every_line_they_cover():
    syms = [symbols.Symbol(0x1000, 4, "a_lock"), symbols.Symbol(0x1038, 16, "straddles"),
            symbols.Symbol(0x2000, 64 * 3, "table"), symbols.Symbol(0x3000, 0, "empty_marker")]
    lines = {0x1000 // 64, 0x1040 // 64, 0x2040 // 64, 0x2100 // 64, 0x3000 // 64, 0x5000 // 64}
    assert line_names.name_lines(lines, syms) == [
        {"line": 0x40, "symbols": ["a_lock", "straddles"]}, {"line": 0x41, "symbols": ["straddles"]},
        {"line": 0x81, "symbols": ["table"]}, {"line": 0xc0, "symbols": ["empty_marker"]}]


NM_PERCPU = """0000000000000000 D __per_cpu_start
0000000000000a00 0000000000000040 d qnodes
0000000000000b08 0000000000000008 D this_cpu_counter
0000000000000c00 D __per_cpu_end
ffffffff81400000 0000000000000040 D some_global
"""


def test_per_cpu_variables_are_named_per_cpu_where_the_boot_put_each_cpus_area(tmp_path):
    """Each CPU's copy of a per-CPU variable (the qspinlock's MCS nodes, say) lies at its offset in that CPU's
    area; the areas' addresses come from __per_cpu_offset in the checkpoint's memory (a gzip of memory from 0)."""
    template = symbols.percpu_template(NM_PERCPU)
    assert [(s.paddr, s.name) for s in template] == [(0xa00, "qnodes"), (0xb08, "this_cpu_counter")]
    table, areas = 0x1000, [0x3e800000, 0x3e840000]
    memory = bytearray(0x2000)
    for cpu, area in enumerate(areas):
        memory[table + 8 * cpu:table + 8 * cpu + 8] = (symbols.DIRECT_MAP + area).to_bytes(8, "little")
    pmem = tmp_path / "store0.pmem"
    with gzip.open(pmem, "wb") as f:
        f.write(bytes(memory))
    offsets = symbols.percpu_offsets(pmem, table, 2)
    placed = symbols.percpu_symbols(template, offsets, "ckpt")
    assert line_names.name_lines({(0x3e840000 + 0xa00) // 64, (0x3e800000 + 0xb08) // 64}, placed) == [
        {"line": (0x3e800000 + 0xb08) // 64, "symbols": ["this_cpu_counter (CPU 0)"]},
        {"line": (0x3e840000 + 0xa00) // 64, "symbols": ["qnodes (CPU 1)"]}]
    with pytest.raises(CohtbError, match="ends before __per_cpu_offset\\[2\\]"):
        symbols.percpu_offsets(pmem, table + 0x1000 - 16, 4)
    with pytest.raises(CohtbError, match="__per_cpu_offset\\[1\\] = 0xffffffff81780000 is not in the direct map"):
        symbols.percpu_symbols(template, [offsets[0], 0xffffffff81780000], "ckpt")
    with pytest.raises(CohtbError, match="no per-CPU section linked from 0"):
        symbols.percpu_template("ffffffff81400000 0000000000000040 D some_global\n")
    with pytest.raises(CohtbError, match="no per-CPU section linked from 0"):   # a kernel whose areas are not
        symbols.percpu_template(NM_PERCPU.replace("0000000000000000 D __per_cpu_start",
                                                  "ffffffff82000000 D __per_cpu_start"))


def test_trace_core_k_must_be_the_guests_cpu_k(tmp_path):
    """Each CPU's x86_cpu_to_apicid, read where its per-CPU area is, must be its own number (gem5 gives core k APIC
    id k); a guest that numbered its CPUs otherwise, or a kernel without the variable, is refused in one line."""
    template = [symbols.Symbol(0x16c, 4, "x86_cpu_to_apicid")]
    areas = [0x10000, 0x20000, 0x30000]
    memory = bytearray(0x31000)
    for cpu, area in enumerate(areas):
        memory[area + 0x16c:area + 0x170] = cpu.to_bytes(4, "little")
    pmem = tmp_path / "store0.pmem"
    with gzip.open(pmem, "wb") as f:
        f.write(bytes(memory))
    offsets = [symbols.DIRECT_MAP + a for a in areas]
    symbols.check_cpu_numbers(template, offsets, pmem)
    with pytest.raises(CohtbError, match=r"otherwise than gem5 its cores \(CPU, APIC id\): \[\(1, 2\), \(2, 1\)\]"):
        symbols.check_cpu_numbers(template, [offsets[0], offsets[2], offsets[1]], pmem)
    with pytest.raises(CohtbError, match="no per-CPU x86_cpu_to_apicid"):
        symbols.check_cpu_numbers([], offsets, pmem)


def test_the_futex_hash_buckets_are_named_where_the_boot_put_the_table(tmp_path, monkeypatch):
    """__futex_data holds the table's direct-map address and its size (read from the checkpoint's memory); each
    bucket, as long as the DWARF's struct, is named by its index; a kernel without the symbol names none."""
    monkeypatch.setattr(dwarf, "layouts", lambda vmlinux, structs: {"futex_hash_bucket": {"size": 64, "fields": []}})
    memory = bytearray(0x2000)
    memory[0x1000:0x1010] = (symbols.DIRECT_MAP + 0x920000).to_bytes(8, "little") + (4).to_bytes(8, "little")
    pmem = tmp_path / "store0.pmem"
    with gzip.open(pmem, "wb") as f:
        f.write(bytes(memory))
    image = [symbols.Symbol(0x1000, 16, "__futex_data")]
    buckets = symbols.futex_buckets(Path("vmlinux"), image, pmem)
    assert [(b.paddr, b.size, b.name) for b in buckets] == [
        (0x920000 + 64 * k, 64, f"futex hash bucket {k}") for k in range(4)]
    assert symbols.futex_buckets(Path("vmlinux"), [], pmem) == []
    memory[0x1000:0x1008] = (0xffffc90000000000).to_bytes(8, "little")   # vmalloc'ed: left unnamed
    with gzip.open(pmem, "wb") as f:
        f.write(bytes(memory))
    assert symbols.futex_buckets(Path("vmlinux"), image, pmem) == []


def test_a_run_that_never_left_the_atomic_cpus_fails_clearly(fake_full_system, monkeypatch):
    monkeypatch.setenv("FAKE_GEM5_NO_SWITCH", "1")
    runs = fake_full_system / "runs"
    spec = fs_specs(["stock-6.12"], 2, 2, 2000, 20000, 5000, [1])[0]
    o = launch.launch([spec], runs, jobs=1, timeout=120)[0]
    assert o.status == "failed" and "switchcpu" in o.error
    assert not (runs / spec.id).exists()


@pytest.mark.kernel
@NO_SOURCE
@pytest.mark.parametrize("name", ["stock-6.12", "pre611"])
def test_a_built_kernel_has_the_promised_layout_and_the_required_options(name):
    """Builds the variant (or finds it in the cache: minutes the first time) and reads its own DWARF."""
    ramfs = initramfs.build()
    built = kernel.build(name, ramfs.list_path, ramfs.digest)
    dwarf.check_promise(built.variant, dwarf.layouts(built.vmlinux))
    # its globals are placed in physical memory: tasklist_lock is in the image, above the 16 MiB load address
    lock = next(s for s in symbols.data_symbols(built.vmlinux) if s.name == "tasklist_lock")
    assert 0x1000000 <= lock.paddr < 0x40000000 and lock.size == 8
    config = kernel.read_config(built.dir / "config")
    assert all(config.get(k) == v for k, v in kernel.REQUIRED.items())
    assert built.inputs["patches"] == list(built.variant.all_patches())
    assert b"cohtb-object" in built.vmlinux.read_bytes()   # the reporting patch is in


@pytest.mark.kernel
@NO_SOURCE
def test_the_rspin_kernel_has_its_benchmark_rwsem_alone_on_a_line_and_its_switch():
    """Variant rspin: cohtb_rwsem is a whole line of its own (kernel_rwsem's layout map reads it from the symbol
    and struct rw_semaphore's DWARF) and the reader-spinning switch is a kernel parameter."""
    ramfs = initramfs.build()
    built = kernel.build("rspin", ramfs.list_path, ramfs.digest)
    layout = fs_runner.global_layout(built.vmlinux, "cohtb_rwsem", "rw_semaphore", "shared")
    [obj] = layout["objects"]
    assert obj["address"] % 64 == 0 and obj["size"] == 64
    assert {"count", "owner"} <= {f["name"] for f in obj["fields"]}
    assert b"rwsem_reader_spin" in built.vmlinux.read_bytes()


def test_a_checkpoint_whose_cpus_are_not_numbered_as_gem5s_cores_starts_no_run(fake_full_system, monkeypatch):
    """The CPU numbering is checked once the boot is there, before any run simulates from it."""
    def refuse(vmlinux, image, pmem, cpus):
        raise CohtbError(f"{pmem}: the guest numbered its CPUs otherwise than gem5 its cores")
    monkeypatch.setattr(symbols, "cpu_areas", refuse)
    [out] = launch.launch(fs_specs(["stock-6.12"], 2, 2, 2000, 20000, 5000, [1]), fake_full_system / "runs", jobs=1,
                          timeout=120)
    assert out.status != "done" and "numbered its CPUs otherwise" in out.error
    assert not list((fake_full_system / "runs").glob("fs-*/manifest.json"))


def test_two_launches_needing_one_checkpoint_boot_it_once(fake_full_system, capsys):
    runs = fake_full_system / "runs"
    results: list = []
    both = [threading.Thread(target=lambda seed=seed: results.extend(launch.launch(
                fs_specs(["stock-6.12"], 2, 2, 2000, 20000, 5000, [seed]), runs, jobs=1, timeout=120)))
            for seed in (1, 2)]
    for t in both:
        t.start()
    for t in both:
        t.join()
    assert [o.status for o in results] == ["done", "done"], [o.error for o in results]
    assert capsys.readouterr().out.count("booting stock-6.12 on 2x2") == 1   # the other launch waited for it


@pytest.mark.parametrize("name, text, said", [("layout.json", '{"dentry": {"size": 192, "fields": [{"name": "d_flags"}]}}',
                                               "field 'dentry.fields.0.offset'"),
                                              ("layout.json", "{", "not valid JSON"),
                                              ("inputs.json", '{"variant": 1, "patches": []}', "field 'variant'")])
def test_a_damaged_kernel_cache_file_is_one_line_naming_it(tmp_path, name, text, said):
    (tmp_path / "layout.json").write_text(json.dumps({"dentry": {"size": 192, "fields": []}}))
    (tmp_path / "inputs.json").write_text(json.dumps({"variant": "stock-6.12", "patches": []}))
    (tmp_path / name).write_text(text)
    built = kernel.Built(kernels.variant("stock-6.12"), tmp_path)
    with pytest.raises(CohtbError, match=said) as e:
        built.layout, built.inputs
    assert str(tmp_path / name) in str(e.value) and "\n" not in str(e.value)
