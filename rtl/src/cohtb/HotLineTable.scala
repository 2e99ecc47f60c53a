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
  * items out of N is in the table. One update per clock, no hazards.
  *
  * Lines, counts and errors sit in small RAMs written through one port (an update touches one entry);
  * only the valid bits are registers, so a clear is one clock and invalid entries read as zero. */
class HotLineTable(p: MonitorParams) extends Module {
  val io = IO(new Bundle {
    val in = Flipped(Valid(UInt(p.lineAddrBits.W)))
    val clear = Input(Bool())
    val entries = Output(Vec(p.hotEntries, new HotLineEntry(p)))
    val saturated = Output(Bool())
  })
  private val n = p.hotEntries
  private val lines = Mem(n, UInt(p.lineAddrBits.W))
  private val counts = Mem(n, UInt(p.counterWidth.W))
  private val errors = Mem(n, UInt(p.counterWidth.W))
  private val valid = RegInit(0.U(n.W))
  private val lineAt = (0 until n).map(k => lines(k.U))
  private val countAt = (0 until n).map(k => counts(k.U))

  for (k <- 0 until n) {
    io.entries(k).valid := valid(k)
    io.entries(k).line := Mux(valid(k), lineAt(k), 0.U)
    io.entries(k).count := Mux(valid(k), countAt(k), 0.U)
    io.entries(k).error := Mux(valid(k), errors(k.U), 0.U)
  }

  private val hits = (0 until n).map(k => valid(k) && lineAt(k) === io.in.bits)
  private val hit = hits.reduce(_ || _)
  private val anyInvalid = !valid.andR

  /** Index of the smallest count, lowest index on ties (left operand wins unless the right is smaller). */
  private def minIndex(lo: Int, hi: Int): (UInt, UInt) =
    if (lo == hi) (lo.U(log2Ceil(n).max(1).W), countAt(lo))
    else {
      val mid = (lo + hi) / 2
      val (li, lc) = minIndex(lo, mid)
      val (ri, rc) = minIndex(mid + 1, hi)
      val takeRight = rc < lc
      (Mux(takeRight, ri, li), Mux(takeRight, rc, lc))
    }
  private val (minIdx, minCount) = minIndex(0, n - 1)
  private val slot = Mux(hit, OHToUInt(hits), Mux(anyInvalid, PriorityEncoder(~valid), minIdx))
  private val base = Mux(hit, counts(slot), Mux(anyInvalid, 0.U, minCount))
  private val (next, over) = SaturatingAdd(base, 1.U)
  io.saturated := io.in.valid && over && !io.clear

  when(io.clear) {
    // The table restarts with this clock's item, if any, in the first entry (a read-and-clear loses nothing).
    valid := io.in.valid.asUInt
    when(io.in.valid) {
      lines(0.U) := io.in.bits
      counts(0.U) := 1.U
      errors(0.U) := 0.U
    }
  }.elsewhen(io.in.valid) {
    valid := valid | UIntToOH(slot, n)
    lines(slot) := io.in.bits
    counts(slot) := next
    when(!hit) { errors(slot) := base }
  }
}
