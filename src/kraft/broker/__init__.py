"""Broker nodes: the metadata log's consumers (a raft observer replaying into ``MetadataImage``),
their lifecycle against the active controller, and the client-facing API handlers over the image."""
