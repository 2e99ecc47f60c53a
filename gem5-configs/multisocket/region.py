"""The region of interest both cohtb configs mark, and roi.json, what they leave for the recorder
(cohtb/run/recorder.py): the region's ticks, the machine and its controllers, the protocol gem5 was built with,
how gem5 exited.

The workload calls m5 work-begin twice (set up, then the window opens) and work-end once (the window closed);
ProtocolTrace is on between the second work-begin and the work-end, and so is the profile when there is one
(pc_profile.py). gem5 runs on after work-end, untraced, so the workload can write its result."""

import json
import os

import m5
from m5 import debug
from m5.defines import buildEnv

from .machine import machine_record
from .pc_profile import FILE as PROFILE_FILE, SLOW_FILE


class Region:
    def __init__(self, trace: bool = True, on_setup=None, profile=None, **record):
        self.trace, self.on_setup, self.profile = trace, on_setup, profile
        self.roi = dict(record)

    def mark(self, name: str) -> None:
        self.roi[name] = m5.curTick()

    def work_begin(self):
        """gem5's exit-event handler for work-begin."""
        self.mark("setup_tick")
        if self.on_setup:
            self.on_setup()
        yield False
        self.mark("begin_tick")
        if self.trace:
            debug.flags["ProtocolTrace"].enable()
        if self.profile is not None:
            self.profile.start()
        yield False

    def work_end(self):
        self.mark("end_tick")
        debug.flags["ProtocolTrace"].disable()
        if self.profile is not None:
            self.profile.stop()
        yield False

    def write(self, out: str, simulator, opts, hierarchy, cpu: str, params: dict, **more) -> dict:
        """roi.json into out, written whole under a temporary name and renamed."""
        roi = self.roi
        if self.profile is not None and "end_tick" in roi:
            self.profile.dump(os.path.join(out, PROFILE_FILE))
            self.profile.dumpSlow(os.path.join(out, SLOW_FILE))
            roi.update(profile=PROFILE_FILE, profile_slow=SLOW_FILE)
        roi.update({"exit_cause": simulator.get_last_exit_event_cause(), "final_tick": m5.curTick(), "params": params,
                    "protocol": str(buildEnv["PROTOCOL"]), **more, **machine_record(opts, hierarchy, cpu)})
        if "begin_tick" in roi and "end_tick" in roi:
            roi["roi_seconds"] = (roi["end_tick"] - roi["begin_tick"]) / 1e12
        tmp = os.path.join(out, "roi.json.tmp")
        with open(tmp, "w") as f:
            json.dump(roi, f, indent=1)
        os.replace(tmp, os.path.join(out, "roi.json"))
        return roi
