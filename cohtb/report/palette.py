"""One colour per policy, one hatch and one line style per layout: the single mapping every figure (the report's
and docs/results') draws with, so a policy reads the same everywhere. docs/report.md lists it.

The policies are every workload's `--policy` choices (workloads/*.c), which the kernel variants
(cohtb/fs/kernel.py) and the seeds' experiments (cohtb/experiments/seeds.py) reuse; tests/test_plots.py fails
when one has no colour here or two colours are too alike."""

from __future__ import annotations

from matplotlib.colors import to_rgb

# Okabe-Ito (distinguishable with the common colour-vision deficiencies) for the five lockref policies, which
# share panels most; Paul Tol's muted indigo, olive and wine and a dark grey for the rest. Any two differ by a
# CIELAB distance of at least 25, so even policies that never share a panel are not mistaken for each other.
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
}
UNKNOWN = "#bbbbbb"          # a policy added to a workload but not here yet: light grey, never a policy's colour

POLICY_ORDER = tuple(POLICY_COLOURS)
LAYOUT_ORDER = ("shared", "pre611", "split", "padded")
LAYOUT_HATCH = {"shared": "///", "pre611": "\\\\", "split": "", "padded": ".."}
LAYOUT_LINE = {"shared": "--", "pre611": "-.", "split": "-", "padded": ":"}
LAYOUT_MARKER = {"shared": "s", "pre611": "D"}   # the others: a circle
EDGE = "#333333"


def policy_colour(policy: str) -> str:
    return POLICY_COLOURS.get(policy, UNKNOWN)


def hatch_colour(colour: str) -> str:
    """A layout's hatch drawn on a bar: dark lines vanish on the dark policies' bars, so those get white ones."""
    r, g, b = to_rgb(colour)
    return "white" if 0.299 * r + 0.587 * g + 0.114 * b < 0.4 else EDGE
