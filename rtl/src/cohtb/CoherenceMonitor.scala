package cohtb

import chisel3._
import chisel3.util._
import scala.collection.mutable

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

/** Passive coherence monitor: counts cache-line ping-pong from a stream of coherence events.
  *
  * Pipeline, one event per clock:
  *  - S0 accepts the event (valid/ready; in tap mode ready is always high and events that arrive while
  *    the monitor is paused or clearing are dropped and counted) and issues the line-table RAM reads;
  *  - S1 applies DESIGN.md's rules to the set and writes back the way it changed and the replacement
  *    state; a one-entry bypass covers the read-during-write of back-to-back events on the same set;
  *  - S2 adds the effects to the live counters, the socket matrix, the address regions and the
  *    Space-Saving hot-line table.
  * Counters are read from a snapshot copy over AXI4-Lite (register map: RegisterMap, docs/register-map.md). */
class CoherenceMonitor(val p: MonitorParams) extends Module {
  override def desiredName = "CoherenceMonitor"
  private val rm = RegisterMap(p)
  import RegisterMap._

  val event = IO(Flipped(Decoupled(new CoherenceEvent(p))))
  val s_axil = IO(new AxiLiteBundle(16))
  val busy = IO(Output(Bool()))

  // ---------------------------------------------------------------- control state
  val enable = RegInit(true.B)
  val tap = RegInit(false.B)
  val regionEnable = RegInit(0.U(p.regions.W))
  val regionBase = RegInit(VecInit(Seq.fill(p.regions)(0.U(p.lineAddrBits.W))))
  val regionMask = RegInit(VecInit(Seq.fill(p.regions)(0.U(p.lineAddrBits.W))))
  val saturated = RegInit(false.B)
  val droppedAny = RegInit(false.B)
  val doSnapshot = WireDefault(false.B)
  val doClearCounters = WireDefault(false.B)
  val clearStateRequest = WireDefault(false.B)
  // The line table is a RAM without reset: it is swept clean after reset and on CMD.clearState.
  val sweepPending = RegInit(true.B)
  val sweeping = RegInit(false.B)
  val sweepIndex = RegInit(0.U(p.setBits.W))

  // ---------------------------------------------------------------- S0: accept
  val stall = !enable || sweepPending || sweeping
  event.ready := tap || !stall
  val accept = event.valid && !stall
  val drop = event.valid && stall && tap

  def setIndex(line: UInt): UInt = p.indexing match {
    case Indexing.Modulo => line(p.setBits - 1, 0)
    case Indexing.XorFold => line.asBools.grouped(p.setBits).map(g => VecInit(g).asUInt.pad(p.setBits)).reduce(_ ^ _)
  }
  val rejectedIn = event.bits.kind >= EventKind.count.U || event.bits.core >= p.cores.U || event.bits.socket >= p.sockets.U

  // The line table: one RAM per way and one for the replacement state, so an update writes only the way
  // it changed (narrow RAMs also keep a Verilated model from copying whole rows every clock).
  val wayRams = Seq.fill(p.ways)(SyncReadMem(p.sets, new LineEntry(p)))
  val replRam = SyncReadMem(p.sets, new ReplacementState(p))
  val readIndex = setIndex(event.bits.line)
  val rowRead = Wire(new SetRow(p))
  rowRead.ways := VecInit(wayRams.map(_.read(readIndex, accept)))
  rowRead.repl := replRam.read(readIndex, accept)

  // ---------------------------------------------------------------- S1: line state
  val s1Valid = RegNext(accept, false.B)
  val s1Event = RegEnable(event.bits, accept)
  val s1Rejected = RegEnable(rejectedIn, accept)
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
  val hitVec = row.ways.map(w => w.valid && w.line === ev.line)
  val hit = hitVec.reduce(_ || _)
  val invalidVec = row.ways.map(!_.valid)
  val anyInvalid = invalidVec.reduce(_ || _)
  val victim = p.replacement match {
    case Replacement.RoundRobin => row.repl.ptr
    case Replacement.Lru => OHToUInt(row.repl.age.map(_ === (p.ways - 1).U))
  }
  val allocate = !hit && (isRead || isWrite)
  val way = Mux(hit, OHToUInt(hitVec), Mux(anyInvalid, PriorityEncoder(invalidVec), victim))
  val stateEviction = allocate && !anyInvalid
  val old = Mux(hit, row.ways(way), 0.U.asTypeOf(new LineEntry(p)))

