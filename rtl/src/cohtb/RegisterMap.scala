package cohtb

/** Byte addresses of the CSR space. Every counter is a 64-bit slot (LO word, then HI word) read from the
  * snapshot copy, so a read never tears. The same map is written to monitor.json for the Python model,
  * the replay harness and the docs (docs/register-map.md). */
case class RegisterMap(p: MonitorParams) {
  import RegisterMap._

  val id = 0x0000
  val version = 0x0004
  /** Read-only parameter words, in this order, from 0x0008. */
  val paramWords: Seq[(String, Int)] = Seq(
    "cores" -> p.cores, "sockets" -> p.sockets, "sets" -> p.sets, "ways" -> p.ways,
    "hotEntries" -> p.hotEntries, "regions" -> p.regions, "counterWidth" -> p.counterWidth,
    "lineAddrBits" -> p.lineAddrBits, "options" -> (p.indexing.code | (p.replacement.code << 1)))
  def paramAddr(i: Int): Int = 0x0008 + 4 * i

  val ctrl = 0x0040
  val cmd = 0x0044
  val status = 0x0048
  val regionEnable = 0x004c

  def global(name: String): Int = 0x0100 + 8 * globalCounters.indexOf(name).ensuring(_ >= 0, name)
  def regionBase(r: Int): Int = 0x0400 + 16 * r
  def regionMask(r: Int): Int = 0x0400 + 16 * r + 8
  def regionCounter(r: Int, name: String): Int = 0x0800 + 64 * r + 8 * regionCounters.indexOf(name).ensuring(_ >= 0, name)
  def matrix(from: Int, to: Int): Int = 0x1000 + 8 * (from * p.sockets + to)
  def hot(k: Int, field: String): Int = 0x2000 + 32 * k + hotFields.indexOf(field).ensuring(_ >= 0, field) * 8

  def toJson: String = {
    def q(s: String) = "\"" + s + "\""
    def obj(kv: Seq[(String, String)]) = kv.map { case (k, v) => s"${q(k)}: $v" }.mkString("{", ", ", "}")
    val params = obj(Seq(
      "cores" -> p.cores.toString, "sockets" -> p.sockets.toString, "lineAddrBits" -> p.lineAddrBits.toString,
      "sets" -> p.sets.toString, "ways" -> p.ways.toString, "indexing" -> q(p.indexing.name),
      "replacement" -> q(p.replacement.name), "hotEntries" -> p.hotEntries.toString,
      "regions" -> p.regions.toString, "counterWidth" -> p.counterWidth.toString))
    val regs = obj(Seq(
      "id" -> id.toString, "version" -> version.toString, "ctrl" -> ctrl.toString, "cmd" -> cmd.toString,
      "status" -> status.toString, "regionEnable" -> regionEnable.toString,
      "params" -> obj(paramWords.zipWithIndex.map { case ((n, _), i) => n -> paramAddr(i).toString }),
      "global" -> obj(globalCounters.map(n => n -> global(n).toString)),
      "regionBase0" -> regionBase(0).toString, "regionStride" -> "16",
      "regionCounter0" -> regionCounter(0, regionCounters.head).toString, "regionCounterStride" -> "64",
      "regionCounters" -> regionCounters.map(q).mkString("[", ", ", "]"),
      "matrix0" -> matrix(0, 0).toString, "hot0" -> hot(0, hotFields.head).toString, "hotStride" -> "32",
      "hotFields" -> hotFields.map(q).mkString("[", ", ", "]")))
    obj(Seq("idValue" -> IdValue.toString, "versionValue" -> VersionValue.toString, "params" -> params, "registers" -> regs)) + "\n"
  }
}

object RegisterMap {
  val IdValue: Long = 0x434f4854L // "COHT"
  val VersionValue = 1
  /** CTRL bits. */
  val CtrlEnable = 0
  val CtrlTap = 1
  /** CMD bits (write-one). A single write may combine them: snapshot is taken before the clear. */
  val CmdSnapshot = 0
  val CmdClearCounters = 1
  val CmdClearState = 2
  /** STATUS bits. */
  val StatusSaturated = 0
  val StatusDropped = 1
  val StatusBusy = 2

  val globalCounters: Seq[String] = Seq(
    "eventsRead", "eventsWrite", "eventsEvict", "eventsFwdGets", "eventsFwdGetx", "eventsInv",
    "accepted", "dropped", "rejected",
    "transfers", "crossSocketTransfers", "invalidations", "dirtyReadsLocal", "dirtyReadsRemote",
    "stateEvictions")
  val regionCounters: Seq[String] = Seq(
    "reads", "writes", "evicts", "transfers", "crossSocketTransfers", "invalidations", "dirtyReadsLocal", "dirtyReadsRemote")
  val hotFields: Seq[String] = Seq("line", "count", "error", "valid")
}
