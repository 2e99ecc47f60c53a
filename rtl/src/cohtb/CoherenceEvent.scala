package cohtb

import chisel3._

/** One kind of coherence event: its code on the monitor's port and in the event file. */
case class EventKindInfo(name: String, code: Int, changesLineState: Boolean, meaning: String)

/** Event kinds: the one definition. Ingest (C), the replay harness, the Python models and the docs take them
  * from contract.json, which Contract writes from this table. */
object EventKind {
  // Completion-time events (docs/event-format.md): the L1 transition at which gem5's L2 has granted the line,
  // so the events of one line come in the order the L2 granted it.
  val all: Seq[EventKindInfo] = Seq(
    EventKindInfo("READ", 0, changesLineState = true,
      "a load (not an Ifetch) obtains the data: Data_all_Acks, DataS_fromL1 or Data_Exclusive in IS or IS_I (IS_I: an EVICT follows at the same tick)"),
    EventKindInfo("WRITE", 1, changesLineState = true,
      "a store obtains M: Data_all_Acks IM>M, Ack_all SM>M, or the silent upgrade Store E>M"),
    EventKindInfo("EVICT", 2, changesLineState = true,
      "the copy is gone: L1_Replacement S>I, WB_Ack M_I>I / SINK_WB_ACK>I (a writeback the L2 accepted), or a recall: Inv in E or M"),
    EventKindInfo("FWD_GETS", 3, changesLineState = false, "gem5 evidence at the old holder: Fwd_GETS, any state"),
    EventKindInfo("FWD_GETX", 4, changesLineState = false, "gem5 evidence at the old holder: Fwd_GETX, any state"),
    EventKindInfo("INV", 5, changesLineState = false,
      "gem5 evidence at a sharer: Inv in S or SM (another core's write, which completes after it, or a recall of a shared line)"))
  require(all.map(_.code) == all.indices, "event kind codes are 0..n-1 in table order")

  private def code(name: String): Int = all.find(_.name == name).get.code
  val Read: Int = code("READ")
  val Write: Int = code("WRITE")
  val Evict: Int = code("EVICT")
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