  val coreBit = UIntToOH(ev.core, p.cores)
  val ownerIsOther = old.ownerValid && old.owner =/= ev.core
  val transfer = isWrite && ownerIsOther
  val dirtyRead = isRead && old.dirty && ownerIsOther
  val remote = old.ownerSocket =/= ev.socket

  val updated = WireDefault(old)
  updated.valid := true.B
  updated.line := ev.line
  when(isWrite) {
    updated.ownerValid := true.B
    updated.owner := ev.core
    updated.ownerSocket := ev.socket
    updated.dirty := true.B
    updated.holders := coreBit
  }
  when(isRead) {
    updated.dirty := old.dirty && !dirtyRead
    updated.holders := old.holders | coreBit
  }
  when(isEvict) {
    val ownerLeaves = old.ownerValid && old.owner === ev.core
    val holdersLeft = old.holders & ~coreBit
    updated.holders := holdersLeft
    when(ownerLeaves) {
      updated.ownerValid := false.B
      updated.dirty := false.B
    }
    updated.valid := holdersLeft.orR || (old.ownerValid && !ownerLeaves)
  }

  val newRepl = WireDefault(row.repl)
  if (p.replacement == Replacement.RoundRobin) {
    when(stateEviction) { newRepl.ptr := row.repl.ptr + 1.U }
  } else {
    val age = row.repl.age
    when(isRead || isWrite) {
      for (i <- 0 until p.ways) newRepl.age(i) := Mux(i.U === way, 0.U, Mux(age(i) < age(way), age(i) + 1.U, age(i)))
    }
  }
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
  effects.invalidations := Mux(!s1Rejected && isWrite, PopCount(old.holders & ~coreBit), 0.U)
  effects.dirtyReadLocal := !s1Rejected && dirtyRead && !remote
  effects.dirtyReadRemote := !s1Rejected && dirtyRead && remote
  effects.stateEviction := !s1Rejected && stateEviction
  effects.fromSocket := old.ownerSocket
  effects.toSocket := ev.socket

  // ---------------------------------------------------------------- sweep of the line table
  when(clearStateRequest) { sweepPending := true.B }
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

  // ---------------------------------------------------------------- S2: counters
  val s2Valid = RegNext(s1Valid, false.B)
  val s2 = RegNext(effects)
  val s2Ok = s2Valid && !s2.rejected

  /** Readable 32-bit words of the CSR space: byte address -> value. */
  val readable = mutable.ArrayBuffer[(Int, UInt)]()
  def readable64(addr: Int, value: UInt): Unit = {
    readable += addr -> value(31.min(value.getWidth - 1), 0).pad(32)
    readable += (addr + 4) -> (if (value.getWidth > 32) value(value.getWidth - 1, 32).pad(32) else 0.U(32.W))
  }
  /** Sticky "an increment clamped" bits of the register counters; STATUS ORs them in when read. */
  val clamped = mutable.ArrayBuffer[Bool]()
  /** A saturating register counter with its snapshot copy, readable at addr; adds delta when inc.
    * The top bit of `live` is the counter's own clamped flag: kept in the same register, the whole update
    * is one expression under `inc`, which a Verilated model evaluates only on the clocks that count. */
  def counter(addr: Int, inc: Bool, delta: UInt = 1.U(1.W)): Unit = {
    val w = p.counterWidth
    val max = p.counterMax.U(w.W)
    val snap = RegInit(0.U(w.W))
    val live = RegInit(0.U((w + 1).W))
    when(doSnapshot) { snap := live(w - 1, 0) }
    when(doClearCounters) {
      live := 0.U
    }.elsewhen(inc) {
      live := Mux(live(w - 1, 0) > max - delta, Cat(1.U(1.W), max), live + delta)
    }
    clamped += live(w)
    readable64(addr, snap)
  }

