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
  * snapshot does not see this clock's increment; the count restarts with it, so a read-and-clear loses nothing).
  *
  * An increment takes three clocks, so that no clock both reads the RAM and adds, and its row is read a clock
  * before them, from `indexAhead`: the RAM's own register, its output register and one in the fabric carry the row
  * to the third clock, which adds (straight from the output register, the add's logic would share its clock with
  * the route from the RAM to the adder). The RAM takes the new row a clock later, from a register (w1), so
  * that the add does not drive the RAM's data inputs. The read cannot see the four increments before: the second
  * clock takes the newest of the three it can see (w1..w3 then) instead of the read, into `olderRow`, and the third
  * adds to it and, in parallel, to the row just made (w1 now), picking the sum after, so that the loop of
  * back-to-back increments of one row is an add, its clamp and a two-way pick (not a five-way pick, then the add).
  * Snapshot and clear reach the third clock two clocks after they come, with the increment that came with them,
  * which keeps the order above. */
class CounterBank(val n: Int, val width: Int, val deltaWidth: Int) extends Module {
  private val indexBits = log2Ceil(n).max(1)
  val io = IO(new Bundle {
    val inc = Flipped(Valid(new Bundle {
      val index = UInt(indexBits.W)
      val delta = UInt(deltaWidth.W)
    }))
    /** The index `inc` carries in the next clock, when it is valid then (its row is read a clock early). */
    val indexAhead = Input(UInt(indexBits.W))
    val snapshot = Input(Bool())
    val clear = Input(Bool())
    /** Snapshot value of counter readIndex, ReadLatency clocks after readIndex. */
    val readIndex = Input(UInt(indexBits.W))
    val readValue = Output(UInt(width.W))
    /** Sticky: an increment clamped at the all-ones value since the last clear. */
    val saturated = Output(Bool())
    /** An increment is in its second clock. */
    val busy = Output(Bool())
  })

  private val allRows = ((BigInt(1) << n) - 1).U(n.W)
  private val rows = Mem(n, new CounterRow(width))
  /** Rows written since the last snapshot: their snap half holds the snapshot value. */
  private val touched = RegInit(0.U(n.W))
  /** Rows not written since the last clear: their live half reads as 0. After reset nothing was written. */
  private val liveZero = RegInit(allRows)
  /** Rows that were liveZero when the last snapshot was taken (meaningful only while not touched). */
  private val snapZero = RegInit(allRows)

  // ---------------------------------------------------------------- first and second clock: read the row
  /** A write of the third clock: the row, its index, what it wrote. */
  class RowWrite extends Bundle {
    val valid = Bool()
    val index = UInt(indexBits.W)
    val row = new CounterRow(width)
  }
  private val w1 = RegInit(0.U.asTypeOf(new RowWrite))   // made in the clock before; the RAM takes it now
  private val w2 = RegNext(w1, 0.U.asTypeOf(new RowWrite))  // and the one before that
  private val w3 = RegNext(w2, 0.U.asTypeOf(new RowWrite))
  private val w4 = RegNext(w3, 0.U.asTypeOf(new RowWrite))  // the RAM took it in the clock of the read

  private val bValid = RegNext(io.inc.valid, false.B)
  private val write = RegNext(bValid, false.B)
  // The increment's index, a kept copy for each of its groups of loads (the three 1-of-n picks of the flags below,
  // the rest): Yosys would merge an ordinary register with the same input into a kept copy.
  private val Seq(bIndex, liveZeroIndex, touchedIndex, snapZeroIndex) = KeptRegister.copies(io.inc.bits.index, io.inc.valid, 4)
  private val bDelta = RegEnable(io.inc.bits.delta, io.inc.valid)
  private val i = RegEnable(bIndex, bValid)   // the third clock's index
  private val bRow = RegNext(RegNext(rows(io.indexAhead)))   // the RAM's own register, then its output register
  // Which of the writes the second clock sees hit this row, compared in the first (w1, w2, w3 then are the add of
  // this clock, w1 and w2 now): a kept copy per slice of the row's bits it picks, as `sameAsNow` below.
  private val slices = (2 * width + CounterBank.ForwardSlice - 1) / CounterBank.ForwardSlice
  private val olderFrom = KeptRegister.copies(
    Cat(write && i === io.inc.bits.index, w1.valid && w1.index === io.inc.bits.index,
      w2.valid && w2.index === io.inc.bits.index), io.inc.valid, slices)
  private val snapshotB = RegNext(io.snapshot, false.B)
  private val clearB = RegNext(io.clear, false.B)

