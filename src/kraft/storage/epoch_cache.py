"""The leader epoch cache: which epoch's entries start at which offset, and its checkpoint file.

The cache is an ordered list of ``(epoch, start_offset)`` strictly increasing in both fields (Kafka's
``LeaderEpochFileCache``). It is kept in memory by ``SegmentLog``; the on-disk ``leader-epoch-checkpoint``
is Kafka's text format::

    0            <- version
    2            <- number of entries
    1 0          <- "epoch start_offset", one per line
    3 120

The checkpoint is only an accelerator and a Kafka-compatible artifact: ``SegmentLog`` derives the same
cache from the batches at open and trusts the file only when it agrees (see ``SegmentLog`` recovery).
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kraft.common.errors import StorageError
from kraft.raft.types import OffsetAndEpoch
from kraft.storage.fsutil import atomic_write
from kraft.storage.offset_checkpoint import checkpoint_text_lines, encode_checkpoint_text

CHECKPOINT_FILE = "leader-epoch-checkpoint"


@dataclass(frozen=True, slots=True)
class EpochEntry:
    epoch: int
    start_offset: int


class LeaderEpochCache:
    """In-memory epoch cache. Invariant: epochs and start offsets both strictly increase."""

    def __init__(self, entries: Iterable[EpochEntry] = ()) -> None:
        self._entries: list[EpochEntry] = []
        for entry in entries:
            self.assign(entry.epoch, entry.start_offset)

    @property
    def entries(self) -> tuple[EpochEntry, ...]:
        return tuple(self._entries)

    def latest(self) -> EpochEntry | None:
        return self._entries[-1] if self._entries else None

    def latest_epoch(self) -> int | None:
        return self._entries[-1].epoch if self._entries else None

    def earliest(self) -> EpochEntry | None:
        return self._entries[0] if self._entries else None

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that ``epoch`` starts at ``start_offset``; returns whether the cache changed.

        Entries that conflict (epoch >= ``epoch`` or start offset >= ``start_offset``) are dropped
        first, as when a new leader initializes its epoch at its log end offset (spec 4.1).
        """
        latest = self.latest()
        if latest is not None and latest.epoch == epoch and latest.start_offset <= start_offset:
            return False
        self._entries = [e for e in self._entries if e.epoch < epoch and e.start_offset < start_offset]
        self._entries.append(EpochEntry(epoch, start_offset))
        return True

    def truncate_from_end(self, end_offset: int) -> bool:
        """Drop entries starting at or after ``end_offset`` (log truncation); returns whether any were."""
        keep = [e for e in self._entries if e.start_offset < end_offset]
        changed = len(keep) != len(self._entries)
        self._entries = keep
        return changed

    def truncate_from_start(self, start_offset: int) -> bool:
        """Forget history below a new log start offset.

        The last entry starting below ``start_offset`` is kept but moved to start at it, since its
        epoch still covers the first retained offset (Kafka's ``truncateFromStart``).
        """
        below = [e for e in self._entries if e.start_offset < start_offset]
        if not below:
            return False
        rest = [e for e in self._entries if e.start_offset >= start_offset]
        if rest and rest[0].start_offset == start_offset:
            self._entries = rest
        else:
            self._entries = [EpochEntry(below[-1].epoch, start_offset), *rest]
        return True

    def clear(self) -> bool:
        changed = bool(self._entries)
        self._entries = []
        return changed

    def end_offset_for(self, epoch: int, log_end_offset: int, floor_epoch: int) -> OffsetAndEpoch:
        """Spec 4.1 ``endOffsetForEpoch``.

        Returns (start offset of the first epoch above ``epoch``, largest epoch <= ``epoch``), where
        the largest epoch falls back to ``floor_epoch`` (earliest snapshot's epoch, or 0) when none is
        cached; or (``log_end_offset``, latest epoch) when no cached epoch is above ``epoch``.
        """
        epochs = [e.epoch for e in self._entries]
        i = bisect.bisect_right(epochs, epoch)  # index of the first entry with epoch > ``epoch``
        if i == len(self._entries):
            latest = self.latest_epoch()
            return OffsetAndEpoch(log_end_offset, floor_epoch if latest is None else latest)
        higher = self._entries[i]
        found = self._entries[i - 1].epoch if i > 0 else floor_epoch
        return OffsetAndEpoch(higher.start_offset, found)


def encode_checkpoint(entries: Iterable[EpochEntry]) -> bytes:
    return encode_checkpoint_text([f"{e.epoch} {e.start_offset}" for e in entries], "ascii")


def decode_checkpoint(data: bytes, *, source: str = CHECKPOINT_FILE) -> list[EpochEntry]:
    """Parse Kafka's leader-epoch checkpoint text.

    Raises:
        StorageError: wrong version, count mismatch or a malformed line (naming ``source`` and line).
    """
    entries: list[EpochEntry] = []
    for n, line in checkpoint_text_lines(data, source=source, encoding="ascii", label="ASCII"):
        parts = line.split()
        if len(parts) != 2:
            raise StorageError(f"{source} line {n}: expected 'epoch offset', got {line!r}")
        try:
            epoch, offset = int(parts[0]), int(parts[1])
        except ValueError:
            raise StorageError(f"{source} line {n}: expected two integers, got {line!r}") from None
        if epoch < 0 or offset < 0:
            raise StorageError(f"{source} line {n}: negative epoch or offset in {line!r}")
        if entries and (epoch <= entries[-1].epoch or offset <= entries[-1].start_offset):
            raise StorageError(f"{source} line {n}: entries must increase in epoch and offset")
        entries.append(EpochEntry(epoch, offset))
    return entries


def read_checkpoint(path: str | os.PathLike[str]) -> list[EpochEntry] | None:
    """The entries of the checkpoint at ``path``; ``None`` if there is no such file."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        return None
    return decode_checkpoint(data, source=str(p))


def write_checkpoint(path: str | os.PathLike[str], entries: Iterable[EpochEntry]) -> None:
    atomic_write(path, encode_checkpoint(entries))
