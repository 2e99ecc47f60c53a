package cohtb

/** contract.json: what crosses between the pipeline's stages, written from the definitions the hardware
  * uses (EventKind, EventFile, RegisterMap, MonitorParams' defaults and limits). `python -m cohtb.contract.codegen`
  * turns it into the C header of the ingest and the replay harness and into the Python package's constants; a test
  * holds them to it. */
object Contract {
  import Json._

  def toJson: String = {
    val kinds = EventKind.all.map(k => obj(
      "name" -> str(k.name), "code" -> num(k.code), "changesLineState" -> k.changesLineState.toString,
      "counter" -> str(RegisterMap.kindCounter(k)), "meaning" -> str(k.meaning)))
    def fields(fs: Seq[(String, Int)]) = {
      val offsets = fs.scanLeft(0)(_ + _._2)
      arr(fs.zip(offsets).map { case ((n, size), off) => obj("name" -> str(n), "offset" -> num(off), "size" -> num(size)) })
    }
    val eventFile = obj(
      "magic" -> str(EventFile.Magic), "version" -> num(EventFile.Version),
      "header" -> fields(EventFile.headerFields), "headerAlign" -> num(EventFile.HeaderAlign),
      "record" -> fields(EventFile.recordFields), "recordSize" -> num(EventFile.recordSize),
      "l1States" -> strs(EventFile.L1States),
      "maxLineBits" -> num(EventFile.MaxLineBits), "defaultLineSize" -> num(EventFile.DefaultLineSize),
      "maxCores" -> num(EventFile.MaxCores), "maxSockets" -> num(EventFile.MaxSockets))
    import RegisterMap._
    val csr = obj(
      "idValue" -> num(IdValue), "versionValue" -> num(VersionValue),
      "ctrlBits" -> obj("enable" -> num(CtrlEnable), "tap" -> num(CtrlTap)),
      "cmdBits" -> obj("snapshot" -> num(CmdSnapshot), "clearCounters" -> num(CmdClearCounters), "clearState" -> num(CmdClearState)),
      "statusBits" -> obj("saturated" -> num(StatusSaturated), "dropped" -> num(StatusDropped), "busy" -> num(StatusBusy)),
      "globalCounters" -> strs(globalCounters), "regionCounters" -> strs(regionCounters), "hotFields" -> strs(hotFields),
      "indexings" -> strs(Indexing.all.map(_.name)), "replacements" -> strs(Replacement.all.map(_.name)))
    val monitorParams = obj(
      "defaults" -> obj(MonitorParams.defaults.map { case (n, v) => n -> v.fold(i => num(i), s => str(s)) }: _*),
      "limits" -> arr(MonitorParams.limits.map(l => obj(
        "name" -> str(l.name), "least" -> num(l.least), "most" -> num(l.most), "powerOfTwo" -> l.powerOfTwo.toString,
        "atMost" -> l.atMost.fold("null")(str), "rule" -> str(l.rule)))))
    obj("contract" -> num(1), "eventKinds" -> arr(kinds), "eventFile" -> eventFile, "csr" -> csr,
      "monitorParams" -> monitorParams) + "\n"
  }
}
