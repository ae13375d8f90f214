"""Durable storage: the only package that touches files and fsync.

* ``file_log.FileLog``: the replicated log on segment files (``ReplicatedLog``), with its epoch cache
  checkpoint and crash recovery.
* ``snapshots``: snapshot file naming, raw writers/readers (``.part`` then atomic rename), the
  record-level snapshot writer/reader, and the KIP-853 bootstrap checkpoint (0-0) holding
  kraft.version and the initial voters (``write_bootstrap_voters``/``read_bootstrap_voters``).
* ``quorum_state_file.FileQuorumStateStore``: the ``quorum-state`` JSON file (``ElectionStore``).
* ``meta_properties``: ``meta.properties`` of a log directory.
* ``log_dir``: the layout of a metadata log directory.

Nothing here is imported by the consensus core; the server wires these into it.
"""
