package cohtb

/** Where an event is in the monitor's pipeline, as clocks after the one that accepted it (S0), and when a CMD
  * write acts: what the ports show of the pipeline (monitor.json's "pipeline"; the cocotb CSR tests and the
  * replay test check these black-box). The stages themselves: docs/monitor.md, "Pipeline". */
object Pipeline {
  /** The line table works out the event's write-back of its set (LineTable's S4; the RAMs take it a clock later). */
  val WriteStage = 4
  /** The counters count it (CoherenceMonitor's S8; the line table's `out` is S7, where regions are matched). */
  val CountStage = 8
  /** The monitor's last stage: the hot-line table's update, a stage after the counters' (it compares in S7, beside
    * the regions, and drops its stale hits in S8); `busy` falls in the clock after it. */
  val LastStage = CountStage + 1
  /** Clocks from the AXI handshake of a CMD write to the clock the command acts in: CsrSlave hands the write out
    * two clocks later (address registered, then decoded), CoherenceMonitor registers the command. */
  val CommandStage = 3
}
