"""Snapshot files of the metadata partition: naming, raw writers and readers.

Files live in the partition directory:

* ``<end offset, 20 digits>-<epoch, 10 digits>.checkpoint``: a frozen (complete, immutable) snapshot.
* ``<same stem>-<random>.checkpoint.part``: being written; never listed as a snapshot. A crash
  leaves it behind and ``MetadataLog`` removes it at open.
* ``<same stem>.checkpoint.deleted``: renamed before unlinking, so a crash mid-delete never leaves a
  half-deleted snapshot that still looks valid. Also removed at open.

``freeze()`` is the only way a snapshot becomes visible: fsync the ``.part`` file, rename it to its
final name, fsync the directory.

The bootstrap checkpoint ``00000000000000000000-0000000000.checkpoint`` (snapshot id 0-0) of a
KIP-853 controller holds only control records, laid out as Kafka's ``Formatter`` writes it through
``RecordsSnapshotWriter`` (``write_bootstrap_voters``, with the core's
``kraft.raft.listener.SnapshotWriter``)::

    control batch, offsets 0..2, epoch 0:  SnapshotHeaderRecord, KRaftVersionRecord {1}, VotersRecord
    control batch, offset 3, epoch 0:      SnapshotFooterRecord

The core reads the voter set from it (``log.read_snapshot(OffsetAndEpoch(0, 0))``) when the log has
no later VotersRecord; ``read_bootstrap_voters`` is the shell's reader of the same file.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from kraft.common.errors import CorruptRecordError, KraftError, StorageError
from kraft.protocol.schema import StructValue
from kraft.raft.listener import SnapshotWriter
from kraft.raft.log import RawSnapshotReader
from kraft.raft.types import OffsetAndEpoch
from kraft.raft.voters import KRAFT_VERSION_1, VoterSet
from kraft.records.batch import Record, iter_batches
from kraft.records.control import ControlType, control_records
from kraft.storage.fsutil import fsync_dir, write_all
from kraft.storage.log_dir import metadata_partition_dir

SUFFIX = ".checkpoint"
PART_SUFFIX = ".checkpoint.part"
DELETED_SUFFIX = ".checkpoint.deleted"
BOOTSTRAP_SNAPSHOT_ID = OffsetAndEpoch(0, 0)

_FROZEN = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")


def snapshot_stem(snapshot_id: OffsetAndEpoch) -> str:
    if snapshot_id.offset < 0 or snapshot_id.epoch < 0:
        raise KraftError(f"invalid snapshot id {snapshot_id}: offset and epoch must be >= 0")
    return f"{snapshot_id.offset:020d}-{snapshot_id.epoch:010d}"


def snapshot_file_name(snapshot_id: OffsetAndEpoch) -> str:
    return snapshot_stem(snapshot_id) + SUFFIX


def snapshot_path(directory: str | os.PathLike[str], snapshot_id: OffsetAndEpoch) -> Path:
    return Path(directory) / snapshot_file_name(snapshot_id)


def parse_snapshot_file_name(name: str) -> OffsetAndEpoch | None:
    """The id of a frozen snapshot file name; ``None`` for any other name (incl. ``.part``)."""
    m = _FROZEN.match(name)
    if m is None:
        return None
    return OffsetAndEpoch(int(m.group(1)), int(m.group(2)))


def list_snapshots(directory: str | os.PathLike[str]) -> list[OffsetAndEpoch]:
    """Ids of the frozen snapshots in ``directory``, ascending."""
    ids = []
    for name in os.listdir(directory):
        sid = parse_snapshot_file_name(name)
        if sid is not None:
            ids.append(sid)
    return sorted(ids)


def delete_snapshot_file(directory: str | os.PathLike[str], snapshot_id: OffsetAndEpoch) -> None:
    """Rename to ``.deleted`` then unlink; the caller fsyncs the directory."""
    path = snapshot_path(directory, snapshot_id)
    doomed = path.with_name(snapshot_stem(snapshot_id) + DELETED_SUFFIX)
    with contextlib.suppress(FileNotFoundError):
        os.replace(path, doomed)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(doomed)


class FileRawSnapshotWriter:
    """Appends bytes to a ``.part`` file; ``freeze()`` publishes it, ``abort()`` discards it.

    Lifecycle: open -> (append)* -> freeze | abort. Any call after freeze/abort raises ``KraftError``.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        snapshot_id: OffsetAndEpoch,
        on_frozen: Callable[[OffsetAndEpoch], None] | None = None,
    ) -> None:
        self._directory = Path(directory)
        self._snapshot_id = snapshot_id
        self._on_frozen = on_frozen
        fd, name = tempfile.mkstemp(
            prefix=snapshot_stem(snapshot_id) + "-", suffix=PART_SUFFIX, dir=directory
        )
        self._fd: int | None = fd
        self._part_path = Path(name)
        self._size = 0
        self._frozen = False

    @property
    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    @property
    def part_path(self) -> Path:
        return self._part_path

    def size_in_bytes(self) -> int:
        return self._size

    def is_frozen(self) -> bool:
        return self._frozen

    def _fd_or_raise(self) -> int:
        if self._fd is None:
            state = "frozen" if self._frozen else "aborted"
            raise KraftError(f"snapshot writer for {self._snapshot_id} is already {state}")
        return self._fd

    def append(self, data: bytes | bytearray | memoryview) -> None:
        fd = self._fd_or_raise()
        write_all(fd, data)
        self._size += len(data)

    def freeze(self) -> None:
        fd = self._fd_or_raise()
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
            self._fd = None
        final = snapshot_path(self._directory, self._snapshot_id)
        if final.exists():
            # Frozen snapshots are immutable: a second freeze of the same id keeps the first file.
            os.unlink(self._part_path)
            self._frozen = True
            return
        try:
            os.replace(self._part_path, final)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self._part_path)
            raise
        fsync_dir(self._directory)
        self._frozen = True
        if self._on_frozen is not None:
            self._on_frozen(self._snapshot_id)

    def abort(self) -> None:
        if self._fd is None:
            return
        os.close(self._fd)
        self._fd = None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self._part_path)

    def __enter__(self) -> FileRawSnapshotWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        # Leaving the block without freeze() discards the snapshot.
        self.abort()