  val kinds = Seq(EventKind.Read, EventKind.Write, EventKind.Evict, EventKind.FwdGets, EventKind.FwdGetx, EventKind.Inv)
  for ((k, name) <- kinds.zip(globalCounters.take(EventKind.count))) counter(rm.global(name), s2Ok && s2.kind === k.U)
  counter(rm.global("accepted"), s2Valid)
  counter(rm.global("dropped"), drop)
  counter(rm.global("rejected"), s2Valid && s2.rejected)
  counter(rm.global("transfers"), s2Valid && s2.transfer)
  counter(rm.global("crossSocketTransfers"), s2Valid && s2.crossSocket)
  counter(rm.global("invalidations"), s2Valid && s2.invalidations =/= 0.U, s2.invalidations)
  counter(rm.global("dirtyReadsLocal"), s2Valid && s2.dirtyReadLocal)
  counter(rm.global("dirtyReadsRemote"), s2Valid && s2.dirtyReadRemote)
  counter(rm.global("stateEvictions"), s2Valid && s2.stateEviction)

  for (r <- 0 until p.regions) {
    val in = s2Ok && regionEnable(r) && (s2.line & regionMask(r)) === regionBase(r)
    val incs = Seq(
      s2.kind === EventKind.Read.U, s2.kind === EventKind.Write.U, s2.kind === EventKind.Evict.U,
      s2.transfer, s2.crossSocket, s2.invalidations =/= 0.U, s2.dirtyReadLocal, s2.dirtyReadRemote)
    val deltas = Seq.fill(5)(1.U(1.W)) ++ Seq(s2.invalidations) ++ Seq.fill(2)(1.U(1.W))
    for (((name, inc), delta) <- regionCounters.zip(incs).zip(deltas)) counter(rm.regionCounter(r, name), in && inc, delta)
  }
  // The socket matrix: at most one increment per event, so one RAM row per counter (CounterBank).
  val matrix = Module(new CounterBank(p.sockets * p.sockets, p.counterWidth, 1))
  matrix.io.snapshot := doSnapshot
  matrix.io.clear := doClearCounters
  when(matrix.io.saturated) { saturated := true.B }
  matrix.io.inc.valid := s2Valid && s2.transfer
  matrix.io.inc.bits.index := (s2.fromSocket * p.sockets.U + s2.toSocket)(matrix.io.inc.bits.index.getWidth - 1, 0)
  matrix.io.inc.bits.delta := 1.U

  val hot = Module(new HotLineTable(p))
  hot.io.in.valid := s2Valid && (s2.transfer || s2.dirtyReadLocal || s2.dirtyReadRemote)
  hot.io.in.bits := s2.line
  hot.io.clear := doClearCounters
  when(hot.io.saturated) { saturated := true.B }
  val hotSnap = RegEnable(hot.io.entries, VecInit(Seq.fill(p.hotEntries)(0.U.asTypeOf(new HotLineEntry(p)))), doSnapshot)
  for ((e, k) <- hotSnap.zipWithIndex) {
    readable64(rm.hot(k, "line"), e.line)
    readable64(rm.hot(k, "count"), e.count)
    readable64(rm.hot(k, "error"), e.error)
    readable64(rm.hot(k, "valid"), e.valid.asUInt)
  }

  when(drop) { droppedAny := true.B }
  when(doClearCounters) {
    saturated := false.B
    droppedAny := false.B
  }
  busy := sweepPending || sweeping || s1Valid || s2Valid

  // ---------------------------------------------------------------- CSR bus (AXI4-Lite slave)
  readable += rm.id -> IdValue.U(32.W)
  readable += rm.version -> VersionValue.U(32.W)
  for (((_, v), i) <- rm.paramWords.zipWithIndex) readable += rm.paramAddr(i) -> v.U(32.W)
  readable += rm.ctrl -> Cat(tap, enable).pad(32)
  readable += rm.cmd -> 0.U(32.W)
  readable += rm.status -> Cat(busy, droppedAny, saturated || clamped.reduce(_ || _)).pad(32)
  readable += rm.regionEnable -> regionEnable.pad(32)
  for (r <- 0 until p.regions) {
    readable64(rm.regionBase(r), regionBase(r))
    readable64(rm.regionMask(r), regionMask(r))
  }
  require(readable.map(_._1).distinct.size == readable.size, "register map has overlapping addresses")

