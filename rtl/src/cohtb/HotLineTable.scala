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
  * items out of N is in the table.
  *
  * One item per clock, in three stages, so that no clock both searches and updates, and the hit that enables every
  * entry's registers comes from a register (docs/monitor.md, "Hot-line table"):
  *  - A1 compares the item's line with every entry and registers the hits;
  *  - A2 drops the hits on entries whose line changed since that compare (B's writes in A1's clock and in its
  *    own) and registers what is left, with the entries B writes in its clock and wrote in the one before where
  *    those writes were for the item's line (A1 compared it with the two items ahead);
  *  - B updates the one entry it picks.
  * The miss's victim comes without a search: an invalid entry counts as 0, so the first invalid entry is the
  * lowest-index minimum; and since an update raises one count by one, the minimum `m` is kept as it changes
  * (`isMin`: the entries at `m`). Only when the last entry at `m` rises does `m` become m + 1, with the
  * entries then at m + 1 as the new `isMin`: one equality compare per entry, not a tree of magnitude compares.
  *
  * `in` comes a clock before the item's counters count it; clear and snapshot reach B one clock after the
  * counters take them, with the items that came before them, so the table keeps the counters' order: snapshot,
  * clear, then that clock's item. */
class HotLineTable(p: MonitorParams) extends Module {
  private val n = p.hotEntries
  val io = IO(new Bundle {
    /** The item's line, in copies that synthesis keeps apart (`HotLineTable.lineCopies`): the first for A1's compares
      * with the items ahead of it, one per group of `HotLineTable.entriesPerCopy` entries for their compares. */
    val in = Flipped(Valid(Vec(HotLineTable.lineCopies(p), UInt(p.lineAddrBits.W))))
    /** CMD.clearCounters and CMD.snapshot, on the clock the counters take them. */
    val clear = Input(Bool())
    val snapshot = Input(Bool())
    /** The entries at the last snapshot. */
    val snap = Output(Vec(n, new HotLineEntry(p)))
    /** Sticky: an item clamped its count since the last clear. */
    val saturated = Output(Bool())
    /** An item is in A2 or B. */
    val busy = Output(Bool())
  })
  private val w = p.counterWidth
  private val max = p.counterMax.U(w.W)
  private val valid = RegInit(VecInit(Seq.fill(n)(false.B)))
  private val line = Reg(Vec(n, UInt(p.lineAddrBits.W)))
  /** 0 while invalid, so that the first invalid entry is the lowest-index minimum. */
  private val count = RegInit(VecInit(Seq.fill(n)(0.U(w.W))))
  private val error = Reg(Vec(n, UInt(w.W)))
  /** The smallest count, m + 1, m + 2, and the entries at m (never none). */
  private val m = RegInit(0.U(w.W))
  private val mPlus1 = RegInit(1.U(w.W))
  private val mPlus2 = RegInit(2.U(w.W))
  private val isMin = RegInit(((BigInt(1) << n) - 1).U(n.W))
  /** A miss's entry: the lowest-index one at the minimum (an invalid entry counts 0), kept beside `isMin` so that
    * the enables of a miss's entry wait for no priority encoder. */
  private val victim = RegInit(1.U(n.W))
  /** The victim after the present one has risen from m (while another entry is at m). */
  private val nextVictim = PriorityEncoderOH(isMin & ~victim)
  private def setMin(entries: UInt): Unit = {
    val atMin = WireDefault(UInt(n.W), entries)
    isMin := atMin
    victim := PriorityEncoderOH(atMin)
  }
  /** count(k) and m at their all-ones maximum, kept beside them so that no update waits for a 32-bit compare. */
  private val full = RegInit(VecInit(Seq.fill(n)(false.B)))
  private val mFull = RegInit(false.B)

