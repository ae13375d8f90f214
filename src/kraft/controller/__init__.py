"""The quorum controller: a sans-IO state machine that turns requests into metadata records."""
