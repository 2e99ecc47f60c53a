package cohtb

import chisel3._
import chisel3.util._

/** A register that synthesis keeps as flip-flops of its own, even where another register holds the same value.
  *
  * Yosys merges registers with the same inputs; a copy made to sit beside a distant group of loads (so that the
  * long route is a clock of its own, from register to register, and the logic after it is local) would be merged
  * back into the original. The `keep` attribute on the always block stops that (on the reg declaration, which is
  * where Chisel's attributes go, it does not). Simulators ignore it. It keeps the copy, not the original: Yosys
  * merges an ordinary register into a kept one with the same input, so every copy must be a kept one. */
class KeptRegisterBlackBox(width: Int) extends ExtModule(Map("WIDTH" -> width)) {
  // firtool 1.155 warns "unprocessed annotation: 'circt.VerbatimBlackBoxAnno'" for an inline black box; it emits the
  // file and lists it in filelist.f all the same.
  override def desiredName = "KeptRegister"
  val clock = IO(Input(Clock()))
  val enable = IO(Input(Bool()))
  val d = IO(Input(UInt(width.W)))
  val q = IO(Output(UInt(width.W)))
  setInline("KeptRegister.sv",
    """// A register that synthesis keeps as flip-flops of its own (rtl/src/cohtb/KeptRegister.scala).
      |module KeptRegister #(parameter WIDTH = 1) (
      |  input              clock,
      |  input              enable,
      |  input  [WIDTH-1:0] d,
      |  output [WIDTH-1:0] q
      |);
      |  reg [WIDTH-1:0] r;
      |`ifndef SYNTHESIS
      |  initial r = {WIDTH{1'b0}};
      |`endif
      |  (* keep *) always @(posedge clock) if (enable) r <= d;
      |  assign q = r;
      |endmodule
      |""".stripMargin)
}

object KeptRegister {
  /** `n` copies of `next`, registered when `enable`, in flip-flops synthesis merges neither with each other nor with
    * any other register (but another register with the same input may be merged into them: take every copy from
    * here). One black box for all of them. */
  def copies[T <: Data](next: T, enable: Bool, n: Int): Seq[T] = {
    val w = next.getWidth
    val r = Module(new KeptRegisterBlackBox(n * w))
    r.clock := Module.clock
    r.enable := enable
    r.d := Fill(n, next.asUInt)
    (0 until n).map(k => r.q(k * w + w - 1, k * w).asTypeOf(next))
  }

  /** `n` copies of `next`, registered on every clock, `init` while the module's reset is held (a synchronous reset,
    * as Chisel's own registers have it). */
  def copiesWithReset[T <: Data](next: T, init: T, n: Int): Seq[T] =
    copies(Mux(Module.reset.asBool, init, next), true.B, n)
}