  private val delta = RegEnable(bDelta, bValid)
  // The row as the writes w1..w3 left it (the newest that hit it; olderFrom's bits are w3..w1's, low to high),
  // else as read: in the fabric, beside the add. w4 in the third clock is w3 now.
  private val olderRow = RegNext(CounterBank.sliced(olderFrom, 0, 2 * width) { (k, lo, hi) =>
    Seq(w1, w2, w3).zip(olderFrom(k).asBools.reverse)
      .foldRight(bRow.asUInt(hi, lo)) { case ((w, wrote), older) => Mux(wrote, w.row.asUInt(hi, lo), older) }
  }.asTypeOf(new CounterRow(width)))
  // The row's flags as they stand in the second clock; the third corrects them for the clock between. Each 1-of-n
  // pick has its own copy of the index, beside it: one register for all three can sit beside none of them.
  private val flagsRead =
    RegEnable(VecInit(liveZero(liveZeroIndex), touched(touchedIndex), snapZero(snapZeroIndex)), bValid)
  private val snapshot = RegNext(snapshotB, false.B)
  private val clear = RegNext(clearB, false.B)
  // What the read missed: the third clock's writes and clears of the two clocks after it, compared a clock ahead.
  /** The third clock writes this row now (w1 then); a kept copy for the flags, and one per slice of the row's bits
    * for the pick between w1 and the older row (one register for all 64 would sit beside the compare, far from them). */
  private val sameAsNow +: fromW1 = KeptRegister.copies(write && i === bIndex, bValid, 1 + slices)
  /** The third clock cleared the bank now, took a snapshot now. */
  private val clearedNow = RegEnable(clear, bValid)
  private val snappedNow = RegEnable(snapshot, bValid)
  /** The add starts from 0: the third clock clears (clearB now), or the row's live half reads 0 by then. Worked out
    * here from the same inputs as `liveZeroI` below, so that the third clock's add waits for no flag logic. */
  private val addFromZero =
    RegEnable(clearB || (!(write && i === bIndex) && (clear || liveZero(liveZeroIndex))), bValid)
  io.busy := bValid || write

  // ---------------------------------------------------------------- third clock: add and write back
  // The row: w1's when the clock before wrote it, else the older row; the add is made on both, and picked after.
  private def pickRow(w1Bits: UInt, olderBits: UInt, offset: Int): UInt =
    CounterBank.sliced(fromW1, offset, w1Bits.getWidth) { (k, lo, hi) =>
      Mux(fromW1(k).asBool, w1Bits(hi - offset, lo - offset), olderBits(hi - offset, lo - offset))
    }
  private val row = pickRow(w1.row.asUInt, olderRow.asUInt, 0).asTypeOf(new CounterRow(width))
  // The snapshot comes first: untouched rows keep their live value as the snapshot.
  private val touchedNow = Mux(snapshot, 0.U(n.W), touched)
  private val snapZeroNow = Mux(snapshot, liveZero, snapZero)

  /** A row's live count: 0 while liveZero. */
  private def liveValue(k: UInt, r: CounterRow): UInt = Mux(liveZero(k), 0.U(width.W), r.live)
  // The row's flags without a 1-of-n pick in this clock: as the second clock read them, then what the clock
  // between did (its snapshot first, then its clear, then its write, as in every clock): a write clears liveZero
  // and sets touched, a clear sets liveZero, a snapshot clears touched and copies liveZero into snapZero.
  private val Seq(liveZeroB, touchedB, snapZeroB) = flagsRead.toSeq
  private val liveZeroI = !sameAsNow && (clearedNow || liveZeroB)
  private val touchedI = sameAsNow || (!snappedNow && touchedB)
  private val snapZeroI = Mux(snappedNow, liveZeroB, snapZeroB)
  private val liveBefore = Mux(liveZeroI, 0.U(width.W), row.live)
  private val (sumW1, overW1) = SaturatingAdd(w1.row.live, delta)
  private val (sumOlder, overOlder) = SaturatingAdd(olderRow.live, delta)
  // The live half is the row's high bits (CounterRow's first field): its slices' copies pick the sum.
  private val sum = Mux(addFromZero, delta.pad(width)(width - 1, 0), pickRow(sumW1, sumOlder, width))
  private val over = !addFromZero && Mux(sameAsNow, overW1, overOlder)
  private val bit = UIntToOH(i, n)
  private val next = Wire(new CounterRow(width))
  next.live := sum
  // The snapshot half: the snapshot value as this clock's snapshot leaves it (touched: the snap half; else 0
  // while snapZero; else the live half).
  next.snap := Mux(!snapshot && touchedI, row.snap, Mux(Mux(snapshot, liveZeroI, snapZeroI), 0.U, row.live))
  // The RAM takes the new row from w1, so that the add's result does not also spread to the block RAMs' data inputs
  // in the clock that works it out; w1's row and index load on every clock, only its valid says whether there is a
  // write.
  w1.valid := write
  w1.index := i
  w1.row := next
  when(w1.valid) { rows(w1.index) := w1.row }
  touched := Mux(write, touchedNow | bit, touchedNow)
  snapZero := snapZeroNow
  private val liveZeroNext = Mux(write, Mux(clear, allRows, liveZero) & ~bit, Mux(clear, allRows, liveZero))
  liveZero := liveZeroNext
  // Kept here, with the clear it restarts from (it restarts with this clock's news, as the counters do).
  private val saturated = RegInit(false.B)
  saturated := Mux(clear, false.B, saturated) || (write && over)
  io.saturated := saturated