  /** The entries whose line B changes in this clock (a miss's victim; all of them on a clear): A1's and A2's
    * compares of those entries are stale from the next clock on. */
  val changing = Wire(UInt(n.W))
  /** The entry B writes in this clock (one-hot, 0 if none), and the ones it wrote one and two clocks before. */
  val writing = Wire(UInt(n.W))
  val lastWrite = RegNext(writing, 0.U)

  // ---------------------------------------------------------------- A1: compare
  val inLine = io.in.bits.head
  val a2Valid = RegNext(io.in.valid, false.B)
  val a2Line = RegEnable(inLine, io.in.valid)
  val a2Hits = RegEnable(VecInit((0 until n).map(k =>
    valid(k) && line(k) === io.in.bits(1 + k / HotLineTable.entriesPerCopy))).asUInt, io.in.valid)
  val a2Stale = RegNext(changing, 0.U)

  // ---------------------------------------------------------------- A2: drop the stale hits
  /** B's valid, twice: `bValid` enables every entry's registers, `bValidForA2` is B's clock as A2's logic sees it.
    * One register would sit among the entries it enables, far from A2's logic, and leave that route and A2's logic
    * in one clock. */
  val Seq(bValid, bValidForA2) = KeptRegister.copiesWithReset(a2Valid, false.B, 2)
  /** B's line, twice: `bLine` sits among the entries a miss writes it into, `bLineBehind` beside the compares with the
    * items behind it. Both kept: Yosys merges a register into a kept copy with the same input. */
  val Seq(bLine, bLineBehind) = KeptRegister.copies(a2Line, a2Valid, 2)
  val bClear = RegNext(io.clear, false.B)
  val bSnapshot = RegNext(io.snapshot, false.B)
  /** The item equals the one in A2 while it was in A1: by the time it reaches A2, the item B updates in that clock. */
  val a2SameAsB = RegEnable(a2Valid && inLine === a2Line, io.in.valid)
  /** The item equals the one in B while it was in A1: by the time it reaches A2, the item B updated in the clock
    * before. */
  val a2SameAsLast = RegEnable(bValid && inLine === bLineBehind, io.in.valid)
  /** What A2 finds of the item for B. */
  class Found extends Bundle {
    /** The entries it hits: A1's hits, stale ones dropped, and the entries B writes in A2's clock and wrote in the
      * clock before if the item is theirs (and the latter's line has not changed since). */
    val hits = UInt(n.W)
    /** The item hits an entry. */
    val any = Bool()
  }
  /** B replaces the victim's line in this clock. */
  val replacing = Wire(Bool())
  val fresh = a2Hits & ~a2Stale
  val sameAsB = a2SameAsB
  // The entry written in the clock before changes its line now (a clear changes all; `a2SameAsLast` implies a write).
  val sameAsLast = a2SameAsLast && !(bClear || (replacing && (victim & lastWrite).orR))
  val found = Wire(new Found)
  // The entry written in the clock before is lastWrite's one bit, so "its line changes now" is that bit of `changing`:
  // per entry, without sameAsLast's OR over all of them (which stood between B's valid and every hit).
  found.hits := (fresh | Mux(a2SameAsLast, lastWrite, 0.U)) & ~changing | Mux(sameAsB, writing, 0.U)
  // (fresh & ~changing).orR, with B's clock (clear, replacing) picking among ORs of registers, not ahead of them.
  found.any := (!bClear && Mux(replacing, (fresh & ~victim).orR, fresh.orR)) || sameAsB || sameAsLast
  /** What A2 found, three times: `bFound` for the sixteen entries' enables, `bFoundForMin` for the minimum's logic
    * (isMin, clamps), which sits apart from them, `bFoundForRise` for whether m rises, which enables m, m + 1, m + 2
    * and the victim. Each copy sits beside its own loads; a register shared by two of them sits by one and leaves the
    * other a route across the table in the clock of its logic. */
  val Seq(bFound, bFoundForMin, bFoundForRise) = KeptRegister.copies(found, a2Valid, 3)

