"""cohtb: a cache-coherence testbed for contended locking and data layout on multi-socket x86."""

__version__ = "0.1.0"
