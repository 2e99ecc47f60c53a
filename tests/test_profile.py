"""Profiles: gem5's raw per-address counts (the pc-profile patch's file) named by a real binary's functions and
summed per function; shares as perf report shows them; `cohtb profile` and every damaged input a clear line."""

import json
from dataclasses import replace
import shutil
import subprocess
from pathlib import Path

import pytest

from cohtb import cli
from cohtb.analysis.advice import false_sharing, fields_on_hot_lines
from cohtb.contract import Kind
from cohtb.trace import events as ev
from cohtb.analysis.profile import ASLEEP, UNRETIRED, of, share_of, shares
from cohtb.errors import CohtbError
from cohtb.experiments import profile_band
from cohtb.experiments.declarations import by_id
from cohtb.experiments.reproduce import PointResult
from cohtb.experiments.seeds import HISTORY
from cohtb.report.profile import bytes_text
from cohtb.run import code_names, line_code, pc_profile
from cohtb.run.bundle import bundle
from cohtb.run.runs import discover, load
from run_fixtures import make_run

PROGRAM = """
int hot(int x) { for (int i = 0; i < 100; i++) x = x * 3 + i; return x; }
int cold(int x) { return x + 1; }
int main(int argc, char **argv) { return hot(argc) + cold(argc); }
"""
KERNEL_PC = 0xffffffff81000010


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """A real binary and where its two functions start (nm)."""
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed (make setup installs it)")
    d = tmp_path_factory.mktemp("program")
    (d / "p.c").write_text(PROGRAM)
    subprocess.run(["gcc", "-O1", "-fno-inline", "-o", str(d / "p"), str(d / "p.c")], check=True)
    code = code_names.Code("p", d / "p", kernel=False)
    starts = {name: start for start, _, name in code_names.functions(code)}
    return code, starts


def raw_text(cells, window=(1000, 2000), cores=2, asleep=(0, 0), unretired=(0, 0)) -> str:
    lines = ["# cohtb pc-profile 1", f"# window {window[0]} {window[1]}", "# core\tpc\tinstructions\tticks"]
    lines += [f"{c}\t{pc:#x}\t{i}\t{t}" for c, pc, i, t in cells]
    for c in range(cores):
        lines += [f"{c}\tasleep\t0\t{asleep[c]}", f"{c}\tunretired\t0\t{unretired[c]}"]
    return "\n".join(lines) + "\n"


def test_addresses_are_named_by_the_binarys_functions_and_summed_per_function(tmp_path, program):
    code, starts = program
    hot, cold = starts["hot"], starts["cold"]
    raw = tmp_path / "pc-profile.tsv"
    # core 0: 600 ticks in hot (two addresses), 300 in cold, 100 unretired; core 1: 900 in hot, 100 asleep
    raw.write_text(raw_text([(0, hot, 10, 400), (0, hot + 4, 5, 200), (0, cold, 3, 300), (1, hot, 30, 900)],
                            asleep=(0, 100), unretired=(100, 0)))
    doc = pc_profile.named(pc_profile.read_raw(raw), code_names.Namer([code]))
    by_name = {f["symbol"]: f for f in doc["functions"]}
    assert set(by_name) == {"hot", "cold"} and doc["functions"][0]["symbol"] == "hot"   # most time first
    assert by_name["hot"]["ticks"] == [600, 900] and by_name["hot"]["instructions"] == [15, 30]
    assert by_name["cold"]["ticks"] == [300, 0] and by_name["hot"]["object"] == "p"
    assert [a["offset"] for a in doc["addresses"] if a["symbol"] == "hot"] == [0, 4]
    rows = shares(doc)
    assert sum(r.share for r in rows) == pytest.approx(1.0)   # every tick of every core, once
    assert share_of(rows, "hot") == pytest.approx(1500 / 2000)
    [h] = [r for r in rows if r.symbol == "hot"]
    assert (h.core_min, h.core_max) == (pytest.approx(0.6), pytest.approx(0.9))
    assert h.ns_per_instruction == pytest.approx(1500 / 1e3 / 45)
    assert [r.symbol for r in rows[-2:]] == [ASLEEP, UNRETIRED]


