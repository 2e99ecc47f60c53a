package cohtb

import chisel3.util.{isPow2, log2Ceil}

/** How a line address picks its set in the bounded line table. */
sealed abstract class Indexing(val name: String, val code: Int)
object Indexing {
  /** Low bits of the line address. */
  case object Modulo extends Indexing("modulo", 0)
  /** XOR of all set-index-wide chunks of the line address (spreads strided layouts). */
  case object XorFold extends Indexing("xorfold", 1)
  val all: Seq[Indexing] = Seq(Modulo, XorFold)
  def parse(s: String): Indexing = all.find(_.name == s).getOrElse(throw new IllegalArgumentException(s"indexing: unknown '$s'"))
}

/** Which valid way a full set gives up to a new line. */
sealed abstract class Replacement(val name: String, val code: Int)
object Replacement {
  /** A per-set pointer that advances each time a valid way is replaced. */
  case object RoundRobin extends Replacement("roundrobin", 0)
  /** True LRU by per-way ages; READ and WRITE touch a way, EVICT does not. */
  case object Lru extends Replacement("lru", 1)
  val all: Seq[Replacement] = Seq(RoundRobin, Lru)
  def parse(s: String): Replacement = all.find(_.name == s).getOrElse(throw new IllegalArgumentException(s"replacement: unknown '$s'"))
}

/** Elaboration parameters of the monitor. The Python reference model reads the same set from monitor.json. */
case class MonitorParams(
    cores: Int = 32,
    sockets: Int = 8,
    lineAddrBits: Int = 42,
    sets: Int = 64,
    ways: Int = 4,
    indexing: Indexing = Indexing.Modulo,
    replacement: Replacement = Replacement.RoundRobin,
    hotEntries: Int = 16,
    regions: Int = 8,
    counterWidth: Int = 32) {
  require(cores >= 2 && cores <= 64, "cores must be 2..64")
  require(sockets >= 1 && sockets <= 16 && sockets <= cores, "sockets must be 1..16 and <= cores")
  require(lineAddrBits >= 8 && lineAddrBits <= 58, "lineAddrBits must be 8..58")
  require(isPow2(sets) && sets >= 2 && sets <= 4096, "sets must be a power of two, 2..4096")
  require(isPow2(ways) && ways >= 2 && ways <= 16, "ways must be a power of two, 2..16")
  require(hotEntries >= 1 && hotEntries <= 64, "hotEntries must be 1..64")
  require(regions >= 1 && regions <= 16, "regions must be 1..16")
  require(counterWidth >= 4 && counterWidth <= 64, "counterWidth must be 4..64")

  val coreBits: Int = log2Ceil(cores)
  val socketBits: Int = log2Ceil(sockets).max(1)
  val setBits: Int = log2Ceil(sets)
  val wayBits: Int = log2Ceil(ways).max(1)
  /** Widest per-event increment is an invalidation of every other core. */
  val counterMax: BigInt = (BigInt(1) << counterWidth) - 1
}

object MonitorParams {
  /** Build from key=value pairs (the emitter's command line). */
  def fromArgs(kv: Map[String, String]): MonitorParams = {
    val d = MonitorParams()
    def int(k: String, dflt: Int) = kv.get(k).map(_.toInt).getOrElse(dflt)
    val known = Set("cores", "sockets", "lineAddrBits", "sets", "ways", "indexing", "replacement", "hotEntries", "regions", "counterWidth")
    kv.keys.filterNot(known).foreach(k => throw new IllegalArgumentException(s"unknown parameter '$k' (known: ${known.toSeq.sorted.mkString(", ")})"))
    MonitorParams(
      cores = int("cores", d.cores),
      sockets = int("sockets", d.sockets),
      lineAddrBits = int("lineAddrBits", d.lineAddrBits),
      sets = int("sets", d.sets),
      ways = int("ways", d.ways),
      indexing = kv.get("indexing").map(Indexing.parse).getOrElse(d.indexing),
      replacement = kv.get("replacement").map(Replacement.parse).getOrElse(d.replacement),
      hotEntries = int("hotEntries", d.hotEntries),
      regions = int("regions", d.regions),
      counterWidth = int("counterWidth", d.counterWidth))
  }
}
