"""cohtb bundle: a run bundled again gives the same bytes (git sees no change)."""

import gzip
import shutil

from cohtb.places import REFERENCE_RUNS
from cohtb.run.bundle import bundle
from cohtb.run.runs import discover


def test_bundling_a_run_twice_gives_the_same_bytes(tmp_path):
    source = next(p for p in sorted(REFERENCE_RUNS.iterdir()) if (p / "events.cohtb.gz").exists())
    recorded = tmp_path / "runs" / source.name   # as recorded: the events not yet compressed
    recorded.mkdir(parents=True)
    shutil.copyfile(source / "manifest.json", recorded / "manifest.json")
    (recorded / "events.cohtb").write_bytes(gzip.decompress((source / "events.cohtb.gz").read_bytes()))
    packed = []
    for into in ("first", "second"):
        [run] = discover([tmp_path / "runs"])
        bundle([run], tmp_path / into)
        packed.append((tmp_path / into / source.name / "events.cohtb.gz").read_bytes())
    assert packed[0] == packed[1] and gzip.decompress(packed[0]) == (recorded / "events.cohtb").read_bytes()