class FileRawSnapshotReader:
    """A frozen snapshot's bytes. Each ``read`` opens the file, so a reader holds no descriptor."""

    def __init__(self, path: str | os.PathLike[str], snapshot_id: OffsetAndEpoch) -> None:
        self._path = Path(path)
        self._snapshot_id = snapshot_id
        try:
            self._size = self._path.stat().st_size
        except FileNotFoundError:
            raise StorageError(f"snapshot file {self._path} does not exist") from None

    @property
    def snapshot_id(self) -> OffsetAndEpoch:
        return self._snapshot_id

    @property
    def path(self) -> Path:
        return self._path

    def size_in_bytes(self) -> int:
        return self._size

    def read(self, position: int, max_bytes: int) -> bytes:
        if position < 0 or max_bytes < 0:
            raise KraftError(f"invalid snapshot read: position {position}, max_bytes {max_bytes}")
        if position >= self._size:
            return b""
        n = min(max_bytes, self._size - position)
        fd = os.open(self._path, os.O_RDONLY)
        try:
            out = bytearray()
            while len(out) < n:
                chunk = os.pread(fd, n - len(out), position + len(out))
                if not chunk:
                    raise StorageError(f"snapshot file {self._path} shrank while being read")
                out += chunk
            return bytes(out)
        finally:
            os.close(fd)

    def read_all(self) -> bytes:
        return self.read(0, self._size)


# ------------------------------------------------------------------------------------------------
# Record-level snapshots (spec section 6): header control batch, data batches, footer control batch.
# They are written with the core's ``kraft.raft.listener.SnapshotWriter`` over a
# ``FileRawSnapshotWriter`` (or any other ``RawSnapshotWriter``).


@dataclass(frozen=True, slots=True)
class SnapshotContents:
    """A decoded snapshot: the header's fields, the extra header control records and the data."""

    snapshot_id: OffsetAndEpoch
    last_contained_log_timestamp_ms: int
    header_records: tuple[tuple[ControlType, StructValue], ...]
    records: tuple[Record, ...]


