package cohtb

import chisel3._
import chisel3.util._

/** One RAM row of a CounterBank: the live count and the snapshot copy. */
class CounterRow(width: Int) extends Bundle {
  val live = UInt(width.W)
  val snap = UInt(width.W)
}

/** `n` saturating counters in one RAM: one increment per clock, and a snapshot and a clear that take one
  * clock each whatever `n` is.
  *
  * Register counters cost an adder each, and a Verilated model evaluates every adder on every clock; a RAM
  * row is read and written only for the counter an event hits. A RAM cannot copy or zero all its rows in
  * one clock, so snapshot and clear are copy-on-write: three n-bit flag vectors record which halves of which
  * rows are stale, and the first increment of a row after a snapshot moves its live value into its snapshot
  * half. Within one clock the order is snapshot, then clear, then increment, as for register counters (the
  * snapshot does not see this clock's increment; the count restarts with it, so a read-and-clear loses nothing). */
class CounterBank(val n: Int, val width: Int, val deltaWidth: Int) extends Module {
  private val indexBits = log2Ceil(n).max(1)
  val io = IO(new Bundle {
    val inc = Flipped(Valid(new Bundle {
      val index = UInt(indexBits.W)
      val delta = UInt(deltaWidth.W)
    }))
    val snapshot = Input(Bool())
    val clear = Input(Bool())
    /** Snapshot value of counter readIndex, combinational (the CSR block registers it). */
    val readIndex = Input(UInt(indexBits.W))
    val readValue = Output(UInt(width.W))
    /** An increment clamped at the all-ones value this clock. */
    val saturated = Output(Bool())
  })

  private val allRows = ((BigInt(1) << n) - 1).U(n.W)
  private val rows = Mem(n, new CounterRow(width))
  /** Rows written since the last snapshot: their snap half holds the snapshot value. */
  private val touched = RegInit(0.U(n.W))
  /** Rows not written since the last clear: their live half reads as 0. After reset nothing was written. */
  private val liveZero = RegInit(allRows)
  /** Rows that were liveZero when the last snapshot was taken (meaningful only while not touched). */
  private val snapZero = RegInit(allRows)

  private def snapValue(i: UInt, row: CounterRow, touchedNow: UInt, snapZeroNow: UInt): UInt =
    Mux(touchedNow(i), row.snap, Mux(snapZeroNow(i), 0.U, row.live))

  // The snapshot comes first: untouched rows keep their live value as the snapshot.
  private val touchedNow = Mux(io.snapshot, 0.U(n.W), touched)
  private val snapZeroNow = Mux(io.snapshot, liveZero, snapZero)

  private val i = io.inc.bits.index
  private val row = rows(i)
  /** A row's live count: 0 while liveZero. */
  private def liveValue(k: UInt, r: CounterRow): UInt = Mux(liveZero(k), 0.U(width.W), r.live)
  private val liveBefore = liveValue(i, row)
  private val (sum, over) = SaturatingAdd(Mux(io.clear, 0.U(width.W), liveBefore), io.inc.bits.delta)
  private val write = io.inc.valid
  private val bit = UIntToOH(i, n)
  when(write) {
    val next = Wire(new CounterRow(width))
    next.live := sum
    next.snap := snapValue(i, row, touchedNow, snapZeroNow)
    rows(i) := next
  }
  touched := Mux(write, touchedNow | bit, touchedNow)
  snapZero := snapZeroNow
  private val liveZeroNext = Mux(write, Mux(io.clear, allRows, liveZero) & ~bit, Mux(io.clear, allRows, liveZero))
  liveZero := liveZeroNext
  io.saturated := write && over

  io.readValue := snapValue(io.readIndex, rows(io.readIndex), touched, snapZero)

  // Self-check, rule "counters only grow between clears" (docs/monitor.md): a row's live count after a clock is
  // at least what it was before unless that clock cleared the bank. Rows other than the incremented one keep
  // their RAM half, so they can only lose their count through liveZero: its bits rise only on a clear.
  SelfCheck(io.clear || (liveZeroNext & ~liveZero) === 0.U,
    "CounterBank: a row's live count dropped to 0 without a clear (rule: counters only grow between clears)")
  // The incremented row, read back the next clock through the RAM and liveZero.
  private val checkRow = RegNext(write && !io.clear, false.B)
  private val checkIndex = RegEnable(i, write)
  private val checkBefore = RegEnable(liveBefore, write)
  SelfCheck(!checkRow || liveValue(checkIndex, rows(checkIndex)) >= checkBefore,
    "CounterBank: an incremented row reads back below its count before (rule: counters only grow between clears)")
}
