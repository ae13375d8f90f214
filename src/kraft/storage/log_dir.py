"""The layout of a metadata log directory (``metadata.log.dir``)::

<log dir>/meta.properties                      kraft.storage.meta_properties
<log dir>/__cluster_metadata-0/                the partition directory
    00000000000000000000.log ...               kraft.storage.file_log (no .index/.timeindex)
    leader-epoch-checkpoint
    <offset>-<epoch>.checkpoint                kraft.storage.snapshots
    quorum-state                               kraft.storage.quorum_state_file
"""

from __future__ import annotations

import os
from pathlib import Path

from kraft.common.errors import StorageError
from kraft.raft.types import METADATA_PARTITION, METADATA_TOPIC
from kraft.storage.meta_properties import MetaProperties, read_meta_properties
from kraft.storage.quorum_state_file import QUORUM_STATE_FILE

PARTITION_DIR_NAME = f"{METADATA_TOPIC}-{METADATA_PARTITION}"


def partition_dir(log_dir: str | os.PathLike[str]) -> Path:
    return Path(log_dir) / PARTITION_DIR_NAME


def quorum_state_path(log_dir: str | os.PathLike[str]) -> Path:
    return partition_dir(log_dir) / QUORUM_STATE_FILE


def require_formatted(
    log_dir: str | os.PathLike[str], *, node_id: int, cluster_id: str | None = None
) -> MetaProperties:
    """The directory's ``meta.properties``, checked against this node; what a server does at start.

    Raises:
        StorageError: not formatted (run ``kraft storage format``), or formatted for another node
            or cluster.
    """
    meta = read_meta_properties(log_dir, expected_cluster_id=cluster_id, expected_node_id=node_id)
    if meta is None:
        raise StorageError(f"no meta.properties found in {log_dir} (have you run `kraft storage format`?)")
    return meta
