"""Verification tools and the generators of test streams: the soak of the RTL against the model, and random
event streams, contention patterns and synthetic ProtocolTraces for the tests and benchmarks."""
