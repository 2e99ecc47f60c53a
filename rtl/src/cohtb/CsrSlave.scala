package cohtb

import chisel3._
import chisel3.util._
import scala.collection.mutable

/** `n` counters of a CounterBank, readable as consecutive 64-bit slots from byte address `base` through the
  * bank's read port (`width` bits each). */
case class BankWindow(base: Int, n: Int, width: Int) {
  val end: Int = base + 8 * n
  val indexBits: Int = log2Ceil(n).max(1)
}

/** The CSR words of a module, collected at elaboration by the module that owns the registers: what each
  * readable byte address returns and what a write to each writable one does. `attach` wires them to a
  * CsrSlave built from the same addresses. */
class CsrTable {
  private val reads = mutable.ArrayBuffer[(Int, UInt)]()
  private val writes = mutable.ArrayBuffer[(Int, UInt => Unit)]()

  /** A 32-bit word at `addr`. */
  def word(addr: Int, value: UInt): Unit = {
    require(value.getWidth <= 32, s"CSR word at 0x${addr.toHexString} is ${value.getWidth} bits wide")
    reads += addr -> value.pad(32)
  }

  /** A 64-bit slot: LO word at `addr`, HI word at `addr + 4`. */
  def slot(addr: Int, value: UInt): Unit = {
    val w = value.getWidth
    word(addr, value(31.min(w - 1), 0))
    word(addr + 4, if (w > 32) value(w - 1, 32) else 0.U(32.W))
  }

  /** What a full-strobe write of data to `addr` does (in the owner's module). */
  def onWrite(addr: Int)(action: UInt => Unit): Unit = writes += addr -> action

  def readAddrs: Seq[Int] = reads.map(_._1).toSeq
  def writeAddrs: Seq[Int] = writes.map(_._1).toSeq

  /** Drives the slave's read words and runs the write actions (in the owner's module), each on its address's bit
    * of the slave's registered decode. */
  def attach(csr: CsrSlave): Unit = {
    require(csr.readAddrs == readAddrs && csr.writeAddrs == writeAddrs, "CsrSlave built from another table")
    for ((port, (_, value)) <- csr.io.readData.zip(reads)) port := value
    when(csr.io.write.valid) {
      for (((_, action), hit) <- writes.zip(csr.io.write.bits.hits)) when(hit) { action(csr.io.write.bits.data) }
    }
  }
}

/** AXI4-Lite slave of the CSR space (docs/register-map.md): one write and one read outstanding.
  *
  * A read of a `readAddrs` word returns the matching `readData` input; a read in `window` returns the bank's
  * counter through its read port. A write with all four strobes is handed out on `write` for one clock, two
  * clocks after its handshake (the owner acts on the `writeAddrs` words), and answers OKAY if its address is one
  * of them, `responseDelay` clocks later than it could. Anything else answers SLVERR: unmapped or unaligned addresses,
  * partial strobes, writes to read-only words. */
