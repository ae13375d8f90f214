"""Durable storage: the only package that touches files and fsync.

* ``file_log.FileLog``: the replicated log on segment files (``ReplicatedLog``), with its epoch cache
  checkpoint and crash recovery.
* ``snapshots``: snapshot file naming, raw writers/readers (``.part`` then atomic rename) and the
  record-level snapshot writer/reader.
* ``quorum_state_file.FileQuorumStateStore``: the ``quorum-state`` JSON file (``ElectionStore``).
* ``meta_properties``: ``meta.properties`` of a log directory.
* ``log_dir``: the layout of a metadata log directory.

Nothing here is imported by the consensus core; the server wires these into it.
"""
