package cohtb

import chisel3._

/** AXI4-Lite slave port with flat AMBA signal names, so the Verilog ports read s_axil_awaddr etc.
  * (what cocotbext-axi's AxiLiteBus.from_prefix and most FPGA tools expect). */
class AxiLiteBundle(val addrBits: Int) extends Bundle {
  val awaddr = Input(UInt(addrBits.W))
  val awprot = Input(UInt(3.W))
  val awvalid = Input(Bool())
  val awready = Output(Bool())
  val wdata = Input(UInt(32.W))
  val wstrb = Input(UInt(4.W))
  val wvalid = Input(Bool())
  val wready = Output(Bool())
  val bresp = Output(UInt(2.W))
  val bvalid = Output(Bool())
  val bready = Input(Bool())
  val araddr = Input(UInt(addrBits.W))
  val arprot = Input(UInt(3.W))
  val arvalid = Input(Bool())
  val arready = Output(Bool())
  val rdata = Output(UInt(32.W))
  val rresp = Output(UInt(2.W))
  val rvalid = Output(Bool())
  val rready = Input(Bool())
}

object AxiLiteResp {
  val Okay = 0
  val SlvErr = 2
}
