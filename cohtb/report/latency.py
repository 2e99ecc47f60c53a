"""The calibration table: what one operation took on the simulated machine (cclat runs, analysis/latency.py)
beside what the published hardware took (experiments/hardware_latency.toml), in nanoseconds, cell by cell."""

from __future__ import annotations

from cohtb.analysis.latency import LatencyCell, cells as cells_of, chase_ticks_per_load, mesh_cells
from cohtb.experiments.calibration import (CALIBRATION_PART, MESH_FIGURES, TOLERANCE, Part, additive, closer, distance,
                                          l2_load_cycles, mesh_figures, mesh_fit, mesh_hops_over_part, mesh_parts, parts)
from cohtb.tables import Table


def table(cells: list[LatencyCell], part: Part | None) -> Table:
    """One row per cell the runs measured, in the order measured, with the published figure where there is one
    (a figure whose state or distance its source does not state is marked *, and said so below)."""
    rows, marked = [], {}
    model = additive(part) if part else {}
    scores = {"simulation": 0, "additive model": 0, "published": 0}
    for c in sorted(cells, key=lambda c: (c.hops, c.home_hops)):
        key = (c.state, c.operation, distance(c))
        published = part.ns.get(key) if part else None
        mark = ""
        if published is not None and key in part.inferred:
            marked[key] = part.inferred[key]
            mark = "*"
        if published is not None:
            scores["published"] += 1
            scores["simulation"] += abs(c.median_ns / published - 1) <= TOLERANCE
            scores["additive model"] += key in model and abs(model[key] / published - 1) <= TOLERANCE
        rows.append([c.state, c.operation, str(c.hops), str(c.home_hops), f"{c.median_ns:.1f}",
                     f"{c.p10_cycles / c.clock_ghz:.1f}-{c.p90_cycles / c.clock_ghz:.1f}",
                     "" if c.mean_ns is None else f"{c.mean_ns:.1f}",
                     f"{c.median_cycles:.0f}", "" if published is None else f"{published:.1f}{mark}",
                     "" if published is None else f"{c.median_ns / published:.2f}",
                     *([] if not model else ["" if published is None or key not in model else
                                             f"{model[key] / published:.2f}" + ("" if key not in part.calibrated_on
                                                                                else " (fitted)")])])
    header = ["state", "operation", "hops", "home hops", "ns", "ns p10-p90", "mean ns", "cycles", "published ns", "ratio",
              *(["additive model ratio"] if model else [])]
    note = (f"Published: {part.description}; {part.source}." if part else "No published part chosen.")
    if model:
        note += (f" Within {TOLERANCE:.0%} of the published figure: the simulation in {scores['simulation']} of "
                 f"{scores['published']} cells, the additive model in {scores['additive model']} (no simulator: "
                 "each cell the same-socket time of its kind plus the M load's increment for its hops, from the "
                 "cells the calibration was solved from, marked fitted).")
    if marked:   # each reason once, with the cells it stands for
        by_reason: dict[str, list[str]] = {}
        for (s, o, h), why in marked.items():
            by_reason.setdefault(why, []).append(f"{s} {o} {h} hop{'s' if h != 1 else ''}")
        note += " * Inferred, not stated by the source: " + "; ".join(
            f"{why} ({', '.join(keys)})" for why, keys in by_reason.items()) + "."
    return Table("One operation on a line held by another core", header, rows,
                 note + " Simulated: the median of the repetitions (ns at the machine's clock, and cycles), the "
                        "timer's own cost taken off, with the 10th-90th percentiles and the mean (the published "
                        "figures are means); ratio: the simulated median over published ns. Hops: socket links between "
                        "the owner's and the target's sockets; home hops: between the line's home and the target "
                        "(in state I no core holds the line: a published I cell is matched by home hops).")


