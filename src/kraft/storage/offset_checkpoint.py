"""Kafka's broker-level offset checkpoint files, one of each per log directory::

    replication-offset-checkpoint        high watermarks
    log-start-offset-checkpoint          log start offsets
    recovery-point-offset-checkpoint     recovery points

Kafka's text format (``CheckpointFile`` with ``OffsetCheckpointFile``'s formatter): the version ``0``,
the entry count, then one ``topic partition offset`` line per partition, each line ending in ``\\n``.
We write the entries sorted by (topic, partition), so that the same logs give the same bytes; Kafka
writes them in hash-map order, and its reader accepts any order, as does ours.

Reading is strict: a wrong version, a count that does not match the lines, or a line that is not
``topic partition offset`` is a ``StorageError`` naming the file and line. A missing file is an
empty checkpoint (a new log directory). Writes are atomic (``fsutil.atomic_write``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from kraft.common.errors import StorageError
from kraft.storage.fsutil import atomic_write

REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
RECOVERY_POINT_OFFSET_CHECKPOINT = "recovery-point-offset-checkpoint"
CHECKPOINT_VERSION = 0

TopicPartition = tuple[str, int]


def encode_checkpoint_text(entries: Sequence[str], encoding: str = "utf-8") -> bytes:
    """Kafka's ``CheckpointFile`` text: the version, the entry count, one line per entry."""
    lines = [str(CHECKPOINT_VERSION), str(len(entries)), *entries]
    return ("\n".join(lines) + "\n").encode(encoding)


def checkpoint_text_lines(data: bytes, *, source: str, encoding: str, label: str) -> list[tuple[int, str]]:
    """The entry lines of Kafka's ``CheckpointFile`` text, numbered as in the file (from 3), once the
    version and count lines are checked. Shared by the offset checkpoints and the leader-epoch one.

    Raises:
        StorageError: not ``label`` text, a wrong version, or a count that does not match the lines.
    """
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        raise StorageError(f"{source}: not {label} text") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) < 2:
        raise StorageError(f"{source}: expected a version line and a count line")
    if lines[0].strip() != str(CHECKPOINT_VERSION):
        raise StorageError(f"{source}: unsupported version {lines[0]!r}, expected {CHECKPOINT_VERSION}")
    try:
        count = int(lines[1])
    except ValueError:
        raise StorageError(f"{source} line 2: entry count {lines[1]!r} is not an integer") from None
    body = lines[2:]
    if count != len(body):
        raise StorageError(f"{source}: header says {count} entries but {len(body)} lines follow")
    return list(enumerate(body, start=3))


def encode_offset_checkpoint(entries: Mapping[TopicPartition, int]) -> bytes:
    return encode_checkpoint_text(
        [f"{topic} {partition} {offset}" for (topic, partition), offset in sorted(entries.items())]
    )


def decode_offset_checkpoint(data: bytes, *, source: str = "offset checkpoint") -> dict[TopicPartition, int]:
    """Parse Kafka's offset checkpoint text (a later line for the same partition wins, as in Kafka).

    Raises:
        StorageError: malformed (the message names ``source`` and the line).
    """
    out: dict[TopicPartition, int] = {}
    for n, line in checkpoint_text_lines(data, source=source, encoding="utf-8", label="UTF-8"):
        parts = line.split()
        if len(parts) != 3:
            raise StorageError(f"{source} line {n}: expected 'topic partition offset', got {line!r}")
        topic, partition_text, offset_text = parts
        try:
            partition, offset = int(partition_text), int(offset_text)
        except ValueError:
            raise StorageError(
                f"{source} line {n}: partition and offset must be integers in {line!r}"
            ) from None
        if partition < 0:
            raise StorageError(f"{source} line {n}: negative partition in {line!r}")
        out[(topic, partition)] = offset
    return out


def read_offset_checkpoint(path: str | os.PathLike[str]) -> dict[TopicPartition, int]:
    """The entries of the checkpoint at ``path``; empty if there is no such file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        return {}
    return decode_offset_checkpoint(data, source=str(p))


def write_offset_checkpoint(path: str | os.PathLike[str], entries: Mapping[TopicPartition, int]) -> None:
    """Durably replace the checkpoint at ``path`` (temp file, fsync, rename, fsync of the directory)."""
    atomic_write(path, encode_offset_checkpoint(entries))
