package cohtb

import chisel3._
import chisel3.util._

/** What one event did, handed from the line table (S6) to the monitor (S7 matches regions, S8 counts). */
class EventEffects(p: MonitorParams) extends Bundle {
  val rejected = Bool()
  val kind = UInt(EventKind.width.W)
  val line = UInt(p.lineAddrBits.W)
  val transfer = Bool()
  val crossSocket = Bool()
  val invalidations = UInt(log2Ceil(p.cores + 1).W)
  val dirtyReadLocal = Bool()
  val dirtyReadRemote = Bool()
  val stateEviction = Bool()
  val fromSocket = UInt(p.socketBits.W)
  val toSocket = UInt(p.socketBits.W)
}

/** An event the monitor accepted, as the line table takes it. */
class AcceptedEvent(p: MonitorParams) extends Bundle {
  val event = new CoherenceEvent(p)
  /** Malformed (kind, core or socket out of range): it changes no line state and counts nothing but itself. */
  val rejected = Bool()
}

/** A write of the line table's S4: the set and way, the entry written, the set's new replacement state. */
class TableWrite(p: MonitorParams) extends Bundle {
  val valid = Bool()
  val index = UInt(p.setBits.W)
  val way = UInt(p.wayBits.W)
  val entry = new LineEntry(p)
  val repl = new ReplacementState(p)
}

/** The bounded line table: the storage of the lines' states, and the forwarding that hands each event its line's
  * state as the events ahead of it left it, to the counting rules (`CountingRules`, docs/counting-rules.md).
  *
  * Seven stages of the monitor's pipeline, one event per clock, so that each clock does one thing
  * (docs/monitor.md, "Pipeline"):
  *  - S0 (the clock `in` is valid) reads the event's set: the RAMs register what they read at its end;
  *  - S1 and S2 carry what the RAMs return to S3 (a block RAM's output arrives late in the clock, and the RAMs
  *    are spread over the chip: S1's register sits beside its RAM, S2's beside S3's logic);
  *  - S3 compares the set's tags with the event's line, the set corrected first for the writes S4 made since
  *    the read;
  *  - S4 corrects for the write of the clock before (the event just ahead, whose update S3 could not see yet),
  *    applies the rules and registers the one way it changed and the replacement state (w1), which the RAMs
  *    take in the next clock: from a register, so that the rules' result does not also cross the chip to the
  *    RAMs' data inputs in the clock that works it out;
  *  - S5 and S6 count the invalidated holders; S6's register is `out`, which the monitor's S8 counts.
  * The RAMs have no reset: they are swept clean after reset and on `clearState`, one set per clock, while
  * `sweeping` tells S0 to take nothing. */
class LineTable(p: MonitorParams) extends Module {
  val io = IO(new Bundle {
    val in = Flipped(Valid(new AcceptedEvent(p)))
    val clearState = Input(Bool())
    /** The effects of the event S6 finished in the previous clock: valid in S7. */
    val out = Valid(new EventEffects(p))
    /** The line `out` carries in the next clock (S6's), for copies of that register beside its distant loads. */
    val lineAhead = Valid(UInt(p.lineAddrBits.W))
    /** A sweep is pending or running: S0 must not accept. */
    val sweeping = Output(Bool())
    /** Sweeping or an event in S1..S6. */
    val busy = Output(Bool())
  })

  val sweepPending = RegInit(true.B)
  val sweeping = RegInit(false.B)
  val sweepIndex = RegInit(0.U(p.setBits.W))

  // ---------------------------------------------------------------- S0: read the set
  def setIndex(line: UInt): UInt = p.indexing match {
    case Indexing.Modulo => line(p.setBits - 1, 0)
    case Indexing.XorFold => line.asBools.grouped(p.setBits).map(g => VecInit(g).asUInt.pad(p.setBits)).reduce(_ ^ _)
  }
  val accept = io.in.valid
  // One RAM per way and one for the replacement state, so an update writes only the way it changed
  // (narrow RAMs also keep a Verilated model from copying whole rows every clock).
  // The RAMs take S4's writes a clock late, from w1. The read of an event, registered at the end of its S0, sees
  // the writes the RAMs took up to the clock before (read-first); S3 forwards the writes S4 made since (w4..w1).
  // On an FPGA s1Read is the block RAM's own register, and the RAM write in S0's clock, w4's, may collide with the
  // read: synthesis marks these RAMs collision-don't-care (cohtb/fpga/synth.py), since S3 forwards w4.
  val wayRams = Seq.fill(p.ways)(Mem(p.sets, new LineEntry(p)))
  val replRam = Mem(p.sets, new ReplacementState(p))
  val readIndex = setIndex(io.in.bits.event.line)
  val rowRead = Wire(new SetRow(p))
  rowRead.ways := VecInit(wayRams.map(_(readIndex)))
  rowRead.repl := replRam(readIndex)