def test_an_address_no_function_covers_is_unknown_in_its_half(tmp_path, program):
    code, _ = program
    raw = tmp_path / "pc-profile.tsv"
    raw.write_text(raw_text([(0, KERNEL_PC, 1, 1000), (0, 0x10, 1, 0)], cores=1, asleep=(0,), unretired=(0,)))
    doc = pc_profile.named(pc_profile.read_raw(raw), code_names.Namer([code]))
    assert {(f["object"], f["symbol"], f["kernel"]) for f in doc["functions"]} == {
        ("[unknown]", "[unknown]", True), ("p", "[unknown]", False)}


@pytest.mark.parametrize("damage, said", [
    (lambda t: t.replace("# cohtb pc-profile 1", "# something else"), "line 1: not a cohtb pc-profile 1 file"),
    (lambda t: t.replace("# window 1000 2000", "# window 2000 1000"), "line 2: want '# window BEGIN END'"),
    (lambda t: t.replace("0\t0x", "0\tzz", 1), "line 4: invalid literal"),
    (lambda t: t.replace("\t400\n", "\t-400\n"), "line 4: a negative count"),
    (lambda t: t.replace("\t400\n", "\t400\t9\n"), "line 4: want 4 tab-separated fields"),
    (lambda t: t.replace("1\tunretired\t0\t0\n", ""), "want an asleep and an unretired line for each core"),
    (lambda t: t.replace("\t400\n", "\t401\n"), "core 0's ticks sum to 1001, not to the window's 1000"),
])
def test_a_damaged_raw_profile_is_refused_naming_the_file_and_line(tmp_path, damage, said):
    raw = tmp_path / "pc-profile.tsv"
    raw.write_text(damage(raw_text([(0, 0x1000, 1, 400), (0, 0x1004, 1, 600), (1, 0x1000, 1, 1000)])))
    with pytest.raises(CohtbError, match=f"{raw}: .*{said}" if "line" in said or "want" in said else said):
        pc_profile.read_raw(raw)


def profiled_run(tmp_path, program, layout="shared", hot_ticks=700):
    """A hand-built run with a profile kept as the recorder keeps one: core 0 spends hot_ticks of its 1000 in hot."""
    code, starts = program
    run = make_run(tmp_path / "runs", layout, 1000, 1e-6, 3)
    raw = tmp_path / "pc-profile.tsv"
    raw.write_text(raw_text([(0, starts["hot"], 10, hot_ticks), (0, starts["cold"], 2, 1000 - hot_ticks),
                             (1, starts["hot"], 20, 1000)]))
    m = json.loads((run / "manifest.json").read_text())
    pc_profile.keep(run, pc_profile.RawFiles(raw, None), [code], None)
    m["files"]["profile"] = pc_profile.FILE
    (run / "manifest.json").write_text(json.dumps(m))
    return run


