package cohtb

import chisel3._
import chisel3.util._
import scala.collection.mutable

/** What a region's counters count of an event in S8 (the fields of EventEffects they read). */
class RegionEffects(p: MonitorParams) extends Bundle {
  val kind = UInt(EventKind.width.W)
  val transfer = Bool()
  val crossSocket = Bool()
  val invalidations = UInt(log2Ceil(p.cores + 1).W)
  val dirtyReadLocal = Bool()
  val dirtyReadRemote = Bool()
}

/** Passive coherence monitor: counts cache-line ping-pong from a stream of coherence events.
  *
  * Pipeline, one event per clock:
  *  - S0 accepts the event (valid/ready; in tap mode ready is always high and events that arrive while
  *    the monitor is paused or clearing are dropped and counted) and hands it to the LineTable, which
  *    issues its RAM reads;
  *  - S1..S6 (LineTable) register the set, compare its tags, apply the counting rules
  *    (docs/counting-rules.md) and write back the way it changed, then count the invalidated holders; the
  *    writes of the events just ahead are forwarded, so any event order at one per clock is exact;
  *  - S7 works out which address regions the event falls in, and hands the ping-pong item to the Space-Saving
  *    hot-line table, which compares it with its entries;
  *  - S8 adds the effects to the live counters, the socket matrix and the regions (the hot-line table drops its
  *    stale hits); S9 is the hot-line table's update.
  * Counters are read from a snapshot copy over AXI4-Lite (CsrSlave; register map: RegisterMap,
  * docs/register-map.md). Invariants are checked in simulation (SelfCheck; docs/monitor.md, "Self-checks"). */
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
  val droppedAny = RegInit(false.B)
  /** The CMD bits of a CSR write, in the clock CsrSlave hands the write out (two after its handshake). */
  val cmdWrite = WireDefault(0.U.asTypeOf(new Bundle {
    val snapshot = Bool()
    val clearCounters = Bool()
    val clearState = Bool()
  }))
  // A command acts in the clock after that (monitor.json's pipeline.commandStage: three after the handshake): the
  // decode of the write gets a clock, its route here the next, and the command's fanout to every counter the next.
  val command = RegNext(cmdWrite, 0.U.asTypeOf(cmdWrite))
  val doSnapshot = command.snapshot
  val doClearCounters = command.clearCounters
  val clearStateRequest = command.clearState

  // ---------------------------------------------------------------- S0: accept; S1..S6: the line table
  val lineTable = Module(new LineTable(p))
  val stall = !enable || lineTable.io.sweeping
  event.ready := tap || !stall
  val accept = event.valid && !stall
  val drop = event.valid && stall && tap
  lineTable.io.in.valid := accept
  lineTable.io.in.bits.event := event.bits
  // Malformed events count in `rejected` and nothing else (docs/counting-rules.md, where effects are counted).
  lineTable.io.in.bits.rejected :=
    event.bits.kind >= EventKind.count.U || event.bits.core >= p.cores.U || event.bits.socket >= p.sockets.U
  lineTable.io.clearState := clearStateRequest

  // ---------------------------------------------------------------- S7: regions
  // A masked compare of the whole line address per region gets its clock, before the counters it enables.
  val s7Valid = lineTable.io.out.valid
  val s7 = lineTable.io.out.bits
  // S7's line in registers of its own beside the regions' compares and among the hot-line table's (one per group of
  // its entries): from the line table's one register, which sits by the line table, the line would cross the chip
  // and be compared in one clock.
  val s7RegionLine +: s7HotLine = KeptRegister.copies(lineTable.io.lineAhead.bits, lineTable.io.lineAhead.valid,
    1 + HotLineTable.lineCopies(p))
  /** S8 holds a valid, well-formed event in region r: one register per region, so that its counters' enables come
    * from it alone, beside them (S8's one valid register, shared by every counter, cannot sit beside them all).
    * (`!rejected` matters only where cores or sockets is not a power of two: else only a bad kind rejects, and no
    * region counter counts one.) */
  val s8CountsInRegion = RegNext(VecInit((0 until p.regions).map(r =>
    s7Valid && !s7.rejected && regionEnable(r) && (s7RegionLine & regionMask(r)) === regionBase(r))), 0.U.asTypeOf(Vec(p.regions, Bool())))

  // ---------------------------------------------------------------- S8: counters
  val s8Valid = RegNext(s7Valid, false.B)
  val s8 = RegEnable(s7, s7Valid)
  val s8Ok = s8Valid && !s8.rejected

  val csr = new CsrTable
  /** Sticky "an increment clamped" bits of the register counters; STATUS ORs them in when read. */
  val clamped = mutable.ArrayBuffer[Bool]()
  /** "An increment wrapped the count" bits of the register counters, for the self-check. */
  val wrapped = mutable.ArrayBuffer[Bool]()
  /** A saturating register counter with its snapshot copy, readable at addr; adds delta when inc.
    * Above the count, `live` holds the counter's own flags: `clamped` (sticky) and `wrapped`, the adder's
    * carry out of the count. Kept in the same register, the whole update is one expression under `inc`,
    * which a Verilated model evaluates only on the clocks that count. */
  def counter(addr: Int, inc: Bool, delta: UInt = 1.U(1.W)): Unit = {
    val w = p.counterWidth
    val max = p.counterMax.U(w.W)
    val snap = RegInit(0.U(w.W))
    val live = RegInit(0.U((w + 2).W))
    val count = live(w - 1, 0)
    when(doSnapshot) { snap := count }
    when(doClearCounters) {
      // A clear restarts the count with this clock's increment, so a read-and-clear (snapshot|clear) loses
      // nothing: the snapshot holds what came before this clock, the counter what comes from it on.
      live := Mux(inc, Mux(delta > max, Cat(1.U(1.W), 0.U(1.W), max), delta.pad(w + 2)), 0.U)
    }.elsewhen(inc) {
      // Besides a clear, an add that wraps is the one update that leaves the count below its value before
      // (a clamp gives the maximum): its carry lands in `wrapped`, which a self-check watches.
      live := Mux(count > max - delta, Cat(1.U(1.W), live(w), max), Cat(live(w + 1), live(w, 0) + delta))
    }
    clamped += live(w + 1)
    wrapped += live(w)
    csr.slot(addr, snap)
  }

  // The counters of docs/counting-rules.md, "Where an event's effects are counted".
  def global(name: String, inc: Bool, delta: UInt = 1.U(1.W)): Unit = counter(rm.global(name), inc, delta)
  for (k <- EventKind.all) global(kindCounter(k), s8Ok && s8.kind === k.code.U)
  global("accepted", s8Valid)
  global("dropped", drop)
  global("rejected", s8Valid && s8.rejected)
  global("transfers", s8Valid && s8.transfer)
  global("crossSocketTransfers", s8Valid && s8.crossSocket)
  global("invalidations", s8Valid && s8.invalidations =/= 0.U, s8.invalidations)
  global("dirtyReadsLocal", s8Valid && s8.dirtyReadLocal)
  global("dirtyReadsRemote", s8Valid && s8.dirtyReadRemote)
  global("stateEvictions", s8Valid && s8.stateEviction)

  // Each region's counters count from a copy of S8's effects of their own, which synthesis keeps apart: from the
  // one S8 register the invalidation count would cross the chip before each region's add and clamp, in one clock.
  val s7ForRegions = Wire(new RegionEffects(p))
  s7ForRegions.kind := s7.kind
  s7ForRegions.transfer := s7.transfer
  s7ForRegions.crossSocket := s7.crossSocket
  s7ForRegions.invalidations := s7.invalidations
  s7ForRegions.dirtyReadLocal := s7.dirtyReadLocal
  s7ForRegions.dirtyReadRemote := s7.dirtyReadRemote
  val s8ForRegion = KeptRegister.copies(s7ForRegions, s7Valid, p.regions)
  for ((e, r) <- s8ForRegion.zipWithIndex) {
    val in = s8CountsInRegion(r)
    // Per kind only reads, writes and evicts; the evidence kinds (rule X) count globally only.
    val incs = Seq(
      e.kind === EventKind.Read.U, e.kind === EventKind.Write.U, e.kind === EventKind.Evict.U,
      e.transfer, e.crossSocket, e.invalidations =/= 0.U, e.dirtyReadLocal, e.dirtyReadRemote)
    val deltas = Seq.fill(5)(1.U(1.W)) ++ Seq(e.invalidations) ++ Seq.fill(2)(1.U(1.W))
    for (((name, inc), delta) <- regionCounters.zip(incs).zip(deltas)) {
      counter(rm.regionCounter(r, name), in && inc, delta)
    }
  }
  // One check for all register counters: a Verilated model evaluates an assert every clock, so the per-counter
  // work stays in the counters' own updates (each sets its `wrapped` bit) and this reads one bit of each.
  SelfCheck(!wrapped.reduce(_ || _),
    "a register counter wrapped below its value before without a clear (rule: counters only grow between clears)")
  // The socket matrix: at most one increment per event, so one RAM row per counter (CounterBank).
  val matrix = Module(new CounterBank(p.sockets * p.sockets, p.counterWidth, 1))
  matrix.io.snapshot := doSnapshot
  matrix.io.clear := doClearCounters
  matrix.io.inc.valid := s8Valid && s8.transfer
  matrix.io.inc.bits.index := (s8.fromSocket * p.sockets.U + s8.toSocket)(matrix.io.inc.bits.index.getWidth - 1, 0)
  matrix.io.inc.bits.delta := 1.U
  // s8 is s7 registered: S7's index is the one S8's increment carries.
  matrix.io.indexAhead := (s7.fromSocket * p.sockets.U + s7.toSocket)(matrix.io.inc.bits.index.getWidth - 1, 0)

  val hot = Module(new HotLineTable(p))
  // The item goes in a clock before the counters count it: the table compares it in S7, beside the regions, drops
  // its stale hits in S8 and updates in S9.
  hot.io.in.valid := s7Valid && (s7.transfer || s7.dirtyReadLocal || s7.dirtyReadRemote)
  hot.io.in.bits := VecInit(s7HotLine)
  hot.io.clear := doClearCounters
  hot.io.snapshot := doSnapshot
  for ((e, k) <- hot.io.snap.zipWithIndex) {
    csr.slot(rm.hot(k, "line"), e.line)
    csr.slot(rm.hot(k, "count"), e.count)
    csr.slot(rm.hot(k, "error"), e.error)
    csr.slot(rm.hot(k, "valid"), e.valid.asUInt)
  }

  when(drop) { droppedAny := true.B }
  when(doClearCounters) {
    // As the counters: the flag restarts with this clock's news. (The bank and the hot-line table keep their own
    // "saturated" flags, with their own clear, a clock later.)
    droppedAny := drop
  }
  busy := lineTable.io.busy || s7Valid || s8Valid || matrix.io.busy || hot.io.busy || command.asUInt.orR

  // ---------------------------------------------------------------- CSR space (AXI4-Lite slave)
  csr.word(rm.id, IdValue.U(32.W))
  csr.word(rm.version, VersionValue.U(32.W))
  for (((_, v), i) <- rm.paramWords.zipWithIndex) csr.word(rm.paramAddr(i), v.U(32.W))
  csr.word(rm.ctrl, Cat(tap, enable))
  csr.word(rm.cmd, 0.U(32.W))
  csr.word(rm.status, Cat(busy, droppedAny, matrix.io.saturated || hot.io.saturated || clamped.reduce(_ || _)))
  csr.word(rm.regionEnable, regionEnable)
  for (r <- 0 until p.regions) {
    csr.slot(rm.regionBase(r), regionBase(r))
    csr.slot(rm.regionMask(r), regionMask(r))
  }

  csr.onWrite(rm.ctrl) { d => enable := d(CtrlEnable); tap := d(CtrlTap) }
  csr.onWrite(rm.cmd) { d =>
    cmdWrite.snapshot := d(CmdSnapshot); cmdWrite.clearCounters := d(CmdClearCounters); cmdWrite.clearState := d(CmdClearState)
  }
  csr.onWrite(rm.regionEnable) { d => regionEnable := d(p.regions - 1, 0) }
  // A line address wider than 32 bits is written as two words; each write keeps the other word.
  val la = p.lineAddrBits
  def setLo(x: UInt, d: UInt): UInt = if (la > 32) Cat(x(la - 1, 32), d) else d(la - 1, 0)
  def setHi(x: UInt, d: UInt): UInt = if (la > 32) Cat(d(la - 33, 0), x(31, 0)) else x
  for (r <- 0 until p.regions) {
    csr.onWrite(rm.regionBase(r)) { d => regionBase(r) := setLo(regionBase(r), d) }
    csr.onWrite(rm.regionBase(r) + 4) { d => regionBase(r) := setHi(regionBase(r), d) }
    csr.onWrite(rm.regionMask(r)) { d => regionMask(r) := setLo(regionMask(r), d) }
    csr.onWrite(rm.regionMask(r) + 4) { d => regionMask(r) := setHi(regionMask(r), d) }
  }

  // Matrix slots are consecutive 64-bit words from rm.matrix(0, 0), read from the bank's RAM.
  val matrixWindow = BankWindow(rm.matrix(0, 0), matrix.n, matrix.width)
  // A write is answered once it has acted everywhere: a command acts CommandStage clocks after the handshake, and
  // in the hot-line table and the counter bank a clock later still.
  val csrSlave = Module(new CsrSlave(csr.readAddrs, csr.writeAddrs, matrixWindow, responseDelay = Pipeline.CommandStage))
  csrSlave.io.axi <> s_axil
  csr.attach(csrSlave)
  matrix.io.readIndex := csrSlave.io.bank.readIndex
  csrSlave.io.bank.readValue := matrix.io.readValue
}
