"""Recording gem5 runs: what a run is (spec), what it leaves (manifest, run directory), and the recorder and
scheduler below both runners (SE: cohtb/se, full system: cohtb/fs)."""
