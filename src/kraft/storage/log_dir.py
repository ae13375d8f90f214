"""The layout of a log directory (``metadata.log.dir``, and later each of ``log.dirs``)::

<log dir>/meta.properties                      kraft.storage.meta_properties
<log dir>/<topic>-<partition>/                 a partition directory: partition_dir()
<log dir>/__cluster_metadata-0/                the metadata partition: metadata_partition_dir()
    00000000000000000000.log ...               kraft.storage.segment_log (no .index/.timeindex)
    leader-epoch-checkpoint                    kraft.storage.segment_log
    <offset>-<epoch>.checkpoint                kraft.storage.snapshots (through metadata_log)
    quorum-state                               kraft.storage.quorum_state_file

``partition_dir_name`` is the one place that names a partition directory; everything else (the
server, the tools, ``kraft.spark``) goes through it or the functions and constant built on it.
"""

from __future__ import annotations

import os
from pathlib import Path

from kraft.common.errors import KraftError, StorageError
from kraft.raft.types import METADATA_PARTITION, METADATA_TOPIC
from kraft.storage.meta_properties import MetaProperties, read_meta_properties
from kraft.storage.quorum_state_file import QUORUM_STATE_FILE


def partition_dir_name(topic: str, partition: int) -> str:
    """Kafka's ``<topic>-<partition>`` (``UnifiedLog.logDirName``).

    Raises:
        KraftError: a topic name that is empty or could leave the log directory, or a negative
            partition.
    """
    if not topic or os.sep in topic or "/" in topic or topic in (".", "..") or partition < 0:
        raise KraftError(f"no partition directory for topic {topic!r} partition {partition}")
    return f"{topic}-{partition}"


def partition_dir(log_dir: str | os.PathLike[str], topic: str, partition: int) -> Path:
    """``<log dir>/<topic>-<partition>``."""
    return Path(log_dir) / partition_dir_name(topic, partition)


METADATA_PARTITION_DIR_NAME = partition_dir_name(METADATA_TOPIC, METADATA_PARTITION)


def metadata_partition_dir(log_dir: str | os.PathLike[str]) -> Path:
    """``<log dir>/__cluster_metadata-0``."""
    return partition_dir(log_dir, METADATA_TOPIC, METADATA_PARTITION)


def quorum_state_path(log_dir: str | os.PathLike[str]) -> Path:
    return metadata_partition_dir(log_dir) / QUORUM_STATE_FILE


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
