"""RecordBatch v2 and control records: the bytes of the replicated log."""
