"""The proposed layout (cohtb/analysis/layout_proposal.py) and its kernel patch (cohtb/fs/struct_patch.py): which
layouts the rule allows and picks, and a patch that `patch` applies to give the proposed order."""

import shutil
import subprocess

import pytest

from cohtb.analysis.advice import FieldTraffic
from cohtb.analysis.layout_proposal import COLD, READER, WRITER, Proposal, alignment, false_shared_reads, propose
from cohtb.errors import CohtbError
from cohtb.experiments import advice
from cohtb.experiments.reproduce import PointResult
from cohtb.experiments.seeds import HISTORY
from cohtb.fs import struct_patch
from cohtb.report.advice import proof_text
from cohtb.run.kernels import VARIANTS

LINE = 64
ADDRESS = 0x1000 * LINE   # the object starts a line


def traffic(name, offset, size, loads=0, stores=0, load_cores=0, store_cores=0, obj="o"):
    at = ADDRESS + offset
    return FieldTraffic(obj, name, at // LINE, at % LINE, size, loads, stores, load_cores, store_cores, LINE)


# A 128-byte object: a read field, the written one beside it, cold fields after (the pre-6.11 dentry in small).
FIELDS = [{"name": "walk", "offset": 0, "size": 8}, {"name": "name", "offset": 8, "size": 40},
          {"name": "count", "offset": 48, "size": 8}, {"name": "ops", "offset": 56, "size": 8},
          {"name": "data", "offset": 64, "size": 8}, {"name": "lru", "offset": 72, "size": 56}]
HOT = [traffic("name", 8, 40, loads=100, load_cores=4), traffic("count", 48, 8, loads=200, stores=200,
                                                                   load_cores=4, store_cores=4)]


def offsets(layout):
    return {m.name: m.offset for m in layout.members}


def test_the_written_field_leaves_the_read_fields_line_moving_the_fewest_fields():
    before, after = propose("o", FIELDS, HOT, ADDRESS, LINE)
    assert {m.name: m.role for m in before.members} == {"walk": COLD, "name": READER, "count": WRITER, "ops": COLD,
                                                         "data": COLD, "lru": COLD}
    assert before.shared_lines() == {0} and not after.shared_lines()
    # after ops, count (56) still shares line 0; after data it starts line 1, which holds only cold fields
    assert offsets(after) == {"walk": 0, "name": 8, "ops": 48, "data": 56, "count": 64, "lru": 72}
    moved = [m.name for m in after.members if m.offset != before.offset_of(m.name)]
    assert moved == ["ops", "data", "count"] and after.size == 128 and not after.padded


def test_a_group_read_together_takes_its_readers_role_so_the_writer_cannot_land_on_it():
    """Without the group the writer may go onto `walk`'s line, which took no misses (every core finds it in its
    cache); kept together with `name`, `walk` is read where `name` is."""
    hot = [traffic("name", 64 + 8, 40, loads=100, load_cores=4), traffic("count", 112, 8, stores=200, store_cores=4)]
    fields = [{"name": "walk", "offset": 0, "size": 8}, {"name": "pad", "offset": 8, "size": 64},
              {"name": "name", "offset": 72, "size": 40}, {"name": "count", "offset": 112, "size": 8},
              {"name": "tail", "offset": 120, "size": 8}]
    _, free = propose("o", fields, hot, ADDRESS, LINE)
    assert offsets(free)["count"] == 8    # onto walk's line: nothing there missed
    before, grouped = propose("o", fields, hot, ADDRESS, LINE, groups=(("walk", "pad", "name"),))
    assert {m.name: m.role for m in before.members}["walk"] == READER
    assert grouped is None   # the readers fill 0..112 of 128 bytes: no line left for count
    _, roomier = propose("o", fields, hot, ADDRESS, LINE, bound=192, groups=(("walk", "pad", "name"),))
    assert offsets(roomier)["count"] == 128 and roomier.padded == ("count",) and roomier.size == 136


def test_a_group_of_a_written_and_a_read_field_is_refused_in_one_line():
    with pytest.raises(CohtbError, match="--together name,count: the group holds a written field and a field only read"):
        propose("o", FIELDS, HOT, ADDRESS, LINE, groups=(("name", "count"),))
    with pytest.raises(CohtbError, match="o has no field nosuch"):
        propose("o", FIELDS, HOT, ADDRESS, LINE, groups=(("name", "nosuch"),))


def test_no_layout_within_the_bound_is_none_and_a_layout_without_false_sharing_is_kept():
    _, after = propose("o", FIELDS[:4], HOT, ADDRESS, LINE)   # 64 bytes, one line: nowhere to go
    assert after is None
    _, after = propose("o", FIELDS[:4], HOT, ADDRESS, LINE, bound=128)
    assert after is not None and offsets(after)["count"] >= 64
    only_writer = [HOT[1]]
    before, after = propose("o", FIELDS, only_writer, ADDRESS, LINE)
    assert after is before


def test_the_object_is_judged_where_it_sits_in_its_line():
    """The same fields 48 bytes into a line: `walk` and `name` now straddle lines 0 and 1."""
    at = ADDRESS + 48
    hot = [FieldTraffic("o", "name", (at + 8) // LINE, (at + 8) % LINE, 8, 100, 0, 4, 0, LINE),
           FieldTraffic("o", "count", (at + 48) // LINE, (at + 48) % LINE, 8, 0, 200, 0, 4, LINE)]
    before, _ = propose("o", FIELDS, hot, at, LINE)
    assert before.base == 48 and list(before.lines(before.members[1])) == [0, 1]


def test_the_saved_misses_are_the_readers_misses_on_the_shared_lines():
    before, _ = propose("o", FIELDS, HOT, ADDRESS, LINE)
    assert false_shared_reads(before, HOT, ADDRESS) == (100, [0x1000])


@pytest.mark.parametrize("offset, size, want", [(0, 4, 4), (4, 4, 4), (8, 16, 8), (56, 40, 8), (3, 1, 1),
                                                 (6, 2, 2), (64, 64, 8)])
def test_a_fields_alignment_is_the_largest_power_of_two_dividing_its_offset_and_size(offset, size, want):
    assert alignment(offset, size) == want


HEADER = """\
#define X 1

struct thing {
	/* read together */
	unsigned int flags;		/* one line */
	struct inode *inode;		/* a comment that
					 * goes on */
	unsigned char name[40];	/* small names */

	/* written often */
	struct lockref count;	/* lock and refcount */
	const void *ops;
	union {
		struct list_head lru;		/* LRU list */
		void *wait;	/* in-lookup ones only */
	};
	union {
		struct hlist_node alias;
		struct rcu_head rcu;
	} u;
};

struct other { int a; };
"""


def test_the_headers_members_are_named_as_pahole_names_them():
    assert struct_patch.members(struct_patch.parse(HEADER, "thing")) == ["flags", "inode", "name", "count", "ops",
                                                                          "lru/wait", "u"]


def test_a_reorder_moves_members_with_their_comments_and_keeps_the_lines_between_them(tmp_path):
    order = ["flags", "inode", "name", "ops", "count", "lru/wait", "u"]
    new = struct_patch.reorder(HEADER, "thing", order)
    assert struct_patch.members(struct_patch.parse(new, "thing")) == order
    assert "\t/* written often */\n\tconst void *ops;\n\tstruct lockref count;\t/* lock and refcount */\n" in new
    assert new.count("\n") == HEADER.count("\n") and "struct other { int a; };" in new
    if shutil.which("patch") is None:
        pytest.skip("no patch program")
    (tmp_path / "include").mkdir()
    (tmp_path / "include" / "thing.h").write_text(HEADER)
    diff = struct_patch.diff(HEADER, new, "include/thing.h")
    subprocess.run(["patch", "-p1", "-s"], input=diff, text=True, cwd=tmp_path, check=True)
    assert (tmp_path / "include" / "thing.h").read_text() == new


def test_a_reorder_that_names_other_members_is_refused():
    with pytest.raises(CohtbError, match="are not the layout's"):
        struct_patch.reorder(HEADER, "thing", ["flags", "inode"])
    with pytest.raises(CohtbError, match="no 'struct nosuch"):
        struct_patch.parse(HEADER, "nosuch")


class _Run:
    def __init__(self, kernel, throughput, profile=True):
        self.id, self._profile = f"{kernel}-{throughput}", profile
        self.spec = type("Spec", (), {"kernel": kernel})()
        self.run, self.throughput = self, throughput

    def profile(self):
        return {"lines": [1]} if self._profile else None


def _Point(label):
    return type("Point", (), {"label": label})()


def _proposal_moving_count():
    before, after = propose("o", FIELDS, HOT, ADDRESS, LINE)
    return Proposal("o", before, after, 128, (), 0, [0x1000], 1.0, 50.0, 200.0, 2.0)


def test_a_seeds_advice_is_proven_by_the_arm_whose_runs_hold_the_proposed_layout(monkeypatch):
    """The arm whose object has the proposal's offsets proves it (its change over the advised arm, once every
    repetition is in); an arm with another layout does not."""
    p = _proposal_moving_count()
    layouts = {"new": [{"name": m.name, "offset": m.offset, "size": m.size} for m in p.after.members],
               "other": FIELDS}
    monkeypatch.setattr(advice, "proposals", lambda run, size, groups=(): [p])
    monkeypatch.setattr(advice, "object_fields", lambda run, obj: (ADDRESS, layouts[run.spec.kernel]))
    a = advice.SeedAdvice(seed="s", declaration="sv1", kernel="old", object="o", question="?", seed_patch="new")
    point = PointResult(_Point("p1"), [_Run("old", 1.0), _Run("old", 1.1)], [_Run("new", 2.0), _Run("new", 2.2)], 2)
    r = advice.advise(a, [point])
    assert r.proof_kernel == "new" and r.agree and len(r.proposals) == 2
    [(label, ratio)] = r.proof
    assert (round(ratio.mean, 3), round(ratio.lo, 3), round(ratio.hi, 3)) == (2.0, round(2.0 / 1.1, 3), 2.2)
    assert label == "p1" and r.seed_patch == r.proof
    elsewhere = PointResult(_Point("p1"), [_Run("old", 1.0)], [_Run("other", 2.0)], 2)
    r = advice.advise(a, [elsewhere])
    assert r.proof_kernel is None and r.proof == [] and r.others_kept
    alone = advice.advise(a, [PointResult(_Point("p1"), [_Run("old", 1.0)], [], 2)])
    assert alone.proof_kernel is None and not alone.others_kept
    # each point its own measurement: one whose repetitions are missing says so, beside a complete one
    two = [point, PointResult(_Point("p2"), [_Run("old", 1.0)], [_Run("new", 2.0)], 2)]
    assert [(lb, x is None) for lb, x in advice.advise(a, two).proof] == [("p1", False), ("p2", True)]
    unprofiled = PointResult(_Point("p1"), [_Run("old", 1.0, profile=False)], [_Run("new", 2.0)], 1)
    assert advice.advise(a, [unprofiled]).proposals == []


def test_the_declared_seed_advice_names_declarations_and_kernels_that_exist():
    ids = {e.declaration.id for versions in HISTORY.values() for e in versions}
    for a in advice.declared():
        assert a.declaration in ids and a.kernel in VARIANTS and (not a.seed_patch or a.seed_patch in VARIANTS)


def test_prove_sets_the_measured_change_beside_the_estimate_or_says_what_is_missing():
    p = _proposal_moving_count()   # 50 ns saved of the line's 200 per operation: +33% if the line bounds the run
    a = advice.SeedAdvice(seed="s", declaration="sv1", kernel="old", object="o", question="?")
    proven = advice.AdviceResult(a, [], [("r1", p)], None, "new", [("p1", advice.Ratio(1.25, 1.2, 1.3))], [])
    assert proof_text(proven, 0) == ("Proof by sv1: its new arm holds o with the proposed layout; throughput new over "
                                     "old, measured: p1: +25% (+20% to +30%); estimated +33% if the line bounds the "
                                     "run.")
    waiting = advice.AdviceResult(a, [], [("r1", p)], None, "new", [("p1", None)], [])
    assert "p1: not yet (3 of its runs are missing: cohtb seeds --seed s --launch records them)" in \
        proof_text(waiting, 3)
    unproven = advice.AdviceResult(a, [], [("r1", p)], None, None, [], [])
    assert "no arm of it holds o with the proposed layout (estimated +33%" in proof_text(unproven, 0)
    nothing_kept = advice.AdviceResult(a, [], [("r1", p)], None, None, [], [], others_kept=False)
    assert "no other arm of it has kept runs yet" in proof_text(nothing_kept, 0)


def test_the_struct_parser_reads_the_kernels_other_shapes_and_refuses_preprocessor_lines():
    """Shapes of include/linux/fs.h and friends: an attribute before the closing ';', a comment of its own whose
    lines have no stars, code after a comment on one line, a union holding an anonymous struct."""
    header = ("struct s {\n\t/* c */ int e;\n\t/*\n\t a comment without stars\n\t */\n\tunion {\n\t\tint a;\n"
              "\t\tstruct {\n\t\t\tint b;\n\t\t\tint c;\n\t\t};\n\t};\n\tstruct { int x; } __packed;\n\tint last;\n"
              "} __randomize_layout;\n")
    assert struct_patch.members(struct_patch.parse(header, "s")) == ["e", "a", "x", "last"]
    with pytest.raises(CohtbError, match=r"struct t: its body has preprocessor lines \(#ifdef CONFIG_X\)"):
        struct_patch.parse("struct t {\n\tint a;\n#ifdef CONFIG_X\n\tint b;\n#endif\n};\n", "t")
