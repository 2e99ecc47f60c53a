"""One colour per policy and per kernel variant, one hatch and one line style per layout: the single mapping every
figure (the report's and docs/results') draws with, so a policy, a kernel or a layout reads the same everywhere.
docs/report.md lists it.

The policies are every workload's `--policy` choices (workloads/*.c), which the seeds' experiments
(cohtb/experiments/seeds.py) reuse; the kernel variants are cohtb/run/kernels.py's. A run of the guest benchmark
(stat_file) takes its kernel's colour: its policy and layout are its kernel's, not a choice of the run, and a
policy's colour on it would say it was that policy's SE run. tests/test_plots.py fails when a policy, a kernel or
a layout has no ink here or two colours are too alike."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import to_rgb

from cohtb.run.spec import GUEST_BENCHMARK, RunSpec

# Okabe-Ito (distinguishable with the common colour-vision deficiencies) for the five lockref policies, which
# share panels most; Paul Tol's muted indigo, olive and wine and a dark grey for the rest. Any two colours here
# (kernels' included) differ by a CIELAB distance of at least 25, so even meanings that never share a panel are not
# mistaken for each other.
POLICY_COLOURS = {
    "locked": "#d55e00",     # vermillion
    "cmpxchg": "#0072b2",    # blue
    "retry100": "#009e73",   # bluish green
    "trywait": "#e69f00",    # orange
    "unified": "#cc79a7",    # reddish purple
    "batched": "#56b4e9",    # sky blue
    "sleep": "#332288",      # indigo
    "spin": "#999933",       # olive
    "shared": "#882255",     # wine (stat_counter's shared counter, not the layout)
    "percpu": "#444444",     # dark grey
    "pause": "#661100",      # dark brown (the PAUSE calibration: a poll with cpu_relax)
    "plain": "#ee3377",      # magenta (the same poll without it)
    "xadd": "#f0e442",       # yellow (the contention benchmark's lock xadd)
    "ticket": "#aa4499",     # purple (its ticket lock)
    "qspinlock": "#17becf",  # cyan (its queued spinlock)
    "random": "#1a08ff",     # ultramarine (chase: the mesh calibration's load latency)
}
# The kernel variants: picked at least 25 from every policy's colour and from the other inks of the figures (the
# parts of the ping-pong and checks bars, the fields' lines, the seed figures' greys and pale yellow), and at least
# 35 from each other: the pairs the seeds compare (stock-6.12 against pre611, lockref-off and wait) share panels.
KERNEL_COLOURS = {
    "stock-6.12": "#0f6908",       # dark green
    "pre611": "#b48ee1",           # lavender
    "hybrid184": "#087880",        # petrol
    "wait": "#70521e",             # brown
    "pre611-wait": "#bbf09e",      # pale green
    "hybrid184-wait": "#4b1e52",   # aubergine
    "rspin": "#00f8ca",            # aqua
    "lockref-off": "#ffa5a5",      # pink
}
UNKNOWN = "#bbbbbb"          # a policy or kernel added but not here yet: light grey, never a meaning's colour

POLICY_ORDER = tuple(POLICY_COLOURS)
LAYOUT_ORDER = ("shared", "pre611", "hybrid184", "split", "padded", "packed", "private", "line")
# Every layout a workload offers, and hybrid184, a kernel's dentry no workload has (cohtb/run/kernels.py). "xx" is
# no layout's: the seed figures hatch a comparison's base arm with it.
LAYOUT_HATCH = {"shared": "///", "pre611": "\\\\", "hybrid184": "||", "split": "", "padded": "..", "packed": "++",
                "private": "--", "line": "oo"}
UNKNOWN_HATCH = "**"
LAYOUT_LINE = {"shared": "--", "pre611": "-.", "hybrid184": (0, (5, 1, 1, 1, 1, 1, 1, 1)), "split": "-",
               "padded": ":", "packed": (0, (3, 1, 1, 1, 1, 1)), "private": (0, (8, 3)), "line": (0, (10, 2, 2, 2))}
UNKNOWN_LINE = (0, (2, 4))
EDGE = "#333333"


def policy_colour(policy: str) -> str:
    return POLICY_COLOURS.get(policy, UNKNOWN)


def kernel_colour(variant: str) -> str:
    return KERNEL_COLOURS.get(variant, UNKNOWN)


def is_kernels(spec: RunSpec) -> bool:
    """Whether a run's policy and layout are its kernel's (the guest benchmark's), not its own."""
    return bool(spec.kernel) and spec.workload == GUEST_BENCHMARK


def spec_colour(spec: RunSpec) -> str:
    """A run's colour: its kernel's for the guest benchmark, its policy's otherwise (SE, or a workload of its own in
    the guest, which has its policy)."""
    return kernel_colour(spec.kernel) if is_kernels(spec) else policy_colour(spec.policy)


def layout_hatch(layout: str) -> str:
    return LAYOUT_HATCH.get(layout, UNKNOWN_HATCH)


def layout_line(layout: str):
    return LAYOUT_LINE.get(layout, UNKNOWN_LINE)


def hatch_colour(colour: str) -> str:
    """A layout's hatch drawn on a bar: dark lines vanish on the dark policies' bars, so those get white ones."""
    r, g, b = to_rgb(colour)
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.4 else EDGE


def cielab(colour: str) -> np.ndarray:
    """A colour in CIELAB (D65), where the palette keeps its meanings apart by a distance of at least 25."""
    c = np.array(to_rgb(colour))
    c = np.where(c > 0.04045, ((c + 0.055) / 1.055) ** 2.4, c / 12.92)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ c
    f = np.cbrt(xyz / np.array([0.95047, 1.0, 1.08883]))
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])
