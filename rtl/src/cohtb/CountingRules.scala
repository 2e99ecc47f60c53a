package cohtb

import chisel3._
import chisel3.util._

/** The counting rules of docs/counting-rules.md as hardware: what one event does to its line and adds to the
  * counters, from the line's state before it. The one definition in the RTL, beside the Python one
  * (`cohtb.monitor.models.apply_rules`, which the bit-exact and the ideal model share); `cocotb-tests/tb_rules.py`
  * walks every row of the table through the monitor, `tests/test_counting_rules.py` through both models.
  *
  * Pure and combinational: it neither stores nor forwards anything. Where the line's state comes from (the table's
  * RAMs, a write not yet in them, or nowhere) and when the rules run is the line table's business (`LineTable`).
  *
  * An event is by core C in socket S; O is the line's last writer (its owner), if it has one. */
object CountingRules {
  /** The event as the rules read it: its line, its kind (READ, WRITE, EVICT; any other is rule X), C (also as its
    * bit of a holders vector) and S. */
  class Event(p: MonitorParams) extends Bundle {
    val line = UInt(p.lineAddrBits.W)
    val isRead = Bool()
    val isWrite = Bool()
    val isEvict = Bool()
    val core = UInt(p.coreBits.W)
    val coreBit = UInt(p.cores.W)
    val socket = UInt(p.socketBits.W)
  }
  object Event {
    /** `e` as the rules read it, `coreBit` being `UIntToOH(e.core)` (worked out where the caller has time for it). */
    def apply(p: MonitorParams, e: CoherenceEvent, coreBit: UInt): Event = {
      val r = Wire(new Event(p))
      r.line := e.line
      r.isRead := e.kind === EventKind.Read.U
      r.isWrite := e.kind === EventKind.Write.U
      r.isEvict := e.kind === EventKind.Evict.U
      r.core := e.core
      r.coreBit := coreBit
      r.socket := e.socket
      r
    }
  }
  require(EventKind.all.filter(_.changesLineState).map(_.code).toSet == Set(EventKind.Read, EventKind.Write, EventKind.Evict),
    "the rules R, W and E cover exactly the kinds that change line state (the others are rule X)")

  /** What the rules ask of a line's state before C's event ("Line state" in docs/counting-rules.md). Each is a
    * function of the entry and of C and S alone, so a caller can work them out before it knows which entry the
    * event will find (the line table does, for every candidate). */
  class Facts extends Bundle {
    /** The line has an owner O and O != C (the states other-*). */
    val ownerIsOther = Bool()
    /** socket(O) != S: a transfer is cross-socket, a dirty read remote. */
    val remote = Bool()
    /** Rule E: the line still has an owner or a holder once C's copy is gone (else it is freed, untracked). */
    val kept = Bool()
  }
  def facts(e: LineEntry, core: UInt, coreBit: UInt, socket: UInt): Facts = {
    val f = Wire(new Facts)
    f.ownerIsOther := e.ownerValid && e.owner =/= core
    f.remote := e.ownerSocket =/= socket
    f.kept := (e.holders & ~coreBit).orR || f.ownerIsOther
    f
  }
  /** The facts of an untracked line (no owner, no holders). */
  def untrackedFacts: Facts = 0.U.asTypeOf(new Facts)

  /** What one event adds to the counters: the effect columns of the table. */
  class Effects(p: MonitorParams) extends Bundle {
    val transfer = Bool()
    val crossSocket = Bool()
    /** The holders the event invalidates; the invalidations counter counts them. */
    val invalidated = UInt(p.cores.W)
    val dirtyReadLocal = Bool()
    val dirtyReadRemote = Bool()
    /** socket(O): the socket matrix's row of a transfer. */
    val fromSocket = UInt(p.socketBits.W)
  }

  /** The line after the event (`valid` false: rule E freed it) and what the event counts. */
  class Outcome(p: MonitorParams) extends Bundle {
    val next = new LineEntry(p)
    val effects = new Effects(p)
  }

  /** Only READ and WRITE bring an untracked line into the table, and only they make its way the youngest (LRU);
    * EVICT and rule X of an untracked line change nothing and allocate nothing. */
  def allocates(ev: Event): Bool = ev.isRead || ev.isWrite

  /** The rules: event `ev` on a line whose state before is `old` (`f` its facts for `ev`; an untracked line is an
    * all-zero entry with `untrackedFacts`). */
  def apply(p: MonitorParams, old: LineEntry, f: Facts, ev: Event): Outcome = {
    val out = Wire(new Outcome(p))
    val next = out.next
    val fx = out.effects
    next := old
    next.valid := true.B
    next.line := ev.line
    fx.fromSocket := old.ownerSocket

    // The kinds are exclusive: at most one of the rules below applies. Each rule's counts are expressions of its
    // kind and the facts, its new state an assignment under its kind: the same functions written under `when` map to
    // another netlist, not the one whose timing docs/fpga-timing.md records (decision 0006, ECP5 timing closure).

    // Rule W: a WRITE whose line has an owner O != C is one transfer, cross-socket when socket(O) != S
    // (W-other-*); every holder other than C is invalidated, O too while it holds the line; then O = C, dirty,
    // holders = {C}.
    val transfer = ev.isWrite && f.ownerIsOther
    fx.transfer := transfer
    fx.crossSocket := transfer && f.remote
    fx.invalidated := Mux(ev.isWrite, old.holders & ~ev.coreBit, 0.U)
    when(ev.isWrite) {
      next.ownerValid := true.B
      next.owner := ev.core
      next.ownerSocket := ev.socket
      next.dirty := true.B
      next.holders := ev.coreBit
    }

    // Rule R: a READ while O != C holds the line dirty is one dirty read, remote when socket(O) != S
    // (R-other-dirty, R-other-dirty-local); the line is then clean; C joins the holders.
    val dirtyRead = ev.isRead && old.dirty && f.ownerIsOther
    fx.dirtyReadLocal := dirtyRead && !f.remote
    fx.dirtyReadRemote := dirtyRead && f.remote
    when(ev.isRead) {
      next.dirty := old.dirty && !f.ownerIsOther
      next.holders := old.holders | ev.coreBit
    }

    // Rule E: C leaves the holders; if C was the owner the line has none. A line with no owner and no holders is
    // freed (E-shared-holder, E-mine-dirty).
    when(ev.isEvict) {
      next.holders := old.holders & ~ev.coreBit
      when(old.ownerValid && old.owner === ev.core) {
        next.ownerValid := false.B
        next.dirty := false.B
      }
      next.valid := f.kept
    }
    // Rule X (FWD_GETS, FWD_GETX, INV): counted per kind by the monitor; no effect here, no change.
    out
  }
}