  // ---------------------------------------------------------------- S1, S2: carry the RAMs' output to S3
  // s1Read is the RAMs' own register (Yosys merges it into each ECP5 block RAM, whose output then comes late in
  // S1). S1 and S2 only register it again: nothing but a register follows a RAM that late in the clock, and
  // S2's register has the whole clock to cross the chip from the RAMs to S3's logic. None has an enable: the flow
  // moves s2Read into an ECP5 block RAM as its output register only where the RAM reads on every clock and the
  // register loads on every clock (cohtb/fpga/ebr_outreg.py).
  val s1Valid = RegNext(accept, false.B)
  val s1 = RegEnable(io.in.bits, accept)
  val s1Index = RegEnable(readIndex, accept)
  val s1Read = RegNext(rowRead)

  val s2Valid = RegNext(s1Valid, false.B)
  val s2 = RegEnable(s1, s1Valid)
  val s2Index = RegEnable(s1Index, s1Valid)
  val s2Read = RegNext(s1Read)

  val s3Valid = RegNext(s2Valid, false.B)
  val s3 = RegEnable(s2, s2Valid)
  val s3Index = RegEnable(s2Index, s2Valid)
  val s3Read = RegNext(s2Read)

  val s4Valid = RegNext(s3Valid, false.B)
  val s4 = RegEnable(s3, s3Valid)
  val s4Index = RegEnable(s3Index, s3Valid)

  // S4's writes of the last four clocks, newest first: the RAMs had not taken them when the event in S3 read its
  // set (w1 writes the RAMs in the clock after S4 made it; w4 wrote them in the clock of the read).
  val w1 = RegInit(0.U.asTypeOf(new TableWrite(p)))
  val w2 = RegNext(w1, 0.U.asTypeOf(new TableWrite(p)))
  val w3 = RegNext(w2, 0.U.asTypeOf(new TableWrite(p)))
  val w4 = RegNext(w3, 0.U.asTypeOf(new TableWrite(p)))

  // What S3 will need to know of those writes is compared here, in S2, where nothing else happens: w4, w3 and w2
  // are today's w3, w2 and w1, and w1 will be the write of the event in S4 now (its set and its line, if it writes
  // at all).
  class Written extends Bundle {
    val set = Bool()
    val line = Bool()
  }
  def written(set: Bool, line: Bool): Written = {
    val w = Wire(new Written)
    w.set := set
    w.line := line
    w
  }
  val s3ByW1 = RegEnable(written(s4Valid && s4Index === s2Index, s4.event.line === s2.event.line), s2Valid)
  val s3ByW2 = RegEnable(written(w1.valid && w1.index === s2Index, w1.entry.line === s2.event.line), s2Valid)
  val s3ByW3 = RegEnable(written(w2.valid && w2.index === s2Index, w2.entry.line === s2.event.line), s2Valid)
  val s3ByW4 = RegEnable(written(w3.valid && w3.index === s2Index, w3.entry.line === s2.event.line), s2Valid)
  // The rules' facts (CountingRules.Facts) of w2's, w3's and w4's entries are worked out here too (those of the ways
  // read are not: s2Read is still on its way from the RAMs), so that S3 picks facts beside entries instead of
  // working them out of the picked entry (a mux, then an OR over the holders, in one clock).
  val s2CoreBit = UIntToOH(s2.event.core, p.cores)
  val s3CoreBit = RegEnable(s2CoreBit, s2Valid)
  def s2Facts(e: LineEntry) = CountingRules.facts(e, s2.event.core, s2CoreBit, s2.event.socket)
  val s3W2Facts = RegEnable(s2Facts(w1.entry), s2Valid)
  val s3W3Facts = RegEnable(s2Facts(w2.entry), s2Valid)
  val s3W4Facts = RegEnable(s2Facts(w3.entry), s2Valid)

