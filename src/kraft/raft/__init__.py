"""The KRaft consensus core: a sans-IO state machine (no sockets, files, clocks or randomness)."""