  // ---------------------------------------------------------------- B: update
  val hits = bFound.hits
  val hit = bFound.any
  val write = Mux(hit, hits, victim)
  /** The same, from the minimum's copy. */
  val minHits = bFoundForMin.hits
  val minHit = bFoundForMin.any
  val minWrite = Mux(minHit, minHits, victim)
  /** The entry written is at the minimum (always so on a miss), and its count cannot rise (so m = max). */
  val writesMin = !minHit || (minHits & isMin).orR
  val clamps = Mux(minHit, (minHits & full.asUInt).orR, mFull)
  /** One entry alone is at m: if it is the one written (`writesMin`), m rises (unless the clock clears or the count
    * clamps). */
  val soleMin = !HotLineTable.twoOrMore(isMin.asBools)
  /** The entry written is the victim: a miss, or a hit there. */
  val writesVictim = !bFoundForRise.any || (bFoundForRise.hits & victim).orR
  /** m rises (outside a clear): the same as writesMin && !clamps && soleMin, in fewer steps, since with one entry at m
    * that entry is the victim and its count is m: written iff missed or hit there, clamped iff m is the maximum. This
    * enables m, m + 1 and m + 2. */
  val rises = soleMin && !mFull && writesVictim

  // The entries at m + 1, which become the minimum's when m rises, from compares registered a clock ahead, so that
  // no clock has a compare of the counts ahead of the victim's priority encoder: against m + 1 and m + 2, for the
  // clock after m rose; the entry written in the clock before, whose count rose since, corrected.
  // A clear sets them as the table restarts: the first entry at 1 if an item came with it (m is then 0), none at 2.
  // (Not from a registered "cleared": Yosys would share that flip-flop with the counter bank's delayed clear, and one
  // flip-flop cannot sit beside both.)
  val eqMPlus1 = RegNext(Mux(bClear, Mux(bValid && (n > 1).B, 1.U(n.W), 0.U(n.W)),
    VecInit(count.map(_ === mPlus1)).asUInt), 0.U)
  val eqMPlus2 = RegNext(Mux(bClear, 0.U(n.W), VecInit(count.map(_ === mPlus2)).asUInt), 0.U)
  val mRoseLast = RegNext(bValid && !bClear && rises, false.B)
  /** The entry written in the clock before rose by one, and it rose from m. */
  val lastRose = RegNext(bValid && !bClear && !clamps, false.B)
  val lastRoseFromMin = RegNext(writesMin, false.B)
  val atMPlus1 = Mux(mRoseLast, eqMPlus2, eqMPlus1) & ~Mux(lastRose, lastWrite, 0.U) |
    Mux(lastRose && lastRoseFromMin && !mRoseLast, lastWrite, 0.U)

  // Kept here, with the clear it restarts from (an item a clear restarts the table with cannot clamp).
  private val saturated = RegInit(false.B)
  saturated := !bClear && (saturated || (bValid && clamps))
  io.saturated := saturated
  io.busy := a2Valid || bValid

  val snap = RegInit(VecInit(Seq.fill(n)(0.U.asTypeOf(new HotLineEntry(p)))))
  when(bSnapshot) {
    for (k <- 0 until n) {
      snap(k).valid := valid(k)
      snap(k).line := Mux(valid(k), line(k), 0.U)
      snap(k).count := count(k)
      snap(k).error := Mux(valid(k), error(k), 0.U)
    }
  }
  io.snap := snap

