"""Cluster metadata: record schemas, the immutable image and its replay. No I/O, no controller logic."""
