"""Report figures (PNG): throughput, ping-pong per operation, per-field traffic, socket matrices,
scaling, and the checks. Each function takes the runs' metrics and writes one file."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from cohtb.analysis.metrics import RunMetrics  # noqa: E402

COLORS = {"shared": "#d95f02", "split": "#1b9e77", "padded": "#7570b3"}


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def throughput(ms: list[RunMetrics], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(ms) + 2), 4))
    labels = [m.label for m in ms]
    vals = [m.throughput / 1e6 for m in ms]
    ax.bar(range(len(ms)), vals, color=[COLORS.get(m.spec.layout, "grey") for m in ms])
    ax.set_xticks(range(len(ms)), labels, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("operations per simulated µs")
    ax.set_title("Throughput (get+put pairs per simulated second / 10^6)")
    for i, v in enumerate(vals):
        ax.text(i, v, f"{v:.2f}", ha="center", va="bottom", fontsize=7)
    return _save(fig, path)


def pingpong(ms: list[RunMetrics], path: Path) -> Path:
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(ms) + 2), 4))
    x = np.arange(len(ms))
    parts = [("local transfers", lambda m: m.per_op["transfers"] - m.per_op["crossSocketTransfers"], "#66c2a5"),
             ("cross-socket transfers", lambda m: m.per_op["crossSocketTransfers"], "#fc8d62"),
             ("local dirty reads", lambda m: m.per_op["dirtyReads"] - m.per_op["dirtyReadsRemote"], "#8da0cb"),
             ("remote dirty reads", lambda m: m.per_op["dirtyReadsRemote"], "#e78ac3")]
    bottom = np.zeros(len(ms))
    for name, f, color in parts:
        v = np.array([f(m) for m in ms])
        ax.bar(x, v, bottom=bottom, label=name, color=color)
        bottom += v
    ax.set_xticks(x, [m.label for m in ms], rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("per operation")
    ax.set_title("Cache-line ping-pong per operation (coherence monitor)")
    ax.legend(fontsize=8)
    return _save(fig, path)


def fields(ms: list[RunMetrics], path: Path) -> Path:
    """Traffic per operation on each field's line: where the layout moves the ping-pong."""
    names = list(dict.fromkeys(f for m in ms for f in m.fields if "lines" in m.fields[f] and m.fields[f]["lines"]))
    fig, ax = plt.subplots(figsize=(max(7, 0.9 * len(ms) + 2), 4.2))
    width = 0.8 / max(1, len(names))
    x = np.arange(len(ms))
    cmap = plt.get_cmap("tab10")
    for i, n in enumerate(names):
        v = [(m.fields.get(n, {}).get("transfers", 0) + m.fields.get(n, {}).get("dirtyReads", 0)) for m in ms]
        ax.bar(x + (i - (len(names) - 1) / 2) * width, v, width, label=n.split(".", 1)[-1], color=cmap(i % 10))
    ax.set_xticks(x, [m.label for m in ms], rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("transfers + dirty reads per operation")
    ax.set_title("Per field: ping-pong on the line holding each field")
    ax.legend(fontsize=7, ncol=3)
    return _save(fig, path)


def matrices(ms: list[RunMetrics], path: Path) -> Path:
    n = len(ms)
    cols = min(4, n)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.0 * rows), squeeze=False)
    for ax in axes.flat:
        ax.axis("off")
    for ax, m in zip(axes.flat, ms):
        mat = np.array(m.analysis.rtl.matrix, dtype=float) / m.run.ops
        ax.axis("on")
        im = ax.imshow(mat, cmap="magma_r")
        ax.set_title(m.label, fontsize=8)
        ax.set_xlabel("to socket", fontsize=7)
        ax.set_ylabel("from socket", fontsize=7)
        ax.tick_params(labelsize=6)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04).ax.tick_params(labelsize=6)
    fig.suptitle("Ownership transfers per operation, socket x socket", fontsize=10)
    return _save(fig, path)


def scaling(ms: list[RunMetrics], path: Path) -> Path | None:
    """Throughput and transfers per operation against sockets, one line per policy/layout."""
    series: dict[str, list[RunMetrics]] = {}
    for m in ms:
        if not m.spec.intruder_period_us:
            series.setdefault(f"{m.spec.policy}/{m.spec.layout}", []).append(m)
    series = {k: sorted(v, key=lambda m: m.spec.cores) for k, v in series.items() if len({m.spec.cores for m in v}) > 1}
    if not series:
        return None
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 4))
    for name, v in series.items():
        xs = [m.spec.sockets for m in v]
        style = "-" if "split" in name else "--"
        a1.plot(xs, [m.throughput / 1e6 for m in v], style, marker="o", label=name)
        a2.plot(xs, [m.per_op["transfers"] for m in v], style, marker="o", label=name)
    for a, title in ((a1, "throughput (ops per simulated µs)"), (a2, "ownership transfers per operation")):
        a.set_xscale("log", base=2)
        a.set_xlabel("sockets (4 cores each)")
        a.set_title(title, fontsize=10)
        a.legend(fontsize=7)
    return _save(fig, path)


def checks(ms: list[RunMetrics], path: Path) -> Path:
    """Per run, the monitor's items split by their gem5 evidence: matched, explained, unexplained."""
    ms = [m for m in ms if not m.check["verdict"].startswith("not checked")]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(ms) + 2), 4))
    if not ms:
        ax.axis("off")
        ax.text(0.5, 0.5, "No run checked against gem5: the runs are event format 1 (issue-time events)\n"
                "or hold none of gem5's evidence; see the Checks table.", ha="center", va="center")
        return _save(fig, path)
    x = np.arange(len(ms))
    parts = [("matched with gem5's evidence", lambda c: c["matched"], "#4c72b0"),
             ("gem5 only, explained (before/after the trace)", lambda c: c["ownerBeforeTrace"] + c["requesterAfterTrace"], "#aaaaaa"),
             ("unexplained (monitor only + gem5 only)", lambda c: c["unexplained"], "#c44e52")]
    bottom = np.zeros(len(ms))
    for label, value, colour in parts:
        v = np.array([value(m.check) / m.run.ops for m in ms], dtype=float)
        ax.bar(x, v, 0.6, bottom=bottom, label=label, color=colour)
        bottom += v
    ax.set_xticks(x, [m.label for m in ms], rotation=35, ha="right", fontsize=8)
    ax.set_ylabel("transfers + dirty reads per operation")
    ax.set_title("Checks: the monitor's transfers and dirty reads against gem5's own evidence")
    ax.legend(fontsize=7)
    return _save(fig, path)
