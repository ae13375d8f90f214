"""``meta.properties``: who a log directory belongs to (Kafka's ``MetaProperties``, version 1).

Format (Java properties, a comment header as ``Properties.store`` writes it)::

    #
    #Tue Oct 22 10:00:00 UTC 2024
    node.id=1
    directory.id=J8aAPcfLQt2bqs1JT_rMgQ
    version=1
    cluster.id=MkU3OEVBNTcwNTJENDM2Qg

Reading is strict: a missing key, a version other than 1 (0 is ZooKeeper mode), a bad node id or
directory id, or a cluster id other than the expected one is a ``StorageError`` naming the file.
Written atomically (temp file, fsync, rename, fsync directory).
"""

from __future__ import annotations

import os
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from kraft.common.config import parse_properties
from kraft.common.errors import ConfigError, StorageError
from kraft.common.uuids import uuid_from_base64, uuid_to_base64
from kraft.storage.fsutil import atomic_write

META_PROPERTIES_FILE = "meta.properties"
VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class MetaProperties:
    cluster_id: str
    node_id: int
    directory_id: uuid.UUID | None = None
    version: int = VERSION

    def to_properties(self) -> dict[str, str]:
        """Key -> value, sorted by key (as ``kafka-storage info`` prints them)."""
        props = {"cluster.id": self.cluster_id, "node.id": str(self.node_id), "version": str(self.version)}
        if self.directory_id is not None:
            props["directory.id"] = uuid_to_base64(self.directory_id)
        return dict(sorted(props.items()))


def meta_properties_path(log_dir: str | os.PathLike[str]) -> Path:
    return Path(log_dir) / META_PROPERTIES_FILE


def encode_meta_properties(meta: MetaProperties, *, now_s: float | None = None) -> bytes:
    stamp = time.strftime("%a %b %d %H:%M:%S %Z %Y", time.localtime(now_s))
    lines = ["#", f"#{stamp}", f"node.id={meta.node_id}"]
    if meta.directory_id is not None:
        lines.append(f"directory.id={uuid_to_base64(meta.directory_id)}")
    lines += [f"version={meta.version}", f"cluster.id={meta.cluster_id}"]
    return ("\n".join(lines) + "\n").encode("utf-8")


def decode_meta_properties(text: str, *, source: str = META_PROPERTIES_FILE) -> MetaProperties:
    """Parse and validate; raises ``StorageError`` naming ``source`` and the bad key."""
    try:
        props = parse_properties(text, source=source)
    except ConfigError as e:
        raise StorageError(str(e)) from None
    version_text = props.get("version", "").strip()
    if not version_text:
        raise StorageError(f"{source}: version was not found")
    if version_text == "0":
        raise StorageError(f"{source}: version 0 is ZooKeeper mode; only KRaft (version 1) is supported")
    if version_text != str(VERSION):
        raise StorageError(f"{source}: unsupported version {version_text!r}, expected {VERSION}")
    for key in ("cluster.id", "node.id"):
        if not props.get(key, "").strip():
            raise StorageError(f"{source}: {key} was not found")
    try:
        node_id = int(props["node.id"])
    except ValueError:
        raise StorageError(
            f"{source}: unable to read node.id {props['node.id']!r} as a base-10 number"
        ) from None
    if node_id < 0:
        raise StorageError(f"{source}: node.id must not be negative, got {node_id}")
    directory_id = None
    if "directory.id" in props:
        try:
            directory_id = uuid_from_base64(props["directory.id"].strip())
        except ValueError as e:
            raise StorageError(f"{source}: unable to read directory.id as a Uuid: {e}") from None
    return MetaProperties(
        cluster_id=props["cluster.id"].strip(), node_id=node_id, directory_id=directory_id, version=VERSION
    )


def read_meta_properties(
    log_dir: str | os.PathLike[str],
    *,
    expected_cluster_id: str | None = None,
    expected_node_id: int | None = None,
) -> MetaProperties | None:
    """The directory's ``meta.properties``; ``None`` if the directory is not formatted.

    Raises:
        StorageError: unreadable or invalid, or the cluster/node id differs from the expected one.
    """
    path = meta_properties_path(log_dir)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise StorageError(f"cannot read {path}: {e}") from None
    meta = decode_meta_properties(text, source=str(path))
    if expected_cluster_id is not None and meta.cluster_id != expected_cluster_id:
        raise StorageError(
            f"{path}: invalid cluster.id: expected {expected_cluster_id}, but read {meta.cluster_id}"
        )
    if expected_node_id is not None and meta.node_id != expected_node_id:
        raise StorageError(
            f"{path}: stored node.id {meta.node_id} doesn't match configured node.id {expected_node_id}"
        )
    return meta


def write_meta_properties(log_dir: str | os.PathLike[str], meta: MetaProperties) -> None:
    atomic_write(meta_properties_path(log_dir), encode_meta_properties(meta))
