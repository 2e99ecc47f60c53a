package cohtb

/** The cohtb event file (docs/event-format.md): the one definition of its header and record layout.
  * Little-endian; fields in file order with their sizes in bytes. Contract writes it to contract.json,
  * from which the C header (native/include/cohtb_contract.h) and the Python constants are generated. */
object EventFile {
  val Magic = "COHTBEVT"
  /** 2: completion-time events and the record's l1_state (version 1: issue-time events, `aux`). */
  val Version = 2
  /** Fixed part of the header; the core->socket map (numCores bytes), the source JSON (sourceLen bytes)
    * and zero padding to a multiple of HeaderAlign follow it. */
  val headerFields: Seq[(String, Int)] = Seq(
    "magic" -> 8, "version" -> 2, "header_len" -> 2, "line_size" -> 2, "num_cores" -> 2, "num_sockets" -> 2,
    "record_size" -> 2, "reserved" -> 4, "num_records" -> 8, "source_len" -> 4)
  val HeaderAlign = 8
  val recordFields: Seq[(String, Int)] = Seq(
    "tick" -> 8, "line" -> 8, "core" -> 2, "socket" -> 1, "kind" -> 1, "l1_state" -> 2, "reserved" -> 2)
  /** Codes of the record's l1_state: gem5's MESI_Two_Level L1 state before the transition; code = index.
    * `other` (0) is a state not listed here, or unknown. */
  val L1States: Seq[String] = Seq("other", "NP", "I", "S", "E", "M", "IS", "IM", "SM", "IS_I", "M_I", "SINK_WB_ACK")
  require(L1States.distinct.size == L1States.size && L1States.head == "other", "L1 state names are unique, 0 is other")
  require(L1States.forall(_.matches("[A-Za-z][A-Za-z0-9_]*")), "L1 state names are identifiers")
  val recordSize: Int = recordFields.map(_._2).sum
  /** A line address (byte address >> log2(line size)) has at most this many bits. */
  val MaxLineBits = 58
  /** Cache-line size a trace is read with unless told otherwise (gem5's x86 default). */
  val DefaultLineSize = 64
  /** The core->socket map stores one byte per core. */
  val MaxSockets = 256
  val MaxCores = 65535
}