  // ---------------------------------------------------------------- S3: compare the tags
  val s3Line = s3.event.line
  val s3Row = Wire(new SetRow(p))
  val s3Hits = Wire(Vec(p.ways, Bool()))
  val s3Facts = Wire(Vec(p.ways, new CountingRules.Facts))
  def s3FactsOf(e: LineEntry) = CountingRules.facts(e, s3.event.core, s3CoreBit, s3.event.socket)
  val s3ReadFacts = s3Read.ways.map(s3FactsOf)
  /** A write S4 made since the read, what S2 compared of it with the event, and its entry's facts. */
  case class Recent(write: TableWrite, by: Written, facts: CountingRules.Facts)
  val recent = Seq(Recent(w1, s3ByW1, s3FactsOf(w1.entry)),
                   Recent(w2, s3ByW2, s3W2Facts), Recent(w3, s3ByW3, s3W3Facts), Recent(w4, s3ByW4, s3W4Facts))
  /** The newest of the recent writes to this set that `wrote`, else `read`. */
  def newest[T <: Data](wrote: TableWrite => Bool, of: Recent => T, read: T): T =
    recent.foldRight(read) { (r, older) => Mux(r.write.valid && r.by.set && wrote(r.write), of(r), older) }
  for (i <- 0 until p.ways) {
    def wroteWay(w: TableWrite) = w.way === i.U
    s3Row.ways(i) := newest(wroteWay, _.write.entry, s3Read.ways(i))
    s3Hits(i) := newest(wroteWay, r => r.write.entry.valid && r.by.line, s3Read.ways(i).valid && s3Read.ways(i).line === s3Line)
    s3Facts(i) := newest(wroteWay, _.facts, s3ReadFacts(i))
  }
  s3Row.repl := newest(_ => true.B, _.write.repl, s3Read.repl)
  // The event in S4 writes (if at all) at the end of this clock, after the reads above: S4 corrects for it in
  // the next clock, with these two compares made here.
  val s3SameSetAsS4 = s4Valid && s4Index === s3Index
  val s3SameLineAsS4 = s4.event.line === s3Line

  // ---------------------------------------------------------------- S4: the line's state, the rules, the write-back
  val s4Read = RegEnable(s3Row, s3Valid)
  val s4Hits = RegEnable(s3Hits, s3Valid)
  val s4Facts = RegEnable(s3Facts, s3Valid)
  val s4SameSetAsLast = RegEnable(s3SameSetAsS4, s3Valid)
  val s4SameLineAsLast = RegEnable(s3SameLineAsS4, s3Valid)
  val coreBit = RegEnable(s3CoreBit, s3Valid)
  val rejected = s4.rejected
  val ev = CountingRules.Event(p, s4.event, coreBit)
  // The write of the previous clock (w1) is the event just ahead's, on this set when the compare above said so.
  val lastWroteSet = w1.valid && s4SameSetAsLast
  def lastWrote(i: Int): Bool = lastWroteSet && w1.way === i.U
  val row = Wire(new SetRow(p))
  for (i <- 0 until p.ways) row.ways(i) := Mux(lastWrote(i), w1.entry, s4Read.ways(i))
  row.repl := Mux(lastWroteSet, w1.repl, s4Read.repl)
  val hitVec = (0 until p.ways).map(i => Mux(lastWrote(i), w1.entry.valid && s4SameLineAsLast, s4Hits(i)))

  // The way the event writes: its line's, if the set holds it; else, for a kind that brings a line into the table
  // (READ, WRITE), the first free way, else the victim, whose line's state a full set forgets (stateEvictions).
  val hit = hitVec.reduce(_ || _)
  val invalidVec = row.ways.map(!_.valid)
  val anyInvalid = invalidVec.reduce(_ || _)
  val victim = p.replacement match {
    case Replacement.RoundRobin => row.repl.ptr
    case Replacement.Lru => OHToUInt(row.repl.age.map(_ === (p.ways - 1).U))
  }
  val allocate = !hit && CountingRules.allocates(ev)
  val way = Mux(hit, OHToUInt(hitVec), Mux(anyInvalid, PriorityEncoder(invalidVec), victim))
  val stateEviction = allocate && !anyInvalid

