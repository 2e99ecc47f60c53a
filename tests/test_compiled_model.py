"""The compiled model against its specification, the Python BoundedModel: the same counters, every field, after
every chunk of every stream kind, in every emitted monitor configuration (and never against the RTL)."""

from pathlib import Path

import numpy as np
import pytest

from cohtb.analysis.analyse import regions_for
from cohtb.contract import Kind
from cohtb.monitor import config
from cohtb.monitor.compiled_model import CompiledModel
from cohtb.monitor.counters import diff_counters
from cohtb.monitor.models import BoundedModel
from cohtb.places import REFERENCE_RUNS
from cohtb.run.runs import load
from cohtb.toolchain import variant_names
from cohtb.trace.events import RECORD
from cohtb.verify import random_events as streams
from cohtb.verify.contention_patterns import COLD, HOT, mixed_chunk


def both(p, regions=()):
    models = BoundedModel(p), CompiledModel(p)
    for m in models:
        for i, (base, mask) in enumerate(regions):
            m.set_region(i, base, mask)
    return models


def assert_same_after_each(p, chunks, regions=()):
    spec, compiled = both(p, regions)
    for k, recs in enumerate(chunks):
        spec.apply_array(recs)
        compiled.apply_array(recs)
        assert diff_counters(spec.snapshot(), compiled.snapshot()) == [], f"after chunk {k}"
    return spec.snapshot()


@pytest.mark.parametrize("variant", variant_names())
def test_random_streams_in_every_configuration(variant):
    p = config.variant(variant).params
    # more cores and sockets than the configuration has: some events are rejected, as the RTL rejects them
    _, recs = streams.random_stream(40_000, cores=p.cores + 2, sockets=p.sockets + 1, hot_lines=6,
                                    cold_lines=4 * p.sets * p.ways, seed=11)
    recs["line"] &= p.line_mask
    regions = [(HOT, p.line_mask), (recs["line"][0], p.line_mask), (0, 0)][:p.regions]
    end = assert_same_after_each(p, np.array_split(recs, 8), regions)
    assert end.totals["rejected"] > 0 and end.totals["stateEvictions"] > 0 and end.totals["transfers"] > 0


@pytest.mark.parametrize("variant", variant_names())
def test_contention_patterns_in_every_configuration(variant):
    p = config.variant(variant).params
    chunks = [mixed_chunk(3, k, 5_000, p.cores, max(1, p.cores // p.sockets)) for k in range(6)]
    for recs in chunks:
        recs["line"] &= p.line_mask
    regions = [(HOT, p.line_mask), (HOT + 8, p.line_mask), (COLD, p.line_mask)][:p.regions]
    assert_same_after_each(p, chunks, regions)


def test_saturation_drops_and_lines_wider_than_the_table():
    p = config.variant("small").params     # 8-bit counters
    _, recs = streams.random_stream(5_000, cores=p.cores, sockets=p.sockets, hot_lines=2, cold_lines=8, seed=4)
    recs["line"] |= np.uint64(1) << np.uint64(40)      # bits above lineAddrBits: the tag keeps them, regions do not
    spec, compiled = both(p, [(recs["line"][0], p.line_mask)])
    for m in (spec, compiled):
        m.apply_array(recs)
        m.drop(3)
        m.drop(0)
    a, b = spec.snapshot(), compiled.snapshot()
    assert a.saturated and a.dropped and a.totals["dropped"] == 3
    assert diff_counters(a, b) == []


def test_kinds_beyond_the_contract_are_rejected_alike():
    p = config.variant("default").params
    recs = np.zeros(4, dtype=RECORD)
    recs["line"] = [5, 5, 5, 5]
    recs["kind"] = [int(Kind.WRITE), 6, 255, int(Kind.READ)]
    recs["core"] = [0, 1, 1, 2]
    spec, compiled = both(p)
    for m in (spec, compiled):
        m.apply_array(recs)
    assert spec.snapshot().totals["rejected"] == 2
    assert diff_counters(spec.snapshot(), compiled.snapshot()) == []


def test_the_comparison_sees_a_difference():
    p = config.variant("small").params
    _, recs = streams.random_stream(2_000, cores=p.cores, sockets=p.sockets, seed=9)
    spec, compiled = both(p)
    spec.apply_array(recs)
    compiled.apply_array(recs[:-50])
    assert diff_counters(spec.snapshot(), compiled.snapshot()) != []


def test_bundled_runs_count_alike():
    """Three bundled runs of different shapes (SE, full system, the one of most events) with their fields' regions."""
    runs = sorted((d for d in Path(REFERENCE_RUNS).iterdir() if (d / "manifest.json").exists()), key=lambda d: d.name)
    picked = [next(d for d in runs if not d.name.startswith("fs-")), next(d for d in runs if d.name.startswith("fs-"))]
    picked.append(max(runs, key=lambda d: sum(f.stat().st_size for f in d.glob("events.cohtb*"))))
    for d in picked:
        run = load(d)
        header, recs = run.events()
        p = config.variant("default").params
        regions = [(r.line, p.line_mask) for r in regions_for(run.fields, p.regions)]
        assert_same_after_each(p, [recs], regions)
