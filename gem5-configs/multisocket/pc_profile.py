"""The time-proportional profile of the measured window: gem5's PcProfile, which the project's patch adds
(gem5-configs/build/patches/pc-profile.patch says what it counts). Region starts it when the window opens,
stops it when it closes and dumps it beside roi.json."""

import m5.objects

from .refusal import refuse

FILE = "pc-profile.tsv"
SLOW_FILE = "pc-slow.tsv"
# The least time a retirement logged as slow took: more than a private cache's hit (a few ns at these machines'
# latencies, docs/machine.md), less than the cheapest transfer from another cache (tens of ns); so the log holds
# the instructions that waited for a line, which the recorder joins to the trace's events.
SLOW = "15ns"


def attach(board, cpus):
    """The board's profile of these cores; the config exits when this gem5 was built without the patch."""
    kind = getattr(m5.objects, "PcProfile", None)
    if kind is None:
        refuse("--profile: this gem5 has no PcProfile (build it with gem5-configs/build/build-gem5.sh)")
    board.cohtb_pc_profile = kind(cpus=cpus, slow=SLOW)
    return board.cohtb_pc_profile
