// Mill build of the Chisel coherence monitor (Mill 0.12.17, Scala 2.13.16, Chisel 7).
import mill._, scalalib._

object rtl extends ScalaModule {
  def scalaVersion = "2.13.16"
  val chiselVersion = "7.14.0"
  def ivyDeps = Agg(mvn"org.chipsalliance::chisel:$chiselVersion")
  def scalacPluginIvyDeps = Agg(mvn"org.chipsalliance:::chisel-plugin:$chiselVersion")
  def scalacOptions = Seq("-language:reflectiveCalls", "-deprecation", "-feature", "-Xcheckinit", "-Ymacro-annotations")
}
