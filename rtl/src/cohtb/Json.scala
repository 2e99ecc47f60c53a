package cohtb

/** Just enough JSON writing for the emitted descriptions (no dependency for a few objects and arrays). */
object Json {
  def str(s: String): String = "\"" + s.flatMap {
    case '"' => "\\\""
    case '\\' => "\\\\"
    case c if c < ' ' => f"\\u${c.toInt}%04x"
    case c => c.toString
  } + "\""
  def obj(kv: (String, String)*): String = kv.map { case (k, v) => s"${str(k)}: $v" }.mkString("{", ", ", "}")
  def arr(vs: Iterable[String]): String = vs.mkString("[", ", ", "]")
  def strs(vs: Iterable[String]): String = arr(vs.map(str))
  def num(v: BigInt): String = v.toString
}