  val axi = s_axil
  // Write channel: take AW and W together, one write outstanding.
  val bValid = RegInit(false.B)
  val bResp = RegInit(0.U(2.W))
  val writeFire = axi.awvalid && axi.wvalid && !bValid
  axi.awready := writeFire
  axi.wready := writeFire
  axi.bvalid := bValid
  axi.bresp := bResp
  when(bValid && axi.bready) { bValid := false.B }

  val wAddr = axi.awaddr
  val wData = axi.wdata
  /** Writable word addresses and what a write to each does. */
  val writable = mutable.ArrayBuffer[(Int, () => Unit)]()
  writable += rm.ctrl -> (() => { enable := wData(CtrlEnable); tap := wData(CtrlTap) })
  writable += rm.cmd -> (() => {
    doSnapshot := wData(CmdSnapshot); doClearCounters := wData(CmdClearCounters); clearStateRequest := wData(CmdClearState)
  })
  writable += rm.regionEnable -> (() => regionEnable := wData(p.regions - 1, 0))
  def setLo(x: UInt): UInt = if (p.lineAddrBits > 32) Cat(x(p.lineAddrBits - 1, 32), wData) else wData(p.lineAddrBits - 1, 0)
  def setHi(x: UInt): UInt = if (p.lineAddrBits > 32) Cat(wData(p.lineAddrBits - 33, 0), x(31, 0)) else x
  for (r <- 0 until p.regions) {
    writable += rm.regionBase(r) -> (() => regionBase(r) := setLo(regionBase(r)))
    writable += (rm.regionBase(r) + 4) -> (() => regionBase(r) := setHi(regionBase(r)))
    writable += rm.regionMask(r) -> (() => regionMask(r) := setLo(regionMask(r)))
    writable += (rm.regionMask(r) + 4) -> (() => regionMask(r) := setHi(regionMask(r)))
  }
  val writeOk = WireDefault(false.B)
  when(writeFire && axi.wstrb === "b1111".U) {
    for ((addr, action) <- writable) when(wAddr === addr.U) { writeOk := true.B; action() }
  }
  when(writeFire) {
    bValid := true.B
    bResp := Mux(writeOk, AxiLiteResp.Okay.U, AxiLiteResp.SlvErr.U)
  }

  // Read channel: one read outstanding; unmapped or unaligned addresses answer SLVERR.
  val rValid = RegInit(false.B)
  val rData = RegInit(0.U(32.W))
  val rResp = RegInit(0.U(2.W))
  val readFire = axi.arvalid && !rValid
  axi.arready := !rValid
  axi.rvalid := rValid
  axi.rdata := rData
  axi.rresp := rResp
  when(rValid && axi.rready) { rValid := false.B }
  // Matrix slots are consecutive 64-bit words from rm.matrix(0, 0), read from the bank's RAM.
  val matrixBase = rm.matrix(0, 0)
  val matrixEnd = matrixBase + 8 * matrix.n
  require(!readable.exists { case (a, _) => a >= matrixBase && a < matrixEnd }, "register map overlaps the matrix")
  matrix.io.readIndex := ((axi.araddr - matrixBase.U) >> 3)(matrix.io.readIndex.getWidth - 1, 0)
  val matrixHit = axi.araddr >= matrixBase.U && axi.araddr < matrixEnd.U && axi.araddr(1, 0) === 0.U
  val matrixSlot = matrix.io.readValue.pad(64)
  val matrixWord = Mux(axi.araddr(2), matrixSlot(63, 32), matrixSlot(31, 0))
  when(readFire) {
    val hits = readable.toSeq.map { case (a, _) => axi.araddr === a.U } :+ matrixHit
    rValid := true.B
    rData := Mux1H(hits, readable.toSeq.map(_._2) :+ matrixWord)
    rResp := Mux(hits.reduce(_ || _), AxiLiteResp.Okay.U, AxiLiteResp.SlvErr.U)
  }
}
