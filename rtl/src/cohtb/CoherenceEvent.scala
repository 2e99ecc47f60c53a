package cohtb

import chisel3._

/** Event kinds, as in the cohtb event file. Kinds 3..5 are gem5's own transfer evidence at the old holder:
  * the monitor counts them per kind but they do not change line state. */
object EventKind {
  val Read = 0
  val Write = 1
  val Evict = 2
  val FwdGets = 3
  val FwdGetx = 4
  val Inv = 5
  val count = 6
  val width = 3
}

/** One coherence event on the monitor's input port. */
class CoherenceEvent(p: MonitorParams) extends Bundle {
  val line = UInt(p.lineAddrBits.W)
  val core = UInt(p.coreBits.W)
  val socket = UInt(p.socketBits.W)
  val kind = UInt(EventKind.width.W)
}
