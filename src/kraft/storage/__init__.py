"""Durable storage: the only package that touches files and fsync.

* ``segment_log.SegmentLog``: one partition's log on segment files (offset indexes, epoch cache and
  its checkpoint, crash recovery, truncation, roll); it knows no topic, snapshot or raft rule.
* ``metadata_log.MetadataLog``: the replicated log of ``__cluster_metadata-0`` (``ReplicatedLog``): a
  ``SegmentLog`` plus snapshots.
* ``partition_log.PartitionLog``: a data partition's log (Kafka's ``UnifiedLog``): a ``SegmentLog``
  plus ``base_partition_log.BasePartitionLog`` (produce validation in ``log_validator``, idempotent
  producers in ``producer_state``, high watermark, bounded reads, time index, retention) and
  ``partition.metadata``; ``memory_partition_log.MemoryPartitionLog`` is its in-memory twin for the
  simulator. ``log_manager.LogManager`` holds a broker's partition logs across its log directories
  and their ``offset_checkpoint`` files; ``log_errors`` carries Kafka's error codes.
* ``snapshots``: snapshot file naming, raw writers/readers (``.part`` then atomic rename), the
  record-level snapshot writer/reader, and the KIP-853 bootstrap checkpoint (0-0) holding
  kraft.version and the initial voters (``write_bootstrap_voters``/``read_bootstrap_voters``).
* ``epoch_cache``: the leader epoch cache and its ``leader-epoch-checkpoint`` file.
* ``quorum_state_file.FileQuorumStateStore``: the ``quorum-state`` JSON file (``ElectionStore``).
* ``meta_properties``: ``meta.properties`` of a log directory.
* ``log_dir``: the layout of a log directory; ``partition_dir`` names a partition's directory.

Nothing here is imported by the consensus core; the server wires these into it.
"""
