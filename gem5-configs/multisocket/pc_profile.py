"""The time-proportional profile of the measured window: gem5's PcProfile, which the project's patch adds
(gem5-configs/build/patches/pc-profile.patch says what it counts). Region starts it when the window opens,
stops it when it closes and dumps it beside roi.json."""

import m5.objects

FILE = "pc-profile.tsv"


def attach(board, cpus):
    """The board's profile of these cores; the config exits when this gem5 was built without the patch."""
    kind = getattr(m5.objects, "PcProfile", None)
    if kind is None:
        raise SystemExit("--profile: this gem5 has no PcProfile (build it with gem5-configs/build/build-gem5.sh)")
    board.cohtb_pc_profile = kind(cpus=cpus)
    return board.cohtb_pc_profile
