package cohtb

import chisel3._

/** One kind of coherence event: its code on the monitor's port and in the event file. */
case class EventKindInfo(name: String, code: Int, changesLineState: Boolean, meaning: String)

/** Event kinds: the one definition. Ingest (C), the replay harness, the Python models and the docs take them
  * from contract.json, which Contract writes from this table. */
object EventKind {
  val all: Seq[EventKindInfo] = Seq(
    EventKindInfo("READ", 0, changesLineState = true, "load miss (GETS): L1Cache Load in NP or I"),
    EventKindInfo("WRITE", 1, changesLineState = true, "store or locked RMW needing exclusive permission (GETX or upgrade): L1Cache Store in NP, I or S"),
    EventKindInfo("EVICT", 2, changesLineState = true, "the line leaves this core's L1 by replacement: L1_Replacement in S, E or M"),
    EventKindInfo("FWD_GETS", 3, changesLineState = false, "gem5 evidence at the old holder: Fwd_GETS"),
    EventKindInfo("FWD_GETX", 4, changesLineState = false, "gem5 evidence at the old holder: Fwd_GETX"),
    EventKindInfo("INV", 5, changesLineState = false, "gem5 evidence at a holder: Inv"))
  require(all.map(_.code) == all.indices, "event kind codes are 0..n-1 in table order")

  private def code(name: String): Int = all.find(_.name == name).get.code
  val Read: Int = code("READ")
  val Write: Int = code("WRITE")
  val Evict: Int = code("EVICT")
  val FwdGets: Int = code("FWD_GETS")
  val FwdGetx: Int = code("FWD_GETX")
  val Inv: Int = code("INV")
  val count: Int = all.size
  val width: Int = 3
  require(count < (1 << width), "kind codes must leave room for rejected (malformed) codes")
}

/** One coherence event on the monitor's input port. */
class CoherenceEvent(p: MonitorParams) extends Bundle {
  val line = UInt(p.lineAddrBits.W)
  val core = UInt(p.coreBits.W)
  val socket = UInt(p.socketBits.W)
  val kind = UInt(EventKind.width.W)
}
