package cohtb

import chisel3._

/** What the monitor remembers of one tracked line (DESIGN.md: last writer, dirty, holders). */
class LineEntry(p: MonitorParams) extends Bundle {
  val valid = Bool()
  val line = UInt(p.lineAddrBits.W)
  val ownerValid = Bool()
  val owner = UInt(p.coreBits.W)
  val ownerSocket = UInt(p.socketBits.W)
  val dirty = Bool()
  val holders = UInt(p.cores.W)
}

/** One set of the line table: its ways plus replacement state, read and written as one memory row. */
class SetRow(p: MonitorParams) extends Bundle {
  val ways = Vec(p.ways, new LineEntry(p))
  /** LRU ages (0 = most recent); a permutation of 0..ways-1. */
  val age = Vec(p.ways, UInt(p.wayBits.W))
  /** Round-robin victim pointer. */
  val ptr = UInt(p.wayBits.W)
}

object SetRow {
  /** The row a cleared set holds: no valid way, ages 0..ways-1, pointer 0. */
  def empty(p: MonitorParams): SetRow = {
    val r = Wire(new SetRow(p))
    r.ways.foreach { w => w := 0.U.asTypeOf(w) }
    r.age.zipWithIndex.foreach { case (a, i) => a := i.U }
    r.ptr := 0.U
    r
  }
}
