"""``bootstrap.checkpoint``: the bootstrap metadata file of a log directory (Kafka's BootstrapDirectory).

``kraft storage format`` writes it into each directory it formats (as Kafka's ``Formatter`` does);
the controller reads the one in ``metadata.log.dir`` (the log directory itself, not the
``__cluster_metadata-0`` partition directory) when it starts on an empty log. The format is a
KRaft snapshot at offset 0 and epoch 0, exactly as Kafka's ``BatchFileWriter`` lays it out::

    control batch, offset 0:         SnapshotHeaderRecord {version 0, lastContainedLogTimestamp 0}
    data batch, offsets 1..n:        n FeatureLevelRecords (metadata.version first, then by name),
                                     then any UserScramCredentialRecords (``--add-scram``)
    control batch, offset n+1:       SnapshotFooterRecord {version 0}

Every batch has partitionLeaderEpoch 0, CreateTime = the time of writing, no compression.

Reading is strict: a file that is not whole batches with valid CRCs, lacks the header or footer,
or holds anything but FeatureLevelRecords (and UserScramCredentialRecords) is a ``StorageError``
naming the file. Writing is atomic (``bootstrap.checkpoint.tmp``, fsync, rename, fsync of the
directory), so a crash leaves the old file or the new one.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from kraft.common.errors import CorruptRecordError, StorageError
from kraft.metadata.bootstrap import BootstrapMetadata
from kraft.metadata.records import decode_record, encode_record
from kraft.records.batch import SimpleRecord, build_batch, iter_batches
from kraft.records.control import (
    ControlType,
    build_control_batch,
    control_records,
    snapshot_footer_record,
    snapshot_header_record,
)
from kraft.storage.fsutil import atomic_write

BOOTSTRAP_FILE = "bootstrap.checkpoint"  # Kafka's BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME
BOOTSTRAP_EPOCH = 0


def bootstrap_checkpoint_path(directory: str | os.PathLike[str]) -> Path:
    return Path(directory) / BOOTSTRAP_FILE


def encode_bootstrap_checkpoint(bootstrap: BootstrapMetadata, *, timestamp_ms: int) -> bytes:
    """The bytes of a ``bootstrap.checkpoint`` holding ``bootstrap``'s records."""
    values = [encode_record(r) for r in bootstrap.records()]
    header = build_control_batch(
        ControlType.SNAPSHOT_HEADER,
        snapshot_header_record(0),  # Kafka's BatchFileWriter: lastContainedLogTimestamp 0
        base_offset=0,
        partition_leader_epoch=BOOTSTRAP_EPOCH,
        timestamp_ms=timestamp_ms,
    )
    data = build_batch(
        [SimpleRecord(value=v) for v in values],
        base_offset=1,
        partition_leader_epoch=BOOTSTRAP_EPOCH,
        timestamp_ms=timestamp_ms,
    )
    footer = build_control_batch(
        ControlType.SNAPSHOT_FOOTER,
        snapshot_footer_record(),
        base_offset=1 + len(values),
        partition_leader_epoch=BOOTSTRAP_EPOCH,
        timestamp_ms=timestamp_ms,
    )
    return header + data + footer


def decode_bootstrap_checkpoint(data: bytes) -> BootstrapMetadata:
    """The bootstrap metadata in the bytes of a ``bootstrap.checkpoint``.

    Raises:
        CorruptRecordError: broken batches, no header or footer, or records that are not a valid
            set of FeatureLevelRecords.
    """
    batches = list(iter_batches(data))
    consumed = sum(b.size_in_bytes for b in batches)
    if consumed != len(data):
        raise CorruptRecordError(f"{len(data) - consumed} bytes after the last whole batch")
    if not batches or not batches[0].is_control or not batches[-1].is_control or len(batches) < 2:
        raise CorruptRecordError("expected a snapshot: a header control batch, data, a footer control batch")
    next_offset = 0
    for batch in batches:
        # A snapshot's offsets run from 0 without gaps (the base offset is outside the CRC).
        if batch.base_offset != next_offset:
            raise CorruptRecordError(f"batch at offset {batch.base_offset}; expected offset {next_offset}")
        next_offset = batch.last_offset + 1
    header = control_records(batches[0])
    footer = control_records(batches[-1])
    if not header or header[0][0] is not ControlType.SNAPSHOT_HEADER:
        raise CorruptRecordError("the first batch does not start with a SnapshotHeaderRecord")
    if not footer or footer[-1][0] is not ControlType.SNAPSHOT_FOOTER:
        raise CorruptRecordError("the last batch does not end with a SnapshotFooterRecord")
    records = []
    for batch in batches[1:-1]:
        if batch.is_control:
            continue
        for record in batch.records:
            if record.value is None:
                raise CorruptRecordError(f"record at offset {record.offset} has no value")
            records.append(decode_record(record.value))
    try:
        return BootstrapMetadata.from_records(records)
    except ValueError as e:
        raise CorruptRecordError(str(e)) from None


def write_bootstrap_checkpoint(
    directory: str | os.PathLike[str], bootstrap: BootstrapMetadata, *, timestamp_ms: int | None = None
) -> Path:
    """Atomically (re)write ``directory/bootstrap.checkpoint``; returns its path.

    Raises:
        StorageError: ``directory`` is not an existing directory.
        OSError: the write failed (the old file, if any, is left as it was).
    """
    path = bootstrap_checkpoint_path(directory)
    if not Path(directory).is_dir():
        raise StorageError(f"cannot write {path}: {directory} is not a directory")
    now_ms = int(time.time() * 1000) if timestamp_ms is None else timestamp_ms
    atomic_write(path, encode_bootstrap_checkpoint(bootstrap, timestamp_ms=now_ms))
    return path


def read_bootstrap_checkpoint(directory: str | os.PathLike[str]) -> BootstrapMetadata | None:
    """``directory/bootstrap.checkpoint``, or ``None`` if there is none.

    Raises:
        StorageError: the file cannot be read or is not a valid bootstrap checkpoint; the message
            names the file.
    """
    path = bootstrap_checkpoint_path(directory)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as e:
        raise StorageError(f"cannot read {path}: {e.strerror or e}") from None
    try:
        return decode_bootstrap_checkpoint(data)
    except CorruptRecordError as e:
        raise StorageError(f"{path} is not a valid bootstrap checkpoint: {e}") from None
