package cohtb

import chisel3._
import chisel3.experimental.SourceInfo

/** The monitor's self-checks: a chisel3 assert per invariant, run by every simulation of the emitted Verilog.
  *
  * Left alone, Chisel 7 puts an assert in the `Verification.Assert` layer, which firtool emits as a separate
  * module that a `bind` file under verification/ attaches: filelist.f lists the module but not the bind file,
  * and Icarus cannot compile `bind`, so such an assert never runs in the cocotb builds. With its layer block
  * elided, the assert is emitted inline in its module, inside `ifndef SYNTHESIS` (an if with $error and
  * $fatal): Verilator and Icarus run it, Yosys (-DSYNTHESIS) never sees it.
  *
  * Callers pass the invariant as one pure Bool (see `LineTable`'s companion), so a formal harness can take
  * the same expression as an assumption or an assertion. */
object SelfCheck {
  /** Fails the simulation on a clock edge, out of reset, where `cond` is false. `rule` names the rule checked
    * and goes into the failure message (no '%': the message is a printf format). */
  def apply(cond: Bool, rule: String)(implicit sourceInfo: SourceInfo): Unit = {
    require(!rule.contains('%'), s"self-check message must not contain '%': $rule")
    if (sys.env.contains("NOCHECK")) () else layer.elideBlocks { assert(cond, rule) }
  }
}

