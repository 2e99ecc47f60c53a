"""Syscall-emulation runs: the workloads (workloads/*.c), natively and under gem5's SE mode."""