  // The line's state before the event comes from one of three places: the write of the event just ahead (same
  // line), the way S3 found (unless that write replaced it), or nowhere (untracked: no owner, no holders).
  val fromLast = lastWroteSet && s4SameLineAsLast && w1.entry.valid
  val fromRead = (0 until p.ways).map(i => s4Hits(i) && !lastWrote(i)).reduce(_ || _)
  def pick[T <: Data](last: T, read: T, untracked: T): T = Mux(fromLast, last, Mux(fromRead, read, untracked))
  val readEntry = s4Read.ways.zip(s4Hits).map { case (e, h) => Mux(h, e.asUInt, 0.U) }.reduce(_ | _).asTypeOf(new LineEntry(p))
  val untracked = 0.U.asTypeOf(new LineEntry(p))
  val old = pick(w1.entry, readEntry, untracked)

  // The rules. The entry after the event: they run on each of the three and the result is picked after them, so
  // that from one event to the next on the same line (w1.entry to w1.entry) there are only the rules and one
  // choice. What the event counts is not on that loop: it comes from the rules on the state picked first.
  val readFacts = s4Facts.zip(s4Hits).map { case (f, h) => Mux(h, f.asUInt, 0.U) }.reduce(_ | _).asTypeOf(new CountingRules.Facts)
  val lastFacts = CountingRules.facts(w1.entry, ev.core, coreBit, ev.socket)
  val updated = pick(CountingRules(p, w1.entry, lastFacts, ev).next, CountingRules(p, readEntry, readFacts, ev).next,
                     CountingRules(p, untracked, CountingRules.untrackedFacts, ev).next)
  val oldFacts = pick(lastFacts, readFacts, CountingRules.untrackedFacts)
  val counts = CountingRules(p, old, oldFacts, ev).effects

  val newRepl = WireDefault(row.repl)
  if (p.replacement == Replacement.RoundRobin) {
    when(stateEviction) { newRepl.ptr := row.repl.ptr + 1.U }
  } else {
    // READ and WRITE (the kinds that allocate) make their way the youngest; EVICT and rule X do not touch the ages.
    val age = row.repl.age
    when(CountingRules.allocates(ev)) {
      for (i <- 0 until p.ways) newRepl.age(i) := Mux(i.U === way, 0.U, Mux(age(i) < age(way), age(i) + 1.U, age(i)))
    }
  }
  // A malformed event changes nothing; a well-formed one writes back its way (and the replacement state).
  val s4Write = s4Valid && !rejected && (hit || allocate)
  w1.valid := s4Write
  // The rest loads on every clock: nothing reads it while w1 is not valid, and w1's registers sit beside the RAMs
  // they write, spread over the chip: an enable from s4Write would have to reach them all in the clock that works
  // s4Write out.
  w1.index := s4Index
  w1.way := way
  w1.entry := updated
  w1.repl := newRepl

  // A malformed event counts nothing but itself (docs/counting-rules.md, "Where an event's effects are counted").
  val effects = Wire(new EventEffects(p))
  effects.rejected := rejected
  effects.kind := s4.event.kind
  effects.line := ev.line
  effects.transfer := !rejected && counts.transfer
  effects.crossSocket := !rejected && counts.crossSocket
  effects.invalidations := 0.U   // counted in S5 and S6, from `invalidated`
  val invalidated = Mux(!rejected, counts.invalidated, 0.U)
  effects.dirtyReadLocal := !rejected && counts.dirtyReadLocal
  effects.dirtyReadRemote := !rejected && counts.dirtyReadRemote
  effects.stateEviction := !rejected && stateEviction
  effects.fromSocket := counts.fromSocket
  effects.toSocket := ev.socket

  // ---------------------------------------------------------------- S5, S6: count the invalidations
  // In two halves, bytes then their sum: a 32-bit count in one clock is a chain of carry chains.
  // The registers live here, with the logic that drives them, and take their input only when an event is in the
  // stage: a Verilated model then evaluates each effect only when it applies (as continuous outputs it would
  // evaluate every effect, the invalidation count's adder tree included, on every clock).
  val s5Valid = RegNext(s4Valid, false.B)
  val s5 = RegEnable(effects, s4Valid)
  val s5Invalidated = RegEnable(invalidated, s4Valid)
  val s6Valid = RegNext(s5Valid, false.B)
  val s6 = RegEnable(s5, s5Valid)
  val s6ByteCounts = RegEnable(VecInit(s5Invalidated.asBools.grouped(8).map(b => PopCount(b)).toSeq), s5Valid)
  val counted = WireDefault(s6)
  // The byte counts add up to the popcount of `invalidated`, a `holders` vector of p.cores bits: at most p.cores,
  // which the field (log2Ceil(p.cores + 1) bits) always holds. Only the carries `+&` keeps for the general case
  // are dropped, and they are zero for every configuration (the require makes a wider vector an elaboration error).
  require(s5Invalidated.getWidth <= p.cores, "invalidated holders wider than the cores the field can count")
  counted.invalidations := s6ByteCounts.reduce(_ +& _)(counted.invalidations.getWidth - 1, 0)
  io.out.valid := RegNext(s6Valid, false.B)
  io.out.bits := RegEnable(counted, s6Valid)
  io.lineAhead.valid := s6Valid
  io.lineAhead.bits := s6.line

