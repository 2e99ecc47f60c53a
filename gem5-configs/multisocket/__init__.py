"""cohtb's machines as components of gem5's standard library (docs/machine.md). This file imports nothing: cohtb
loads the package's standard-library modules (json_file, machine_file, placement, topology) from their files as
modules of this package, so they read the machine and topology files by the same rules as gem5 does."""
