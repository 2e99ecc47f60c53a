"""The FPGA flow of the monitor's emitted Verilog: its size (Yosys), and a real place and route on a Lattice ECP5
with its Fmax (Yosys + nextpnr-ecp5). It reads the RTL the monitor stage emits and nothing else of it."""