  // For A1 and A2, from A2's copy of B's valid.
  writing := Mux(bValidForA2, Mux(bClear, 1.U(n.W), write), 0.U)
  replacing := bValidForA2 && !hit
  changing := Mux(bClear, ((BigInt(1) << n) - 1).U(n.W), Mux(replacing, victim, 0.U))
  when(bClear) {
    // The table restarts with this clock's item, if any, in the first entry (a read-and-clear loses nothing).
    for (k <- 0 until n) {
      valid(k) := (k == 0).B && bValid
      count(k) := Mux((k == 0).B && bValid, 1.U, 0.U)
      full(k) := false.B
    }
    line(0) := bLine
    error(0) := 0.U
    val allAtOne = bValid && (n == 1).B
    m := Mux(allAtOne, 1.U, 0.U)
    mPlus1 := Mux(allAtOne, 2.U, 1.U)
    mPlus2 := Mux(allAtOne, 3.U, 2.U)
    mFull := false.B
    setMin(Mux(bValid && (n > 1).B, ~1.U(n.W), ((BigInt(1) << n) - 1).U(n.W)))
  }.elsewhen(bValid) {
    for (k <- 0 until n) {
      // Only a miss changes an entry's line, error and valid bit (a hit's entry already holds the line), and on a
      // miss the entry written is the minimum's: these enables need not wait for the one-hot `write`.
      when(!hit && victim(k)) {
        valid(k) := true.B
        line(k) := bLine
        error(k) := count(k)
      }
      when(write(k) && !full(k)) {
        count(k) := count(k) + 1.U
        full(k) := count(k) === (max - 1.U)
      }
    }
    when(rises) {
      // The last entry at m (so the one written) rises: the minimum is now m + 1, held by it and by those
      // already there.
      m := mPlus1
      mPlus1 := mPlus2
      mPlus2 := mPlus2 + 1.U
      mFull := mPlus1 === max
    }
    // The entries at m and the victim wait for neither writesMin nor clamps (they enabled these registers through
    // nine steps of logic): while m is the maximum every entry is at m and nothing rises; otherwise the entry
    // written leaves m, and when it was not at m it is in no bit of isMin.
    val minAfterRise = WireDefault(UInt(n.W), atMPlus1 | isMin)
    isMin := Mux(rises, minAfterRise, Mux(mFull, isMin, isMin & ~minWrite))
    // The victim changes only when it is the entry written (and rises): to the lowest of the entries at m + 1 and
    // it if it was the last at m, else to the next entry at m. No priority encoder waits for `write`.
    when(writesVictim && !mFull) { victim := Mux(soleMin, PriorityEncoderOH(minAfterRise), nextVictim) }
  }

  SelfCheck(!bValid || rises === (writesMin && !clamps && soleMin),
    "HotLineTable: m's rise worked out from the victim differs from the entry written being the last at m and not clamping")
  SelfCheck(atMPlus1 === VecInit(count.map(_ === mPlus1)).asUInt,
    "HotLineTable: the entries at m + 1 worked out from the last clock's compares differ from the counts")
  SelfCheck(!bValid || hits === VecInit((0 until n).map(k => valid(k) && line(k) === bLine)).asUInt,
    "HotLineTable: the hits B worked out from A1's compare differ from a compare with the entries as they are now")
  SelfCheck((0 until n).map(k => count(k) >= m && isMin(k) === (count(k) === m) && full(k) === (count(k) === max))
    .reduce(_ && _) && mPlus1 === m + 1.U && mPlus2 === m + 2.U && mFull === (m === max) && victim === PriorityEncoderOH(isMin),
    "HotLineTable: the kept minimum disagrees with the counts (rule: an update raises one count by one)")
}

object HotLineTable {
  /** Entries per copy of the item's line: a copy sits among the compares it feeds (one copy for all the entries
    * would be a route across the table and a compare in one clock). */
  val entriesPerCopy = 4
  def lineCopies(p: MonitorParams): Int = 1 + (p.hotEntries + entriesPerCopy - 1) / entriesPerCopy

  /** Two or more of `bits` are set: a tree of (any, two-or-more) pairs, without the carry chain of x & (x - 1). */
  def twoOrMore(bits: Seq[Bool]): Bool = {
    def go(b: Seq[Bool]): (Bool, Bool) =
      if (b.size == 1) (b.head, false.B)
      else {
        val (l, r) = b.splitAt(b.size / 2)
        val ((la, lm), (ra, rm)) = (go(l), go(r))
        (la || ra, lm || rm || (la && ra))
      }
    go(bits)._2
  }
}
