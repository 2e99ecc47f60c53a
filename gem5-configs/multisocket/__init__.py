"""Multi-socket Ruby MESI_Two_Level components for gem5's standard library."""