def test_cohtb_profile_prints_perf_reports_shape_and_says_which_runs_have_none(tmp_path, program, capsys):
    run = profiled_run(tmp_path, program)
    other = make_run(tmp_path / "more", "split", 1000, 1e-6, 3)
    assert cli.main(["profile", str(run), str(other), "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "[.] hot" in out and "85.00%" in out and "70.0-100.0%" in out   # 1700 of 2000 ticks; 70% and 100% of a core's
    assert "1 more" in out and "15.00%" in out   # cold, summed into the rest
    assert f"{load(other).id}: no profile" in out
    assert cli.main(["profile", str(other)]) == 2
    assert "no profile in" in capsys.readouterr().err


def test_cohtb_profile_says_how_often_each_hot_instruction_retired_per_operation(tmp_path, program, capsys):
    run = profiled_run(tmp_path, program)   # 1000 operations; hot's first instruction: 10 + 20 retirements, 1700 ticks
    assert cli.main(["profile", str(run)]) == 0
    out = capsys.readouterr().out
    [row] = [line.split() for line in out.splitlines() if "hot+0x0" in line]
    assert row[2:] == ["85.00%", "30", "0.03", "0.1"]   # share, retired, per operation, ns per retirement (1700/30 ticks)


def test_bundling_keeps_the_profile(tmp_path, program):
    run = load(profiled_run(tmp_path, program))
    bundle([run], tmp_path / "bundle")
    [again] = discover([tmp_path / "bundle"])
    assert of(again) == of(run)


@pytest.mark.parametrize("field, value", [("cohtb_profile", 2), ("cores", 0), ("asleep", [0]), ("unretired", "x"),
                                          ("window_ticks", [5, 1]), ("functions", [{"symbol": "f"}]),
                                          ("addresses", [{"address": "0x10", "instructions": -1}])])
def test_a_damaged_kept_profile_is_one_line_naming_its_field(tmp_path, program, capsys, field, value):
    run = profiled_run(tmp_path, program)
    doc = json.loads((run / "profile.json").read_text())
    doc[field] = value
    (run / "profile.json").write_text(json.dumps(doc))
    assert cli.main(["profile", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"profile.json: field '{field}" in err[0]


def test_a_declared_profile_band_can_give_both_answers_before_any_run():
    """004-fsv6 holds its base arm to patch 2/2's perf top: the published shares reach the band, a function half a
    point inside does, and half a point past either edge does not; every declared function is published."""
    d = by_id("004-fsv6")
    base = profile_band.published_for(d, "20-way stat, tmpfs", "base")
    assert all(base.share(s) is not None for s in d.profile_functions)
    answers = profile_band.outcomes(d, base)
    assert answers[0] == ("the published shares", True)
    assert {passes for _, passes in answers} == {True, False}
    assert ("__d_lookup_rcu at 15.10% (-10.5 points)", False) in answers
    assert ("lockref_put_return at 47.59% (+9.5 points)", True) in answers


def test_every_declared_profile_function_is_in_its_seeds_published_profile():
    for versions in HISTORY.values():
        for e in versions:
            d = e.declaration
            if not d.profile_functions:
                continue
            profiles = [profile_band.published_for(d, pub.configuration, "base") for p in e.points
                        for pub in p.published]
            assert any(profiles), d.id   # a band with no published profile at any point could never be judged
            assert all(base.share(s) is not None for base in filter(None, profiles) for s in d.profile_functions), d.id


def test_compare_sets_two_runs_profiles_side_by_side(tmp_path, program, capsys):
    base, new = profiled_run(tmp_path, program), profiled_run(tmp_path, program, "split", hot_ticks=900)
    assert cli.main(["compare", str(base), str(new)]) == 0
    out = capsys.readouterr().out
    assert "Profiles:" in out and "[.] hot" in out
    assert "85.00%" in out and "95.00%" in out and "+10.00" in out and "-10.00" in out   # cold: 15% -> 5%


def test_each_miss_on_a_hot_line_is_named_by_the_instruction_that_waited_for_it(tmp_path, program):
    """A core's load or store event goes to its next slow retirement within JOIN_TICKS; one with none is counted
    unmatched. Line 7 gets 3 misses from hot (2 loads, 1 store) and 1 from cold; line 9 one unmatched load."""
    code, starts = program
    hot, cold = starts["hot"], starts["cold"]
    recs = ev.make_records([(100, 7, 0, 0, Kind.READ), (200, 7, 1, 0, Kind.WRITE), (300, 7, 0, 0, Kind.READ),
                            (400, 7, 1, 0, Kind.READ), (450, 7, 1, 0, Kind.FWD_GETS), (500, 9, 0, 0, Kind.READ)])
    slow = tmp_path / "pc-slow.tsv"
    # hot's loads read bytes 8 and 16 of line 7, its store none known; cold's load another line's
    slow.write_text("# cohtb pc-slow 1\n# window 0 1000 slow 15000\n# tick\tcore\tpc\tticks\tdata\n"
                    f"110\t0\t{hot:#x}\t20000\t{7 * 64 + 8:#x}\n250\t1\t{hot + 4:#x}\t20000\t0\n"
                    f"300\t0\t{hot:#x}\t20000\t{7 * 64 + 16:#x}\n"
                    f"420\t1\t{cold:#x}\t20000\t{9 * 64:#x}\n")   # core 0's 500 has no retirement after it
    slow_ticks, retired = line_code.read_slow(slow)
    assert slow_ticks == 15000 and len(retired) == 4
    lines = line_code.code_per_line(recs, retired, code_names.Namer([code]), 64)
    assert [(x["line"], x["loads"], x["stores"], x["unmatched"]) for x in lines] == [(7, 3, 1, 0), (9, 1, 0, 1)]
    assert [(c["symbol"], c["offset"], c["loads"], c["stores"], c["data_offsets"]) for c in lines[0]["code"]] == [
        ("hot", 0, 2, 0, {"8": 1, "16": 1}), ("hot", 4, 0, 1, {}), ("cold", 0, 1, 0, {})]
    assert lines[0]["bytes"] == {"8": {"loads": 1, "stores": 0, "load_cores": 1, "store_cores": 0},
                                 "16": {"loads": 1, "stores": 0, "load_cores": 1, "store_cores": 0}}


@pytest.mark.parametrize("damage, said", [(lambda t: t.replace("pc-slow 1", "pc-slow 2"), "line 1: not a cohtb pc-slow 1"),
                                          (lambda t: t.replace(" slow 1", ""), "line 2: want '# window BEGIN END slow"),
                                          (lambda t: t.replace("\t20000", ""), "line 4: want 5 tab-separated fields")])
def test_a_damaged_slow_log_is_refused_naming_the_file_and_line(tmp_path, damage, said):
    slow = tmp_path / "pc-slow.tsv"
    slow.write_text(damage("# cohtb pc-slow 1\n# window 0 1 slow 1\n# tick\tcore\tpc\tticks\tdata\n"
                           "1\t0\t0x10\t20000\t0\n"))
    with pytest.raises(CohtbError, match=f"{slow}: {said}"):
        line_code.read_slow(slow)


def test_the_bytes_an_instruction_accessed_are_named_by_the_layouts_fields(tmp_path):
    run = load(make_run(tmp_path, "shared", 1000, 1e-6, 3))   # d_name at +0x20, d_lockref at +0x30 of line 0x1000
    assert bytes_text(run, 0x1000, 64, {"32": 1, "48": 3, "0": 2}) == "+0x30 d_lockref x3, +0x0 x2, +0x20 d_name x1"


def test_advise_classifies_the_hot_lines_fields_and_finds_the_false_sharing(tmp_path, program, capsys):
    """On the shared layout's one hot line: d_lockref stored by 2 cores (contended), d_name only loaded by 3 (read by
    many): a false-sharing pair, its read misses per operation counted."""
    run = profiled_run(tmp_path, program)
    doc = json.loads((run / "profile.json").read_text())
    line = 0x1000   # run_fixtures: d_name at +0x20 (16 bytes), d_lockref at +0x30 (8 bytes)
    doc.update(slow_ticks=15000, join_ticks=100000, lines=[{
        "line": line, "loads": 30, "stores": 20, "unmatched": 0, "code": [],
        "bytes": {"32": {"loads": 30, "stores": 0, "load_cores": 3, "store_cores": 0},
                  "48": {"loads": 0, "stores": 20, "load_cores": 0, "store_cores": 2}}}])
    (run / "profile.json").write_text(json.dumps(doc))
    fields = {f.field: f for f in fields_on_hot_lines(load(run))}
    assert fields["d_lockref"].kind == "contended" and fields["d_name"].kind == "read by many"
    assert (fields["d_name"].offset, fields["d_name"].size, fields["d_name"].loads) == (32, 16, 30)
    [pair] = false_sharing(list(fields.values()))
    assert (pair.written.field, pair.read.field) == ("d_lockref", "d_name")
    assert cli.main(["advise", str(run)]) == 0
    out = capsys.readouterr().out
    assert "dentry.d_lockref (contended) takes the line from dentry.d_name (read by many): 0.030 read misses/op" in out


def test_advise_says_in_one_line_what_a_run_lacks(tmp_path, program, capsys):
    bare = make_run(tmp_path / "bare", "shared", 1000, 1e-6, 3)
    assert cli.main(["advise", str(bare)]) == 2
    assert "no profile with its hot lines' bytes" in capsys.readouterr().err
    run = profiled_run(tmp_path, program)
    doc = json.loads((run / "profile.json").read_text())
    doc["lines"] = [{"line": 0x5555, "loads": 1, "stores": 0, "unmatched": 0, "code": [], "bytes": {}}]
    (run / "profile.json").write_text(json.dumps(doc))
    assert cli.main(["advise", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "none of the layout's fields is on the profile's hot lines" in err[0]
    m = json.loads((run / "manifest.json").read_text())
    m["layout"] = []
    (run / "manifest.json").write_text(json.dumps(m))
    assert cli.main(["advise", str(run)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no layout map with physical addresses" in err[0]


class _Kept:
    """A kept run as a profile band sees it: its profile.json."""

    def __init__(self, shares: dict[str, float]):
        ticks = {s: round(1000 * v) for s, v in shares.items()}
        self.run = self
        self.doc = {"cohtb_profile": 1, "window_ticks": [0, 1000], "cores": 1, "asleep": [0],
                    "unretired": [1000 - sum(ticks.values())],
                    "functions": [{"object": "[kernel.kallsyms]", "symbol": s, "kernel": True, "instructions": [1],
                                   "ticks": [t]} for s, t in ticks.items()]}

    def profile(self):
        return self.doc


def test_a_profile_band_judges_the_base_arms_mean_once_every_repetition_has_a_profile():
    e = HISTORY["004-fs"][-1]
    point, d = e.points[0], e.declaration
    as_published = {"lockref_put_return": 0.3809, "lockref_get_not_dead": 0.2608, "__d_lookup_rcu": 0.2560}
    no_lookup = {**as_published, "__d_lookup_rcu": 0.0, "lockref_put_return": 0.60}

    def verdict(base: list[dict]) -> str:
        p = PointResult(point, [_Kept(s) for s in base], [], d.repetitions)
        [base_check] = [c for c in profile_band.checks(d, p) if c.arm == "base"]
        return base_check.verdict

    assert verdict([as_published] * 5) == profile_band.REACHES
    assert verdict([as_published] * 3) == "no verdict: 3 of 5 runs have a profile"
    assert verdict([as_published] * 3 + [no_lookup] * 2) == profile_band.OUTSIDE   # __d_lookup_rcu's mean 15.4%
    assert verdict([as_published] * 4 + [no_lookup]) == profile_band.REACHES      # its mean 20.5%: inside


def test_a_profile_band_sums_the_guest_functions_declared_to_do_a_published_functions_work():
    """6.12's qspinlock waits in queued_spin_lock_slowpath, which 3.10's ticket lock did inside _raw_spin_lock: the
    declared counterparts' shares count as the published function's, and without them the band would miss."""
    e = HISTORY["000-fs-o3"][-1]
    point, d = e.points[0], e.declaration
    waiting = {"_raw_spin_lock": 0.08, "queued_spin_lock_slowpath": 0.70}

    def check(declaration) -> profile_band.ProfileCheck:
        p = PointResult(point, [_Kept(waiting)] * 5, [], d.repetitions)
        return next(c for c in profile_band.checks(declaration, p)
                    if c.arm == "base" and c.published.configuration == "8 nodes, users 1100-2000")

    assert check(d).mean("_raw_spin_lock") == pytest.approx(0.78)
    assert check(d).verdict == profile_band.REACHES
    alone = replace(d, profile_counterparts=())
    assert check(alone).mean("_raw_spin_lock") == pytest.approx(0.08)
    assert check(alone).verdict == profile_band.OUTSIDE


C2C = Path(__file__).parent / "fixtures" / "perf-c2c-report.txt"
PAHOLE_PRE611 = Path(__file__).parent / "fixtures" / "kernel" / "pahole-pre611.txt"


def test_advise_reads_a_real_machines_c2c_report_by_the_structs_layout(capsys):
    """The hand-made report's first line is a pre611 dentry's second line (the dentry at ...c600): d_lockref's
    bytes are stored by 32 CPUs, d_iname's tail and d_time only loaded: two false-sharing pairs, d_iname's
    HITMs exact from perf's shares (15.64% of 7,052 local + 15.25% of 2,701 remote)."""
    assert cli.main(["advise", "--c2c", str(C2C), "--struct", "dentry", "--at", "0xffff888104b2c600",
                     "--pahole", str(PAHOLE_PRE611)]) == 0
    out = capsys.readouterr().out
    assert "dentry.d_lockref (contended) takes the line from dentry.d_iname (read by many): 1,515 read misses" in out
    assert "dentry.d_lockref (contended) takes the line from dentry.d_time (read by many)" in out


@pytest.mark.parametrize("argv, said", [
    (["--c2c", str(C2C)], "--c2c needs --struct"),
    (["--c2c", str(C2C), "--struct", "dentry", "--at", "zz", "--pahole", str(PAHOLE_PRE611)], "--at zz: want"),
    (["--c2c", str(C2C), "--struct", "dentry", "--at", "0x1000", "--pahole", str(PAHOLE_PRE611)],
     "no line of the report holds the dentry at 0x1000"),
    (["--c2c", str(C2C), "--struct", "nosuch", "--at", "0x1000", "--pahole", str(PAHOLE_PRE611)], "no struct nosuch"),
    ([], "advise needs runs, or --c2c REPORT"),
])
def test_advise_on_a_c2c_report_says_in_one_line_what_is_missing(capsys, argv, said):
    assert cli.main(["advise", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0], err


def _advisable(tmp_path, program):
    """The advise fixture's run: dentry.d_name read by 3 cores and d_lockref stored by 2, on one line."""
    run = profiled_run(tmp_path, program)
    doc = json.loads((run / "profile.json").read_text())
    doc.update(slow_ticks=15000, join_ticks=100000, lines=[{
        "line": 0x1000, "loads": 30, "stores": 20, "unmatched": 0, "code": [],
        "bytes": {"32": {"loads": 30, "stores": 0, "load_cores": 3, "store_cores": 0},
                  "48": {"loads": 0, "stores": 20, "load_cores": 0, "store_cores": 2}}}])
    (run / "profile.json").write_text(json.dumps(doc))
    return run


def test_advise_proposes_a_layout_within_the_bound_and_writes_it_as_a_layout_map(tmp_path, program, capsys):
    """The fixture's object is its two fields' 24 bytes on one line: no layout of 24 bytes parts them; with room for
    128, d_lockref goes to the object's next line, padded, and the proposal is written as a layout map."""
    run = _advisable(tmp_path, program)
    assert cli.main(["advise", str(run)]) == 0
    assert "dentry: no layout of at most 24 bytes keeps its written fields (d_lockref) off" in capsys.readouterr().out
    out = tmp_path / "proposed.json"
    assert cli.main(["advise", str(run), "--max-size", "128", "--patch", str(out)]) == 0
    text = capsys.readouterr().out
    # the object starts 32 bytes into its line: its line 1 starts at its offset 32
    assert "d_lockref  /*    32     8 */  writer *" in text and "XXX 16 bytes hole" in text
    assert "0.030 read misses per operation on line(s) 0x40000 go" in text
    doc = json.loads(out.read_text())
    [obj] = doc["objects"]
    assert [(f["name"], f["address"] - obj["address"]) for f in obj["fields"]] == [("d_name", 0), ("d_lockref", 32)]
    assert doc["cache_line"] == 64 and obj["size"] == 40


@pytest.mark.parametrize("argv, said", [
    (["--max-size", "16"], "dentry: no layout of at most 16 bytes keeps its written fields (d_lockref)"),
    (["--together", "d_name,nosuch"], "--together d_name,nosuch: no object on the hot lines has all these fields"),
    (["--together", "d_name,d_lockref"], "the group holds a written field and a field only read"),
    (["--together", "d_name"], "--together wants two or more field names"),
    (["--max-size", "0"], "--max-size 0: want a positive number of bytes"),
    (["--check-build"], "--check-build checks the patch --patch writes"),
    (["--max-size", "128", "--prove", "004-fsv6"], "--prove 004-fsv6: it has no arm of the run's kernel (user space"),
])
def test_advise_says_in_one_line_why_its_constraints_allow_no_layout(tmp_path, program, capsys, argv, said):
    run = _advisable(tmp_path, program)
    assert cli.main(["advise", str(run), *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and said in err[0]


DENTRY_HEADER = """\
struct dentry {
	unsigned char d_flags[32];	/* read together */
	struct qstr d_name;
	struct lockref d_lockref;	/* lock and refcount */
	const void *d_op;
	unsigned char d_tail[64];
};
"""


def test_advise_writes_a_full_system_runs_proposal_as_a_patch_of_the_structs_header(tmp_path, program, capsys,
                                                                                   monkeypatch):
    """A full-system run's object `file` is a struct dentry: the patch moves d_lockref in the variant's header
    (here a small one of the fixture's fields) behind the cold fields that make room, and `patch` applies it."""
    run = _advisable(tmp_path, program)
    m = json.loads((run / "manifest.json").read_text())
    m["kernel"] = {"variant": "pre611"}
    name = next(r for r in m["layout"] if r["name"] == "d_name")
    for rec in m["layout"]:
        rec["object"] = "file"
    m["layout"] += [{"object": "file", "name": n, "vaddr": name["vaddr"] + off, "size": size,
                     "paddr": name["paddr"] + off, "how": "identity", "line_size": 64}
                    for n, off, size in (("d_flags", -32, 32), ("d_op", 24, 8), ("d_tail", 32, 64))]
    (run / "manifest.json").write_text(json.dumps(m))
    monkeypatch.setattr("cohtb.fs.struct_patch.variant_file", lambda variant, path: DENTRY_HEADER)
    patch = tmp_path / "p.patch"
    assert cli.main(["advise", str(run), "--patch", str(patch)]) == 0
    text = patch.read_text()
    assert "cohtb advise: struct dentry proposed from run" in text and "(on kernel variant pre611)" in text
    assert "  d_lockref     48 ->   120  writer: moved off the read fields' lines" in text
    assert "Checked: not compiled" in text
    if shutil.which("patch") is None:
        pytest.skip("no patch program")
    (tmp_path / "tree" / "include" / "linux").mkdir(parents=True)
    (tmp_path / "tree" / "include" / "linux" / "dcache.h").write_text(DENTRY_HEADER)
    subprocess.run(["patch", "-p1", "-s", "-i", str(patch)], cwd=tmp_path / "tree", check=True)
    got = (tmp_path / "tree" / "include" / "linux" / "dcache.h").read_text()
    assert got.index("d_tail[64]") < got.index("d_lockref;") and got.index("d_name;") < got.index("d_op;")


def test_a_report_of_a_profiled_run_says_where_the_time_went_and_proposes_its_layout(tmp_path, program):
    run = _advisable(tmp_path, program)
    assert cli.main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    md = (tmp_path / "report" / "report.md").read_text()
    section = md[md.index("## Where the time went"):]
    assert "### Where the window's time went" in section and "### Fields on the hottest lines" in section
    assert "### Proposed layout of dentry" in section and "dentry: no layout of at most 24 bytes" in section
