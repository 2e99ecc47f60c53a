package cohtb

import chisel3._
import chisel3.util._

/** What one event did, handed from the line-table stage (S1) to the counter stage (S2). */
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

/** The bounded line table and the counting rules (docs/counting-rules.md) that read and update it.
  *
  * Two stages of the monitor's pipeline, one event per clock:
  *  - S0 (the clock `in` is valid) issues the RAM reads of the event's set;
  *  - S1 applies the rules to the set and writes back the one way it changed and the replacement state;
  *    the event's effects leave through `out`, registered at the end of S1 (the monitor's S2 counts them).
  * The RAMs have no reset: they are swept clean after reset and on `clearState`, one set per clock, while
  * `sweeping` tells S0 to take nothing. */
class LineTable(p: MonitorParams) extends Module {
  val io = IO(new Bundle {
    val in = Flipped(Valid(new AcceptedEvent(p)))
    val clearState = Input(Bool())
    /** The effects of the event S1 finished in the previous clock: valid in S2. */
    val out = Valid(new EventEffects(p))
    /** A sweep is pending or running: S0 must not accept. */
    val sweeping = Output(Bool())
    /** Sweeping or an event in S1. */
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
  val wayRams = Seq.fill(p.ways)(SyncReadMem(p.sets, new LineEntry(p)))
  val replRam = SyncReadMem(p.sets, new ReplacementState(p))
  val readIndex = setIndex(io.in.bits.event.line)
  val rowRead = Wire(new SetRow(p))
  rowRead.ways := VecInit(wayRams.map(_.read(readIndex, accept)))
  rowRead.repl := replRam.read(readIndex, accept)

  // ---------------------------------------------------------------- S1: apply the rules
  val s1Valid = RegNext(accept, false.B)
  val s1Event = RegEnable(io.in.bits.event, accept)
  val s1Rejected = RegEnable(io.in.bits.rejected, accept)
  val s1Index = RegEnable(readIndex, accept)
  // The previous event's write, which the RAM read issued in the same clock did not see.
  val bypassValid = RegInit(false.B)
  val bypassIndex = Reg(UInt(p.setBits.W))
  val bypassWay = Reg(UInt(p.wayBits.W))
  val bypassEntry = Reg(new LineEntry(p))
  val bypassRepl = Reg(new ReplacementState(p))
  val bypassHit = bypassValid && bypassIndex === s1Index
  val row = Wire(new SetRow(p))
  for (i <- 0 until p.ways) row.ways(i) := Mux(bypassHit && bypassWay === i.U, bypassEntry, rowRead.ways(i))
  row.repl := Mux(bypassHit, bypassRepl, rowRead.repl)

  val ev = s1Event
  val isRead = ev.kind === EventKind.Read.U
  val isWrite = ev.kind === EventKind.Write.U
  val isEvict = ev.kind === EventKind.Evict.U
  require(EventKind.all.filter(_.changesLineState).map(_.code).toSet == Set(EventKind.Read, EventKind.Write, EventKind.Evict),
    "LineTable applies rules R, W and E: exactly the kinds that change line state (the others are rule X)")
  val hitVec = row.ways.map(w => w.valid && w.line === ev.line)
  val hit = hitVec.reduce(_ || _)
  val invalidVec = row.ways.map(!_.valid)
  val anyInvalid = invalidVec.reduce(_ || _)
  val victim = p.replacement match {
    case Replacement.RoundRobin => row.repl.ptr
    case Replacement.Lru => OHToUInt(row.repl.age.map(_ === (p.ways - 1).U))
  }
  // Only READ and WRITE bring an untracked line into the table (rows R-untracked, W-untracked);
  // EVICT and the evidence kinds of an untracked line change nothing (E-untracked, rule X).
  val allocate = !hit && (isRead || isWrite)
  val way = Mux(hit, OHToUInt(hitVec), Mux(anyInvalid, PriorityEncoder(invalidVec), victim))
  // A full set forgets its victim's state: the bounded table's stateEvictions.
  val stateEviction = allocate && !anyInvalid
  // A line the table does not hold is untracked: no owner, no holders.
  val old = Mux(hit, row.ways(way), 0.U.asTypeOf(new LineEntry(p)))

  val coreBit = UIntToOH(ev.core, p.cores)
  val ownerIsOther = old.ownerValid && old.owner =/= ev.core
  // rule W (docs/counting-rules.md): transfer when the owner is another core (rows W-other-*).
  val transfer = isWrite && ownerIsOther
  // rule R: dirty read when another core owns the line dirty (R-other-dirty, R-other-dirty-local).
  val dirtyRead = isRead && old.dirty && ownerIsOther
  // rules W and R: cross-socket / remote when the owner's socket is not the requester's.
  val remote = old.ownerSocket =/= ev.socket

  // The entry after the event; rule X (FWD_GETS, FWD_GETX, INV) leaves it as it was.
  val updated = WireDefault(old)
  updated.valid := true.B
  updated.line := ev.line
  when(isWrite) {
    // rule W: the writer is the owner, dirty, and the only holder.
    updated.ownerValid := true.B
    updated.owner := ev.core
    updated.ownerSocket := ev.socket
    updated.dirty := true.B
    updated.holders := coreBit
  }
  when(isRead) {
    // rule R: a dirty read leaves the line clean; the reader joins the holders.
    updated.dirty := old.dirty && !dirtyRead
    updated.holders := old.holders | coreBit
  }
  when(isEvict) {
    // rule E: the evicting core leaves the holders; if it was the owner the line has none.
    val ownerLeaves = old.ownerValid && old.owner === ev.core
    val holdersLeft = old.holders & ~coreBit
    updated.holders := holdersLeft
    when(ownerLeaves) {
      updated.ownerValid := false.B
      updated.dirty := false.B
    }
    // rule E: a line with no owner and no holders is freed (E-shared-holder, E-mine-dirty).
    updated.valid := holdersLeft.orR || (old.ownerValid && !ownerLeaves)
  }

  val newRepl = WireDefault(row.repl)
  if (p.replacement == Replacement.RoundRobin) {
    when(stateEviction) { newRepl.ptr := row.repl.ptr + 1.U }
  } else {
    // READ and WRITE make their way the youngest; EVICT and rule X do not touch the ages.
    val age = row.repl.age
    when(isRead || isWrite) {
      for (i <- 0 until p.ways) newRepl.age(i) := Mux(i.U === way, 0.U, Mux(age(i) < age(way), age(i) + 1.U, age(i)))
    }
  }
  // A malformed event changes nothing; a well-formed one writes back its way (and the replacement state).
  val s1Write = s1Valid && !s1Rejected && (hit || allocate)
  bypassValid := s1Write
  when(s1Write) {
    bypassIndex := s1Index
    bypassWay := way
    bypassEntry := updated
    bypassRepl := newRepl
  }

  val effects = Wire(new EventEffects(p))
  effects.rejected := s1Rejected
  effects.kind := ev.kind
  effects.line := ev.line
  effects.transfer := !s1Rejected && transfer
  effects.crossSocket := !s1Rejected && transfer && remote
  // rule W: every holder other than the writer is invalidated (the owner too while it holds the line).
  effects.invalidations := Mux(!s1Rejected && isWrite, PopCount(old.holders & ~coreBit), 0.U)
  effects.dirtyReadLocal := !s1Rejected && dirtyRead && !remote
  effects.dirtyReadRemote := !s1Rejected && dirtyRead && remote
  effects.stateEviction := !s1Rejected && stateEviction
  effects.fromSocket := old.ownerSocket
  effects.toSocket := ev.socket
  // The S1/S2 register lives here, with the logic that drives it: each effect is then one expression under
  // its own condition, which a Verilated model evaluates only when it applies (as a continuous output it
  // would evaluate every effect, the invalidation count's adder tree included, on every clock).
  io.out.valid := RegNext(s1Valid, false.B)
  io.out.bits := RegNext(effects)

  // ---------------------------------------------------------------- sweep (clear state)
  when(io.clearState) { sweepPending := true.B }
  when(sweepPending && !s1Valid) {
    sweepPending := false.B
    sweeping := true.B
    sweepIndex := 0.U
  }
  when(sweeping) {
    sweepIndex := sweepIndex + 1.U
    when(sweepIndex === (p.sets - 1).U) { sweeping := false.B }
  }
  // One write port per RAM (block-RAM friendly): the sweep runs only while S1 is empty and S0 is stalled.
  val writeIndex = Mux(sweeping, sweepIndex, s1Index)
  for ((ram, i) <- wayRams.zipWithIndex) {
    when(sweeping || (s1Write && way === i.U)) { ram.write(writeIndex, Mux(sweeping, 0.U.asTypeOf(updated), updated)) }
  }
  when(sweeping || s1Write) { replRam.write(writeIndex, Mux(sweeping, ReplacementState.empty(p), newRepl)) }

  io.sweeping := sweepPending || sweeping
  io.busy := sweepPending || sweeping || s1Valid

  // ---------------------------------------------------------------- self-checks (SelfCheck)
  // The set as S1 sees it (RAMs, sweep and bypass) must hold the invariants, and so must what S1 writes back.
  import LineTable._
  SelfCheck(!s1Valid || atMostOneHit(hitVec),
    "LineTable: two ways of a set hold the event's line (rule: one entry per line, allocation only on a miss)")
  SelfCheck(!s1Valid || row.ways.map(dirtyHasOnlyItsOwner).reduce(_ && _),
    "LineTable: a way read dirty whose holders are not exactly its owner (rules W, R, E: docs/counting-rules.md)")
  SelfCheck(!s1Write || dirtyHasOnlyItsOwner(updated),
    "LineTable: S1 wrote a dirty entry whose holders are not exactly its owner (rules W, R, E: docs/counting-rules.md)")
  if (p.replacement == Replacement.Lru) {
    SelfCheck(!s1Valid || lruAgesArePermutation(row.repl.age),
      "LineTable: a set's LRU ages read are not a permutation of 0..ways-1 (replacement rule lru)")
    SelfCheck(!s1Write || lruAgesArePermutation(newRepl.age),
      "LineTable: S1 wrote LRU ages that are not a permutation of 0..ways-1 (replacement rule lru)")
  }
}

/** The line table's invariants, as pure expressions: the self-checks assert them, and a formal harness can
  * assume them of the RAM contents and assert them of what S1 writes back. */
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