def discrimination_table(cells: list[LatencyCell], part: Part, title: str) -> Table | None:
    """Every published cell the calibration did not fit, the simulation and the no-simulator additive model beside
    it: the cells where a calibration can be told from arithmetic."""
    model = additive(part)
    if not model:
        return None
    by_key = {(c.state, c.operation, distance(c)): c for c in cells}
    rows, wins = [], {"simulation": 0, "additive model": 0, "tie": 0}
    for key in sorted(part.ns, key=lambda k: (k[2], "MESI".find(k[0]), k[1])):
        if key in part.calibrated_on or key not in by_key or key not in model:
            continue
        sim, pub = by_key[key].median_ns, part.ns[key]
        who = closer(sim, model[key], pub)
        wins[who] += 1
        rows.append([key[0], key[1], str(key[2]), f"{pub:.0f}", f"{sim:.0f} ({sim / pub:.2f})",
                     f"{model[key]:.0f} ({model[key] / pub:.2f})", who])
    if not rows:
        return None
    return Table(title, ["state", "operation", "hops", "published ns", "simulated (ratio)", "additive model (ratio)",
                         "closer"], rows,
                 f"The {len(rows)} published cells the calibration was not solved from ({len(part.calibrated_on)} "
                 f"were: {', '.join(f'{s} {o} {h}' for s, o, h in sorted(part.calibrated_on))}). The additive model "
                 "runs no simulator: each cell is the same-socket time of its kind plus the M load's increment for "
                 f"its hops, from those cells alone. Closer to the published figure: the simulation in "
                 f"{wins['simulation']}, the additive model in {wins['additive model']}, a tie (within 1%) in "
                 f"{wins['tie']}.")


def distances_table(cells: list[LatencyCell], part: Part, title: str) -> Table:
    """Per state and operation, the simulated and published time at each distance, and whether the machine orders
    them (same socket < one hop < two hops) as the hardware does; the note says how many cells are within the
    tolerance."""
    by_key = {(c.state, c.operation, distance(c)): c for c in cells}
    hops = sorted({k[2] for k in by_key})
    rows, within, compared, misordered = [], 0, 0, []
    for state, op in dict.fromkeys((c.state, c.operation) for c in cells):
        row = [state, op]
        times = []
        for h in hops:
            c = by_key.get((state, op, h))
            published = part.ns.get((state, op, h))
            if c is None:
                row.append("")
                continue
            times.append(c.median_ns)
            if published is None:
                row.append(f"{c.median_ns:.0f}")
                continue
            ratio = c.median_ns / published
            compared += 1
            within += abs(ratio - 1) <= TOLERANCE
            row.append(f"{c.median_ns:.0f} / {published:.0f} ({ratio:.2f})")
        if any(a >= b for a, b in zip(times, times[1:])):
            misordered.append(f"{state} {op}")
        rows.append(row)
    model = additive(part)
    model_within = sum(abs(model[k] / part.ns[k] - 1) <= TOLERANCE for k in model if k in by_key)
    note = (f"Simulated / published ns (ratio), the median of each cell's repetitions against {part.description} "
            f"({part.name}). {within} of {compared} published cells within {TOLERANCE:.0%}"
            + (f" (the additive model, no simulator: {model_within} of {sum(k in by_key for k in model)})" if model
               else "")
            + f"; ordered same socket < one hop < two hops: "
            f"{'every row' if not misordered else 'not ' + ', '.join(misordered)}.")
    return Table(title, ["state", "operation", *[("same socket" if h == 0 else f"{h} hop" + "s" * (h > 1))
                                                  for h in hops]], rows, note)


def calibration_markdown(runs_by_machine: dict[str, list]) -> str:
    """docs/machine.md's measured tables: the calibration plan's runs of each machine, bundled in
    calibration-runs/."""
    part = parts()[CALIBRATION_PART]
    out = []
    for machine, runs in runs_by_machine.items():
        cells = [c for r in runs for c in cells_of(r)]
        out.append(distances_table(cells, part, f"Machine {machine}: {len(runs)} cclat runs").markdown())
        told = machine in part.calibrated_machines and discrimination_table(
            cells, part, f"Machine {machine}: the cells it was not calibrated on, against the additive model")
        if told:
            out.append(told.markdown())
    return "\n".join(out) if out else "No calibration runs bundled yet.\n"


