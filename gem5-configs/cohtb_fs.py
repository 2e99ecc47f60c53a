"""cohtb's full-system machine: the SE machine (multisocket/machine.py) on gem5's X86Board, booting a
cohtb guest kernel (`cohtb kernel build`: its initramfs is built in, so there is no disk).

Two steps, one gem5 process each:

  --mode boot     AtomicSimpleCPU boots the kernel with Ruby in its noncaching atomic mode; the guest's
                  /init asks for a checkpoint once it is up, which is saved into --checkpoint, and the
                  run ends. One checkpoint serves every run of a (kernel, machine).
  --mode run      restores --checkpoint into the same atomic CPUs; /init reads --payload from the host
                  (m5 readfile: a tar of run/, with the benchmark and run/run.sh) and runs it. Once the
                  benchmark's threads wait at its start gate it asks for m5 switchcpu, and TimingSimpleCPUs
                  with Ruby's caches take over (cold: the warm-up warms them). The set-up -- process start,
                  thread creation, pinning, ~50 ms simulated -- thus runs atomic, 10x faster on the host.
                  ProtocolTrace is on between the benchmark's second m5 work-begin (its window) and its
                  work-end, as in SE; the benchmark's JSON comes back through m5 writefile into the gem5
                  output directory.

Writes OUT/roi.json (ticks, machine, controllers) like cohtb_se.py.

    gem5.opt --outdir=OUT/gem5 cohtb_fs.py --mode boot --kernel VMLINUX --checkpoint CKPT --out OUT
    gem5.opt --outdir=OUT/gem5 --debug-file=trace.gz cohtb_fs.py --mode run --kernel VMLINUX \
        --checkpoint CKPT --payload TAR --out OUT
"""

import argparse
import os
import sys
from pathlib import Path

import m5

from gem5.components.boards.x86_board import X86Board
from gem5.components.processors.cpu_types import CPUTypes
from gem5.components.processors.simple_switchable_processor import SimpleSwitchableProcessor
from gem5.isas import ISA
from gem5.simulate.exit_event import ExitEvent
from gem5.simulate.simulator import Simulator

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from multisocket.machine import add_machine_args, check_machine, hierarchy_and_memory, shape_cores  # noqa: E402
from multisocket.pc_profile import attach as attach_profile  # noqa: E402
from multisocket.region import Region  # noqa: E402
from multisocket.refusal import refuse  # noqa: E402

HZ = 100   # the guest's CONFIG_HZ (kernel/config-fragment)

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
add_machine_args(ap)
ap.add_argument("--mode", choices=["boot", "run"], required=True)
ap.add_argument("--kernel", required=True, help="the guest vmlinux (initramfs built in)")
ap.add_argument("--checkpoint", required=True, help="boot: the directory to save into; run: to restore from")
ap.add_argument("--payload", help="run: the tar the guest unpacks and runs (run/run.sh; gem5's readfile)")
ap.add_argument("--kernel-arg", action="append", default=[], help="one more kernel command-line argument")
ap.add_argument("--max-seconds", type=float, default=5.0, help="simulated-time safety limit")
ap.add_argument("--profile", action="store_true",
                help="run: profile the window's cores (multisocket/pc_profile.py: a gem5 built with the pc-profile patch)")
ap.add_argument("--out", required=True, help="run directory for roi.json")
opts = ap.parse_args()
check_machine(opts, "cohtb_fs.py")
if opts.mode == "run" and not opts.payload:
    refuse("cohtb_fs.py: --mode run needs --payload")

clock_hz = int(float(opts.clock.rstrip("GHz")) * 1e9) if opts.clock.endswith("GHz") else None
if clock_hz is None:
    refuse(f"cohtb_fs.py: --clock {opts.clock}: give it in GHz")

hierarchy, memory = hierarchy_and_memory(opts)
# Both modes build the same processor, so the checkpoint restores into it: atomic CPUs (Ruby noncaching)
# that boot and run the set-up, and the machine's cores (timing, or o3 where its file says so) switched in for
# the measurement (a run's switchcpu).
processor = SimpleSwitchableProcessor(starting_core_type=CPUTypes.ATOMIC,
                                      switch_core_type=CPUTypes.O3 if opts.core == "o3" else CPUTypes.TIMING,
                                      isa=ISA.X86, num_cores=opts.sockets * opts.cores_per_socket)
# The window's cores are the ones the run switches to (the stdlib keeps them by their key only): the machine's.
window_cores = [c.get_simobject() for c in processor._switchable_cores[processor._switch_key]]
shape_cores(window_cores, opts)
board = X86Board(clk_freq=opts.clock, processor=processor, memory=memory, cache_hierarchy=hierarchy)

# The kernel command line. idle=halt: idle CPUs halt rather than poll or mwait (an mwait-idle CPU is not
# woken by stores in Ruby's noncaching atomic mode, and polling makes the boot crawl). cpuhp.parallel=0:
# the parallel CPU bring-up busy-waits for ~1 G instructions at 32 CPUs. lapic_timer_period (the
# project's patch): gem5's local APIC runs at clock/16, so the calibration it skips would find clock/16/HZ.
# lpj: the delay loop runs on the TSC, clock/HZ per jiffy.
kernel_args = ["console=ttyS0", "earlyprintk=ttyS0", f"lpj={clock_hz // HZ}", "tsc=reliable", "no_timer_check",
               "mitigations=off", "rdinit=/init", "idle=halt", "cpuhp.parallel=0",
               f"lapic_timer_period={clock_hz // 16 // HZ}", "cohtb.gem5=1", *opts.kernel_arg]
# set_kernel_disk_workload() insists on a disk image: set its kernel and command line directly.
board._set_fullsystem(True)
board.workload.object_file = os.path.abspath(opts.kernel)
board.workload.command_line = " ".join(kernel_args)
board.exit_on_work_items = True
if opts.mode == "run":
    board.readfile = os.path.abspath(opts.payload)
    board._checkpoint = Path(opts.checkpoint).absolute()

os.makedirs(opts.out, exist_ok=True)
region = Region(mode=opts.mode, kernel_args=kernel_args,   # the work-begins and -end as in SE
                profile=attach_profile(board, window_cores) if opts.profile else None)


def on_checkpoint():
    # /init is up: save the boot and end this run (a restored run starts after the m5 op).
    region.mark("checkpoint_tick")
    m5.checkpoint(os.path.abspath(opts.checkpoint))
    yield True


def on_switch_cpu():
    # Every benchmark thread waits at the start gate: timing CPUs and Ruby's caches from here on.
    region.mark("switch_tick")
    processor.switch()
    yield False


handlers = {ExitEvent.CHECKPOINT: on_checkpoint()} if opts.mode == "boot" else \
    {ExitEvent.SWITCHCPU: on_switch_cpu(), ExitEvent.WORKBEGIN: region.work_begin(), ExitEvent.WORKEND: region.work_end()}
simulator = Simulator(board=board, on_exit_event=handlers, max_ticks=int(opts.max_seconds * 1e12))
simulator.run()

error = {"error": "the benchmark never asked for switchcpu: the whole run was atomic"} \
    if opts.mode == "run" and "switch_tick" not in region.roi else {}
roi = region.write(opts.out, simulator, opts, hierarchy, "atomic" if opts.mode == "boot" else opts.core,
                   {k: v for k, v in vars(opts).items() if k not in ("out", "machine_file", "profile")}, **error)
print(f"cohtb_fs.py: {opts.mode}: exit '{roi['exit_cause']}' at tick {roi['final_tick']}")