class CsrSlave(val readAddrs: Seq[Int], val writeAddrs: Seq[Int], val window: BankWindow, responseDelay: Int,
    addrBits: Int = 16) extends Module {
  require(readAddrs.distinct.size == readAddrs.size, "register map has overlapping addresses")
  require(writeAddrs.distinct.size == writeAddrs.size, "register map has overlapping writable addresses")
  require(!readAddrs.exists(a => a >= window.base && a < window.end), "register map overlaps the counter bank")
  require(writeAddrs.nonEmpty, "a CSR space with nothing writable")

  val io = IO(new Bundle {
    val axi = new AxiLiteBundle(addrBits)
    val readData = Input(Vec(readAddrs.size, UInt(32.W)))
    val write = Valid(new Bundle {
      /** One bit per `writeAddrs` word: the write's address is that word's. */
      val hits = Vec(writeAddrs.size, Bool())
      val data = UInt(32.W)
    })
    val bank = new Bundle {
      /** The counter the pending read's address names (the read channel registers its value). */
      val readIndex = Output(UInt(window.indexBits.W))
      val readValue = Input(UInt(window.width.W))
    }
  })
  private val axi = io.axi

  // Write channel: take AW and W together, one write outstanding. BVALID rises `responseDelay` clocks later than
  // the clock after the handshake, once the write has acted wherever the owner says it takes that long.
  private val bValid = RegInit(false.B)
  private val bResp = RegInit(0.U(2.W))
  private val responding = RegInit(0.U(log2Ceil(responseDelay + 1).W))
  /** No write outstanding (!bValid, responding 0), kept as a register of its own: it alone enables the write's
    * address and data registers, which sit among their loads, far from the AXI ports. */
  private val wReady = RegInit(true.B)
  private val writeFire = axi.awvalid && axi.wvalid && wReady
  axi.awready := writeFire
  axi.wready := writeFire
  axi.bvalid := bValid
  axi.bresp := bResp
  private val bValidNext = WireDefault(bValid)
  private val respondingNext = WireDefault(responding)
  when(bValid && axi.bready) { bValidNext := false.B }

  private val fullStrobe = axi.wstrb === "b1111".U
  // The write is handed out two clocks after its handshake, decoded: the address and data are registered here,
  // then the address's bit of every writable word, so that each action in the owner starts from a register of
  // its own, and no clock both decodes and routes the write across the chip to the registers it sets.
  private val written = RegNext(writeFire && fullStrobe, false.B)
  // Taken whenever no write is outstanding: the write that fires takes its own, and they hold until it is answered.
  private val writtenAddr = RegEnable(axi.awaddr, wReady)
  private val writtenData = RegEnable(axi.wdata, wReady)
  io.write.valid := RegNext(written, false.B)
  // One register word, zero but in the clock after a write: a Verilated model then skips the compares on every
  // other clock. (The data needs no second register: the next handshake is three clocks away.)
  private val writtenHits = RegInit(0.U(writeAddrs.size.W))
  writtenHits := Mux(written, VecInit(writeAddrs.map(a => writtenAddr === a.U)).asUInt, 0.U)
  io.write.bits.hits := writtenHits.asBools
  io.write.bits.data := writtenData
  when(writeFire) {
    val writable = writeAddrs.map(a => axi.awaddr === a.U).reduce(_ || _)
    if (responseDelay == 0) bValidNext := true.B else respondingNext := responseDelay.U
    bResp := Mux(fullStrobe && writable, AxiLiteResp.Okay.U, AxiLiteResp.SlvErr.U)
  }
  when(responding =/= 0.U) {
    respondingNext := responding - 1.U
    when(responding === 1.U) { bValidNext := true.B }
  }
  bValid := bValidNext
  responding := respondingNext
  wReady := !bValidNext && respondingNext === 0.U
  SelfCheck(wReady === (!bValid && responding === 0.U), "CsrSlave: the write channel's ready differs from no write outstanding")

  // Read channel: one read outstanding; unmapped or unaligned addresses answer SLVERR. A read takes seven clocks
  // after its AR handshake, one step each: the address is registered; decoded, while the bank reads its row into
  // the block RAM's own register; two fabric registers for the row (CounterBank.ReadLatency counts the three); the
  // bank's word picked; the word picked within its group of `CsrSlave.ReadGroup` readable words; then among the
  // groups. A pick among every readable word at once is several hundred inputs wide, too deep and too spread out
  // for one clock. A read right after a CMD.snapshot sees the hot-line table's snapshot, which lands a clock after
  // the counters' (docs/monitor.md, "Pipeline").
  private val rValid = RegInit(false.B)
  private val rData = RegInit(0.U(32.W))
  private val rResp = RegInit(0.U(2.W))
  private val rAddr = RegInit(0.U(addrBits.W))
  // One bit per step in flight: the address; decoded (the bank reads its row); the bank's clocks; its word picked;
  // grouped.
  private val bankWordStage = CounterBank.ReadLatency
  private val rStage = RegInit(0.U((bankWordStage + 3).W))
  /** No read in flight (!rValid, rStage 0), kept as a register of its own: it alone enables rAddr, which has
    * hundreds of loads and sits among them. */
  private val arReady = RegInit(true.B)
  private val readFire = axi.arvalid && arReady
  axi.arready := arReady
  axi.rvalid := rValid
  axi.rdata := rData
  axi.rresp := rResp
  private val rValidNext = Mux(rStage(bankWordStage + 2), true.B, rValid && !axi.rready)
  private val rStageNext = Cat(rStage(bankWordStage + 1, 0), readFire)
  when(rValid && axi.rready) { rValid := false.B }
  rStage := rStageNext
  arReady := !rValidNext && rStageNext === 0.U
  SelfCheck(arReady === (!rValid && rStage === 0.U), "CsrSlave: ARREADY differs from no read in flight")
  // Taken whenever no read is in flight: the read that fires takes its own address, and it holds until the
  // read is answered.
  when(arReady) { rAddr := axi.araddr }

  // The bank's index taken with the address, so that the bank's pick of its flags starts from a register.
  io.bank.readIndex := RegEnable(((axi.araddr - window.base.U) >> 3)(window.indexBits - 1, 0), arReady)
  private val bankHit = rAddr >= window.base.U && rAddr < window.end.U && rAddr(1, 0) === 0.U
  private val bankSlot = io.bank.readValue.pad(64)
  private val rHits = RegEnable(VecInit(readAddrs.map(a => rAddr === a.U) :+ bankHit), rStage(0))
  private val rBankWord = RegEnable(Mux(rAddr(2), bankSlot(63, 32), bankSlot(31, 0)), rStage(bankWordStage))

  private val words = io.readData :+ rBankWord
  private val groups = words.indices.grouped(CsrSlave.ReadGroup).toSeq
  private val groupWord = RegEnable(VecInit(groups.map(g => Mux1H(g.map(rHits(_)), g.map(words(_))))), rStage(bankWordStage + 1))
  private val groupHit = RegEnable(VecInit(groups.map(g => g.map(rHits(_)).reduce(_ || _))), rStage(bankWordStage + 1))

  when(rStage(bankWordStage + 2)) {
    rValid := true.B
    rData := Mux1H(groupHit, groupWord)
    rResp := Mux(groupHit.asUInt.orR, AxiLiteResp.Okay.U, AxiLiteResp.SlvErr.U)
  }
}

object CsrSlave {
  /** Readable words picked among in one clock, before the pick among the groups. */
  val ReadGroup = 16
}
