package cohtb

import chisel3._

/** Counters saturate at their all-ones value instead of wrapping; the monitor raises a sticky status bit. */
object SaturatingAdd {
  /** Returns (x + d clamped to x's width, whether it clamped). */
  def apply(x: UInt, d: UInt): (UInt, Bool) = {
    val w = x.getWidth
    val sum = x +& d
    val over = sum(sum.getWidth - 1, w).orR
    (Mux(over, ((BigInt(1) << w) - 1).U(w.W), sum(w - 1, 0)), over)
  }
}
