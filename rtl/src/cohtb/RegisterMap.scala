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

  /** Every 64-bit counter slot: (address, group, index path, counter name). */
  def counterSlots: Seq[(Int, String, Seq[Int], String)] =
    globalCounters.map(n => (global(n), "global", Seq.empty[Int], n)) ++
      (0 until p.regions).flatMap(r => regionCounters.map(n => (regionCounter(r, n), "regions", Seq(r), n))) ++
      (for (s <- 0 until p.sockets; d <- 0 until p.sockets) yield (matrix(s, d), "matrix", Seq(s, d), "transfers")) ++
      (0 until p.hotEntries).flatMap(k => hotFields.map(f => (hot(k, f), "hot", Seq(k), f)))

  /** monitor.json: this configuration's parameters and every register address, listed explicitly so that no
    * reader recomputes the map. */
  def toJson: String = {
    import Json._
    val params = obj(
      "cores" -> num(p.cores), "sockets" -> num(p.sockets), "lineAddrBits" -> num(p.lineAddrBits),
      "sets" -> num(p.sets), "ways" -> num(p.ways), "indexing" -> str(p.indexing.name),
      "replacement" -> str(p.replacement.name), "hotEntries" -> num(p.hotEntries),
      "regions" -> num(p.regions), "counterWidth" -> num(p.counterWidth))
    val slots = counterSlots.map { case (addr, group, index, name) =>
      obj("addr" -> num(addr), "group" -> str(group), "index" -> arr(index.map(i => num(i))), "name" -> str(name))
    }
    val regs = obj(
      "id" -> num(id), "version" -> num(version), "ctrl" -> num(ctrl), "cmd" -> num(cmd),
      "status" -> num(status), "regionEnable" -> num(regionEnable),
      "params" -> obj(paramWords.zipWithIndex.map { case ((n, _), i) => n -> num(paramAddr(i)) }: _*),
      "paramValues" -> obj(paramWords.map { case (n, v) => n -> num(v) }: _*),
      "regionBase" -> arr((0 until p.regions).map(r => num(regionBase(r)))),
      "regionMask" -> arr((0 until p.regions).map(r => num(regionMask(r)))),
      "counters" -> ("[\n  " + slots.mkString(",\n  ") + "]"))
    val pipeline = obj("writeStage" -> num(Pipeline.WriteStage), "countStage" -> num(Pipeline.CountStage),
      "lastStage" -> num(Pipeline.LastStage), "commandStage" -> num(Pipeline.CommandStage))
    obj("params" -> params, "pipeline" -> pipeline, "registers" -> regs) + "\n"
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
  /** The first global counters count events per kind, in kind order ("eventsFwdGets" for FWD_GETS). */
  def kindCounter(kind: EventKindInfo): String =
    "events" + kind.name.split("_").map(w => s"${w.head}${w.tail.toLowerCase}").mkString
  require(globalCounters.take(EventKind.count) == EventKind.all.map(kindCounter), "per-kind counters follow EventKind")
  val regionCounters: Seq[String] = Seq(
    "reads", "writes", "evicts", "transfers", "crossSocketTransfers", "invalidations", "dirtyReadsLocal", "dirtyReadsRemote")
  val hotFields: Seq[String] = Seq("line", "count", "error", "valid")
}
