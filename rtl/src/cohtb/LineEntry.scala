package cohtb

import chisel3._

/** What the monitor remembers of one tracked line (docs/counting-rules.md: last writer, dirty, holders). */
class LineEntry(p: MonitorParams) extends Bundle {
  val valid = Bool()
  val line = UInt(p.lineAddrBits.W)
  val ownerValid = Bool()
  val owner = UInt(p.coreBits.W)
  val ownerSocket = UInt(p.socketBits.W)
  val dirty = Bool()
  val holders = UInt(p.cores.W)
}

/** A set's replacement state. */
class ReplacementState(p: MonitorParams) extends Bundle {
  /** LRU ages (0 = most recent); a permutation of 0..ways-1. */
  val age = Vec(p.ways, UInt(p.wayBits.W))
  /** Round-robin victim pointer. */
  val ptr = UInt(p.wayBits.W)
}

object ReplacementState {
  /** The state of a cleared set: ages 0..ways-1, pointer 0. */
  def empty(p: MonitorParams): ReplacementState = {
    val r = Wire(new ReplacementState(p))
    r.age.zipWithIndex.foreach { case (a, i) => a := i.U }
    r.ptr := 0.U
    r
  }
}

/** One set of the line table as S4 sees it: its ways plus replacement state. */
class SetRow(p: MonitorParams) extends Bundle {
  val ways = Vec(p.ways, new LineEntry(p))
  val repl = new ReplacementState(p)
}
