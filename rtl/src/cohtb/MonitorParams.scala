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

/** The range a parameter of the monitor must lie in: `least`..`most`, a power of two if `powerOfTwo`, and at most
  * the parameter `atMost` if given. */
case class ParamLimit(name: String, least: Int, most: Int, powerOfTwo: Boolean = false, atMost: Option[String] = None) {
  /** The rule, as the error that breaks it says it. */
  def rule: String =
    s"$name must be ${if (powerOfTwo) "a power of two, " else ""}$least..$most${atMost.fold("")(o => s" and <= $o")}"
  def admits(values: Map[String, Int]): Boolean = {
    val v = values(name)
    v >= least && v <= most && (!powerOfTwo || isPow2(v)) && atMost.forall(o => v <= values(o))
  }
}

/** Elaboration parameters of the monitor. The Python reference model reads the same set from monitor.json; the
  * defaults and the limits reach the Python side through contract.json (Contract.scala), so they are written
  * only here. */
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
  /** The integer parameters by name. */
  def intValues: Map[String, Int] = Map("cores" -> cores, "sockets" -> sockets, "lineAddrBits" -> lineAddrBits,
    "sets" -> sets, "ways" -> ways, "hotEntries" -> hotEntries, "regions" -> regions, "counterWidth" -> counterWidth)
  for (l <- MonitorParams.limits) require(l.admits(intValues), l.rule)

  val coreBits: Int = log2Ceil(cores)
  val socketBits: Int = log2Ceil(sockets).max(1)
  val setBits: Int = log2Ceil(sets)
  val wayBits: Int = log2Ceil(ways).max(1)
  /** Widest per-event increment is an invalidation of every other core. */
  val counterMax: BigInt = (BigInt(1) << counterWidth) - 1
}

object MonitorParams {
  /** The one definition of the parameters' limits (the Python side checks against their generated copy).
    * regions, sockets and hotEntries keep the CSR space's blocks apart (docs/register-map.md). */
  val limits: Seq[ParamLimit] = Seq(
    ParamLimit("cores", 2, 64),
    ParamLimit("sockets", 1, 16, atMost = Some("cores")),
    ParamLimit("lineAddrBits", 8, 58),
    ParamLimit("sets", 2, 4096, powerOfTwo = true),
    ParamLimit("ways", 2, 16, powerOfTwo = true),
    ParamLimit("hotEntries", 1, 64),
    ParamLimit("regions", 1, 16),
    ParamLimit("counterWidth", 4, 64))

  /** The defaults, as contract.json gives them: every parameter by name, the choices by their names. */
  def defaults: Seq[(String, Either[Int, String])] = {
    val d = MonitorParams()
    Seq("cores", "sockets", "lineAddrBits", "sets", "ways").map(n => n -> Left(d.intValues(n))) ++
      Seq("indexing" -> Right(d.indexing.name), "replacement" -> Right(d.replacement.name)) ++
      Seq("hotEntries", "regions", "counterWidth").map(n => n -> Left(d.intValues(n)))
  }

  /** Build from key=value pairs (the emitter's command line). */
  def fromArgs(kv: Map[String, String]): MonitorParams = {
    val d = MonitorParams()
    def int(k: String, dflt: Int) = kv.get(k).map(_.toInt).getOrElse(dflt)
    val known = defaults.map(_._1).toSet
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
