package cohtb

import chisel3._
import chisel3.util._

class HotLineEntry(p: MonitorParams) extends Bundle {
  val valid = Bool()
  val line = UInt(p.lineAddrBits.W)
  /** Space-Saving count: never below the true count, at most `error` above it. */
  val count = UInt(p.counterWidth.W)
  /** Count of the entry this line displaced when it was inserted (the overestimate bound). */
  val error = UInt(p.counterWidth.W)
}

/** Space-Saving heavy hitters (Metwally et al., 2005) over ping-pong items (transfers and dirty reads).
  *
  * A hit increments its entry; a miss takes the first invalid entry, else replaces the entry with the
  * smallest count (lowest index on ties), inheriting count + 1 and recording the old count as its error.
  * Guarantees: count - error <= true count <= count, and every line with more than N / hotEntries
  * items out of N is in the table. One update per clock, all registers, no hazards. */
class HotLineTable(p: MonitorParams) extends Module {
  val io = IO(new Bundle {
    val in = Flipped(Valid(UInt(p.lineAddrBits.W)))
    val clear = Input(Bool())
    val entries = Output(Vec(p.hotEntries, new HotLineEntry(p)))
    val saturated = Output(Bool())
  })
  val table = RegInit(VecInit(Seq.fill(p.hotEntries)(0.U.asTypeOf(new HotLineEntry(p)))))
  io.entries := table

  val hits = table.map(e => e.valid && e.line === io.in.bits)
  val hit = hits.reduce(_ || _)
  val invalids = table.map(!_.valid)
  val anyInvalid = invalids.reduce(_ || _)

  /** Index of the smallest count, lowest index on ties (left operand wins unless the right is smaller). */
  def minIndex(lo: Int, hi: Int): (UInt, UInt) =
    if (lo == hi) (lo.U(log2Ceil(p.hotEntries).max(1).W), table(lo).count)
    else {
      val mid = (lo + hi) / 2
      val (li, lc) = minIndex(lo, mid)
      val (ri, rc) = minIndex(mid + 1, hi)
      val takeRight = rc < lc
      (Mux(takeRight, ri, li), Mux(takeRight, rc, lc))
    }
  val (minIdx, minCount) = minIndex(0, p.hotEntries - 1)
  val slot = Mux(hit, OHToUInt(hits), Mux(anyInvalid, PriorityEncoder(invalids), minIdx))
  val base = Mux(hit, table(slot).count, Mux(anyInvalid, 0.U, minCount))
  val (next, over) = SaturatingAdd(base, 1.U)
  io.saturated := io.in.valid && over

  when(io.clear) {
    table.foreach(_ := 0.U.asTypeOf(new HotLineEntry(p)))
  }.elsewhen(io.in.valid) {
    table(slot).valid := true.B
    table(slot).line := io.in.bits
    table(slot).count := next
    when(!hit) { table(slot).error := base }
  }
}