  // The CSR read: the row and its flags as they stand in one clock, registered ReadLatency times (on an FPGA the
  // first is the block RAM's own register, the second its output register, which the flow gives it), then the
  // snapshot value. The row as it stands is the RAM's, or w1's when the RAM takes w1 in this clock: that write is
  // taken from w1 (kept beside the RAM's read, picked in the last clock), which also makes the RAM's reads
  // collision-don't-care on an FPGA (cohtb/fpga/synth.py; the increment's read takes the same write from w4).
  private def delayed[T <: Data](x: T, clocks: Int = CounterBank.ReadLatency): T =
    (0 until clocks).foldLeft(x)((r, _) => RegNext(r))
  private val pending = w1.valid && w1.index === io.readIndex
  private val wasPending = (1 until CounterBank.ReadLatency).foldLeft(pending)((r, _) => RegNext(r, false.B))
  private val pendingRow = delayed(RegEnable(w1.row, pending), CounterBank.ReadLatency - 2)
  private val ramRow = delayed(rows(io.readIndex), CounterBank.ReadLatency - 1)
  private val readRow = RegNext(Mux(wasPending, pendingRow, ramRow))
  private val readTouched = delayed(touched(io.readIndex))
  private val readSnapZero = delayed(snapZero(io.readIndex))
  io.readValue := Mux(readTouched, readRow.snap, Mux(readSnapZero, 0.U, readRow.live))

  // Self-check, rule "counters only grow between clears" (docs/monitor.md): a row's live count after a clock is
  // at least what it was before unless that clock cleared the bank. Rows other than the incremented one keep
  // their RAM half, so they can only lose their count through liveZero: its bits rise only on a clear.
  SelfCheck(clear || (liveZeroNext & ~liveZero) === 0.U,
    "CounterBank: a row's live count dropped to 0 without a clear (rule: counters only grow between clears)")
  SelfCheck(!write || addFromZero === (clear || liveZeroI),
    "CounterBank: the add's start worked out a clock ahead differs from the row's flags and the clear")
  // The incremented row, read back through the RAM (which takes it a clock later) and liveZero, two clocks on.
  private val checkRow = RegNext(RegNext(write && !clear, false.B) && !clear, false.B)
  private val checkIndex = RegNext(RegEnable(i, write))
  private val checkBefore = RegNext(RegEnable(liveBefore, write))
  SelfCheck(!checkRow || liveValue(checkIndex, rows(checkIndex)) >= checkBefore,
    "CounterBank: an incremented row reads back below its count before (rule: counters only grow between clears)")
}

object CounterBank {
  /** Bits of a row whose choice of source (the read or a write just made) comes from one register. */
  val ForwardSlice = 16

  /** Bits `offset` until `offset + width` of a row cut in slices of ForwardSlice bits, one per copy of the choice
    * that picks them: `part(k, lo, hi)` makes the row's bits lo..hi, all in slice k. High bits first. */
  def sliced(copies: Seq[UInt], offset: Int, width: Int)(part: (Int, Int, Int) => UInt): UInt =
    Cat(copies.indices.reverse.flatMap { k =>
      val (lo, hi) = ((k * ForwardSlice).max(offset), ((k + 1) * ForwardSlice).min(offset + width) - 1)
      Option.when(lo <= hi)(part(k, lo, hi))
    })

  /** Clocks from a CSR read's index to its value. */
  val ReadLatency = 3
}