  // ---------------------------------------------------------------- sweep (clear state)
  when(io.clearState) { sweepPending := true.B }
  when(sweepPending && !(s1Valid || s2Valid || s3Valid || s4Valid)) {
    sweepPending := false.B
    sweeping := true.B
    sweepIndex := 0.U
  }
  when(sweeping) {
    sweepIndex := sweepIndex + 1.U
    when(sweepIndex === (p.sets - 1).U) { sweeping := false.B }
  }
  // One write port per RAM (block-RAM friendly), written from w1: the sweep runs only while S1..S4 are empty and
  // S0 is stalled (so w1 has written before it starts); its clocks without an S4 write leave nothing in w1..w4.
  val writeIndex = Mux(sweeping, sweepIndex, w1.index)
  for ((ram, i) <- wayRams.zipWithIndex) {
    when(sweeping || (w1.valid && w1.way === i.U)) { ram.write(writeIndex, Mux(sweeping, 0.U.asTypeOf(w1.entry), w1.entry)) }
  }
  when(sweeping || w1.valid) { replRam.write(writeIndex, Mux(sweeping, ReplacementState.empty(p), w1.repl)) }

  io.sweeping := sweepPending || sweeping
  io.busy := sweepPending || sweeping || s1Valid || s2Valid || s3Valid || s4Valid || s5Valid || s6Valid

  // ---------------------------------------------------------------- self-checks (SelfCheck)
  // The set as S4 sees it (RAMs, sweep and the writes since the read) must hold the invariants, and so must what S4 writes back.
  import LineTable._
  SelfCheck(!s4Valid || atMostOneHit(hitVec),
    "LineTable: two ways of a set hold the event's line (rule: one entry per line, allocation only on a miss)")
  SelfCheck(!s4Valid || row.ways.map(dirtyHasOnlyItsOwner).reduce(_ && _),
    "LineTable: a way read dirty whose holders are not exactly its owner (rules W, R, E: docs/counting-rules.md)")
  SelfCheck(!s4Write || dirtyHasOnlyItsOwner(updated),
    "LineTable: S4 wrote a dirty entry whose holders are not exactly its owner (rules W, R, E: docs/counting-rules.md)")
  if (p.replacement == Replacement.Lru) {
    SelfCheck(!s4Valid || lruAgesArePermutation(row.repl.age),
      "LineTable: a set's LRU ages read are not a permutation of 0..ways-1 (replacement rule lru)")
    SelfCheck(!s4Write || lruAgesArePermutation(newRepl.age),
      "LineTable: S4 wrote LRU ages that are not a permutation of 0..ways-1 (replacement rule lru)")
  }
}

/** The line table's invariants, as pure expressions: the self-checks assert them, and a formal harness can
  * assume them of the RAM contents and assert them of what S4 writes back. */
object LineTable {
  /** At most one way of a set holds a given line. */
  def atMostOneHit(hits: Seq[Bool]): Bool = {
    val v = VecInit(hits).asUInt
    (v & (v - 1.U)) === 0.U
  }

  /** Ages 0..ways-1 each appear once: with `ways` ages of log2(ways) bits, all present means a permutation. */
  def lruAgesArePermutation(ages: Seq[UInt]): Bool = ages.map(a => UIntToOH(a, ages.size)).reduce(_ | _).andR

  /** A dirty line has an owner, and the owner is its only holder (rule W writes it so; rule R cleans the line
    * before anyone else joins; rule E clears dirty with the owner). */
  def dirtyHasOnlyItsOwner(e: LineEntry): Bool =
    !e.dirty || (e.ownerValid && e.holders === UIntToOH(e.owner, e.holders.getWidth))
}
