"""cohtb's gem5 system: an x86 SE-mode machine of S sockets x C cores (multisocket/machine.py: the flat machine,
MESI_Two_Level, or the socket machine, CHI), running one workload binary. ProtocolTrace is on between the workload's m5 work-begin and work-end;
the x86 TLB flag is on until the first (set-up) work-begin only, so the trace also carries the page
mappings of the set-up. Writes OUT/roi.json (region ticks, controller map, parameters).

    gem5.opt --outdir=OUT/gem5 --debug-file=trace.gz gem5-configs/cohtb_se.py --out OUT --binary B -- ARGS...
"""

import argparse
import os
import sys
from pathlib import Path

import m5
from m5 import debug

from gem5.components.boards.simple_board import SimpleBoard
from gem5.components.processors.cpu_types import CPUTypes
from gem5.components.processors.simple_processor import SimpleProcessor
from gem5.isas import ISA
from gem5.resources.resource import BinaryResource
from gem5.simulate.exit_event import ExitEvent
from gem5.simulate.simulator import Simulator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from multisocket.machine import add_machine_args, check_machine, hierarchy_and_memory, shape_cores  # noqa: E402
from multisocket.pc_profile import attach as attach_profile  # noqa: E402
from multisocket.region import Region  # noqa: E402
from multisocket.refusal import refuse  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__)
add_machine_args(ap)
ap.add_argument("--cpu", choices=["timing", "o3"], default="timing")
ap.add_argument("--max-seconds", type=float, default=1.0, help="simulated-time safety limit")
ap.add_argument("--no-trace", action="store_true",
                help="no ProtocolTrace and no TLB log: the untraced baseline of benchmarks/live_overhead.py")
ap.add_argument("--profile", action="store_true",
                help="profile the window's cores (multisocket/pc_profile.py: a gem5 built with the pc-profile patch)")
ap.add_argument("--binary", required=True)
ap.add_argument("--out", required=True, help="run directory for roi.json and the workload's output")
ap.add_argument("args", nargs=argparse.REMAINDER, help="workload arguments (after --)")
opts = ap.parse_args()
workload_args = opts.args[1:] if opts.args[:1] == ["--"] else opts.args
check_machine(opts, "cohtb_se.py")
if opts.machine_file and opts.core != "timing" and opts.cpu != opts.core:   # SE's core is --cpu's
    refuse(f"cohtb_se.py: --cpu {opts.cpu}: machine {opts.machine} has {opts.core} cores")
opts.core = opts.cpu

hierarchy, memory = hierarchy_and_memory(opts)
processor = SimpleProcessor(cpu_type=CPUTypes.O3 if opts.cpu == "o3" else CPUTypes.TIMING, isa=ISA.X86,
                            num_cores=opts.sockets * opts.cores_per_socket)
shape_cores([c.get_simobject() for c in processor.get_cores()], opts)
board = SimpleBoard(clk_freq=opts.clock, processor=processor, memory=memory, cache_hierarchy=hierarchy)
os.makedirs(opts.out, exist_ok=True)
out_dir = Path(opts.out).absolute()
board.set_se_binary_workload(BinaryResource(local_path=os.path.abspath(opts.binary)), arguments=workload_args,
                             stdout_file=out_dir / "workload.stdout", stderr_file=out_dir / "workload.stderr")

# The first work-begin: the workload's objects are set up (their page mappings are logged); the TLB log stops
# before thread creation and the start barrier flood it.
region = Region(trace=not opts.no_trace, on_setup=lambda: debug.flags["TLB"].disable(),
                profile=attach_profile(board, [c.get_simobject() for c in processor.get_cores()]) if opts.profile else None)
if not opts.no_trace:
    debug.flags["TLB"].enable()
simulator = Simulator(board=board, on_exit_event={ExitEvent.WORKBEGIN: region.work_begin(), ExitEvent.WORKEND: region.work_end()},
                      max_ticks=int(opts.max_seconds * 1e12))
simulator.run()

roi = region.write(opts.out, simulator, opts, hierarchy, opts.cpu,
                   {k: v for k, v in vars(opts).items() if k not in ("args", "out", "machine_file", "profile")}, workload_args=workload_args)
print(f"cohtb_se.py: exit '{roi['exit_cause']}' at tick {roi['final_tick']}, region {roi.get('roi_seconds')} s")