def read_snapshot_contents(reader: RawSnapshotReader) -> SnapshotContents:
    """Decode and check a snapshot written by ``kraft.raft.listener.SnapshotWriter`` (or Kafka).

    Raises:
        StorageError: truncated, corrupt, or without its header/footer control batches.
    """
    sid = reader.snapshot_id
    data = reader.read(0, reader.size_in_bytes())
    try:
        batches = list(iter_batches(data))
    except CorruptRecordError as e:
        raise StorageError(f"snapshot {sid}: {e}") from None
    consumed = sum(b.size_in_bytes for b in batches)
    if consumed != len(data):
        raise StorageError(
            f"snapshot {sid}: {len(data) - consumed} trailing bytes after the last whole batch"
        )
    if len(batches) < 2 or not batches[0].is_control or not batches[-1].is_control:
        raise StorageError(f"snapshot {sid}: expected a header and a footer control batch")
    try:
        header = control_records(batches[0])
        footer = control_records(batches[-1])
    except (CorruptRecordError, ValueError) as e:
        raise StorageError(f"snapshot {sid}: {e}") from None
    if not header or header[0][0] is not ControlType.SNAPSHOT_HEADER:
        raise StorageError(f"snapshot {sid}: the first batch does not start with a SnapshotHeaderRecord")
    if not footer or footer[0][0] is not ControlType.SNAPSHOT_FOOTER:
        raise StorageError(f"snapshot {sid}: the last batch is not a SnapshotFooterRecord")
    header_message: Any = header[0][1]
    records: list[Record] = []
    for batch in batches[1:-1]:
        if not batch.is_control:
            records.extend(batch.records)
    return SnapshotContents(
        snapshot_id=sid,
        last_contained_log_timestamp_ms=int(header_message.last_contained_log_timestamp),
        header_records=tuple(header[1:]),
        records=tuple(records),
    )


# ------------------------------------------------------------------------------------------------
# The KIP-853 bootstrap checkpoint (0-0): kraft.version and the initial voters.


@dataclass(frozen=True, slots=True)
class BootstrapVoters:
    """What a bootstrap checkpoint says: the kraft.version level and the initial voter set."""

    kraft_version: int
    voters: VoterSet | None


def bootstrap_voters_path(log_dir: str | os.PathLike[str]) -> Path:
    """``<metadata log dir>/__cluster_metadata-0/00000000000000000000-0000000000.checkpoint``."""
    return snapshot_path(metadata_partition_dir(log_dir), BOOTSTRAP_SNAPSHOT_ID)


def write_bootstrap_voters(
    log_dir: str | os.PathLike[str],
    voters: VoterSet,
    *,
    kraft_version: int = KRAFT_VERSION_1,
    timestamp_ms: int | None = None,
) -> Path:
    """Write the bootstrap checkpoint of ``log_dir`` (the metadata log directory) with ``voters``,
    as Kafka's ``Formatter`` does for ``--standalone`` and ``--initial-controllers``; returns its path.

    Raises:
        StorageError: the checkpoint exists already (a frozen snapshot is never rewritten),
            ``voters`` is empty, or ``kraft_version`` is below 1 (no KIP-853 voters then).
    """
    if len(voters) == 0:
        raise StorageError("the bootstrap voter set must not be empty")
    if kraft_version < KRAFT_VERSION_1:
        raise StorageError(
            f"the bootstrap voter set needs kraft.version {KRAFT_VERSION_1} or later, not {kraft_version}"
        )
    path = bootstrap_voters_path(log_dir)
    if path.exists():
        raise StorageError(f"{path} already exists")
    directory = path.parent
    created = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    if created:
        fsync_dir(log_dir)
    now_ms = time.time_ns() // 1_000_000 if timestamp_ms is None else timestamp_ms
    writer = SnapshotWriter(
        FileRawSnapshotWriter(directory, BOOTSTRAP_SNAPSHOT_ID),
        # Kafka's Formatter: lastContainedLogTimestamp (and the batches' timestamp) = the time of
        # formatting. The header batch holds the KRaftVersionRecord and the VotersRecord.
        now_ms,
        kraft_version=kraft_version,
        voters=voters,
    )
    try:
        writer.freeze()
    except BaseException:
        writer.abort()
        raise
    return path


def read_bootstrap_voters(log_dir: str | os.PathLike[str]) -> BootstrapVoters | None:
    """The bootstrap checkpoint of ``log_dir`` (the metadata log directory), None if it has none.

    Raises:
        StorageError: the file is not a valid snapshot, or holds no KRaftVersionRecord.
    """
    path = bootstrap_voters_path(log_dir)
    if not path.exists():
        return None
    contents = read_snapshot_contents(FileRawSnapshotReader(path, BOOTSTRAP_SNAPSHOT_ID))
    kraft_version: int | None = None
    voters: VoterSet | None = None
    for kind, message in contents.header_records:
        if kind is ControlType.KRAFT_VERSION:
            kraft_version = int(cast(Any, message).k_raft_version)
        elif kind is ControlType.KRAFT_VOTERS:
            try:
                voters = VoterSet.from_record(message)
            except ValueError as e:
                raise StorageError(f"{path}: invalid VotersRecord: {e}") from None
    if kraft_version is None:
        raise StorageError(f"{path}: the bootstrap checkpoint has no KRaftVersionRecord")
    return BootstrapVoters(kraft_version, voters)
