package cohtb

import java.nio.file.{Files, Path, Paths}
import scala.jdk.CollectionConverters._
import circt.stage.ChiselStage

/** Emits CoherenceMonitor SystemVerilog and monitor.json (parameters + register map) per configuration, and
  * contract.json (event kinds, event file layout, CSR constants) once.
  *
  * Usage: Emit --out=DIR [--variants=FILE] [key=value ...]
  * With --variants, each non-comment line "name key=value ..." is emitted into DIR/name;
  * otherwise the key=value arguments are emitted into DIR. */
object Emit {
  def parseKv(words: Seq[String], where: String): Map[String, String] = words.map { a =>
    a.split("=", 2) match {
      case Array(k, v) => k -> v
      case _ => throw new IllegalArgumentException(s"$where: expected key=value, got '$a'")
    }
  }.toMap

  def emit(p: MonitorParams, out: Path): Unit = {
    Files.createDirectories(out)
    ChiselStage.emitSystemVerilogFile(
      new CoherenceMonitor(p),
      args = Array("--target-dir", out.toString),
      firtoolOpts = Array(
        "-disable-all-randomization",
        "-strip-debug-info",
        // one always block per register: Verilator then orders reads before writes instead of shadowing
        // every register it reads after writing in a shared block (about 40% faster replay)
        "--emit-separate-always-blocks",
        "--lowering-options=disallowLocalVariables,disallowPackedArrays,locationInfoStyle=none"))
    Files.writeString(out.resolve("monitor.json"), RegisterMap(p).toJson)
    println(s"Emit: wrote $out")
  }

  def main(args: Array[String]): Unit = {
    def opt(name: String) = args.find(_.startsWith(s"--$name=")).map(_.stripPrefix(s"--$name="))
    val out = Paths.get(opt("out").getOrElse(sys.error("Emit: --out=DIR is required")))
    val rest = args.filterNot(_.startsWith("--")).toSeq
    Files.createDirectories(out)
    Files.writeString(out.resolve("contract.json"), Contract.toJson)
    opt("variants") match {
      case Some(file) =>
        for ((line, n) <- Files.readAllLines(Paths.get(file)).asScala.zipWithIndex;
             words = line.trim.split("\\s+").toSeq.filter(_.nonEmpty) if words.nonEmpty && !words.head.startsWith("#")) {
          val where = s"$file:${n + 1}"
          val p = try MonitorParams.fromArgs(parseKv(words.tail, where))
          catch { case e: IllegalArgumentException => sys.error(s"$where: ${e.getMessage}") }
          emit(p, out.resolve(words.head))
        }
      case None => emit(MonitorParams.fromArgs(parseKv(rest, "arguments")), out)
    }
  }
}