def mesh_calibration_markdown(machine: str, cclat_runs: list, chase_runs: list) -> str:
    """docs/machine.md's tables of a mesh machine's calibration runs: each kind of cell read as a fixed cost plus a
    cost per hop, and the part's figures as the machine gives them over the whole mesh, beside the published ones."""
    cells = [c for r in cclat_runs for c in mesh_cells(r)]
    kinds: dict[tuple, list] = {}
    for c in cells:
        kinds.setdefault((c.state, c.operation), []).append(c)
    fits = [f for f in map(mesh_fit, kinds.values()) if f is not None]
    fit_table = Table(f"Machine {machine}: each kind of cell, a fixed cost plus a cost per hop ({len(cclat_runs)} "
                      "cclat runs)", ["state", "operation", "cells", "fixed cycles", "cycles per hop",
                                      "worst cell off the line, cycles"],
                      [[f.state, f.operation, str(f.cells), f"{f.fixed_cycles:.1f}", f"{f.cycles_per_hop:.2f}",
                        f"{f.worst_residual_cycles:.1f}"] for f in fits],
                      "Each cell: the median of its lines, the timer's own cost taken off, at the hops of the legs "
                      "its messages run (a compare-and-exchange on M: requester -> the line's slice -> owner -> "
                      "requester; a load of S: requester -> slice -> requester; a load of I: requester -> slice -> "
                      "memory controller -> requester); the line through them by least squares.")
    part = next((p for p in mesh_parts().values() if machine in p.calibrated_machines), None)
    if part is None or not cclat_runs:
        return fit_table.markdown()
    params = (cclat_runs[0].manifest.system.params.model_extra or {})
    hops = mesh_hops_over_part(params["mesh_columns"], params["llc_slices"])
    by_kib = {int(r.spec.extra[r.spec.extra.index("--kib") + 1]): chase_ticks_per_load(r) for r in chase_runs}
    l2 = l2_load_cycles(by_kib, params["l1_latency"])
    simulated = mesh_figures(fits, hops, l2, cclat_runs[0].manifest.system.clock_hz / 1e9)
    rows = []
    for figure in MESH_FIGURES:
        if figure not in part.ns or figure not in simulated:
            continue
        published, sim = part.ns[figure], simulated[figure]
        role = "solved from" if figure in part.calibrated_on else "the check"
        rows.append([figure, f"{published:.1f}" + ("*" if figure in part.inferred else ""), f"{sim:.1f}",
                     f"{sim / published:.2f}", role])
    figures = Table(f"Machine {machine}: the part's figures over the whole mesh", ["figure", "published ns",
                    "simulated ns", "ratio", "role"], rows,
                    f"Published: {part.description} (cohtb/experiments/mesh_latency.toml; * "
                    + "; ".join(f"{f}: {why}" for f, why in part.inferred.items()) + "). Simulated: each kind's fixed cost plus its cost per hop times the hops its legs run "
                    f"on average over the whole {params['llc_slices']}-tile mesh (every core on every tile, every "
                    "line on every slice: " + ", ".join(f"{k} {v:.2f}" for k, v in hops.items()) + " hops; the "
                    "worst pair's legs at most), since a run of at most 21 cores cannot put its threads on every "
                    "tile; the L2 load: the chase's ticks per load at its L2 footprint less those at its L1 "
                    "footprint (the loop's own), plus the L1's hit. A figure the machine was solved from says "
                    "that it was; the check is the one no parameter was solved from.")
    return fit_table.markdown() + "\n" + figures.markdown()
