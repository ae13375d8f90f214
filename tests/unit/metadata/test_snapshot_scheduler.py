"""SnapshotScheduler: when a snapshot is due, and writing it in one step (the simulator) or from
records encoded in the background (the server)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from kraft.metadata.image import MetadataImage, MetadataLoader
from kraft.metadata.image_snapshot import snapshot_records_bytes
from kraft.metadata.records import MetadataRecordType, encode_record, make_record
from kraft.metadata.snapshot_scheduler import SnapshotScheduler
from kraft.raft.types import OffsetAndEpoch


class Writer:
    def __init__(self) -> None:
        self.batches: list[list[bytes]] = []
        self.frozen = False

    def append(self, records: list[bytes]) -> None:
        self.batches.append(records)

    def freeze(self) -> None:
        self.frozen = True


class Sink:
    def __init__(self) -> None:
        self.created: dict[OffsetAndEpoch, Writer] = {}

    def create_snapshot(self, snapshot_id: OffsetAndEpoch, last_contained_log_timestamp_ms: int) -> Any:
        if snapshot_id in self.created:
            return None
        self.created[snapshot_id] = Writer()
        return self.created[snapshot_id]


def image() -> MetadataImage:
    loader = MetadataLoader()
    record = make_record(MetadataRecordType.FEATURE_LEVEL, name="metadata.version", feature_level=25)
    loader.handle_batch(0, 1, 0, [encode_record(record)])
    return loader.image


def deferred_encoder(futures: list[Future[list[bytes]]]) -> Callable[[MetadataImage], Future[list[bytes]]]:
    """An encoder whose results the test completes by hand (the server's runs on a thread)."""

    def encode(img: MetadataImage) -> Future[list[bytes]]:
        futures.append(Future())
        return futures[-1]

    return encode


def due(scheduler: SnapshotScheduler, last_offset: int) -> None:
    scheduler.committed(last_offset, 1, 1000, record_bytes=scheduler.max_bytes)
    assert scheduler.is_due(2000)


def test_without_an_encoder_the_snapshot_is_written_in_the_same_step() -> None:
    s, sink, img = SnapshotScheduler(max_bytes=100, interval_ms=0), Sink(), image()
    due(s, 9)
    assert s.write(sink, img, 2000) == OffsetAndEpoch(10, 1)
    writer = sink.created[OffsetAndEpoch(10, 1)]
    assert writer.frozen and [r for batch in writer.batches for r in batch] == snapshot_records_bytes(img)
    assert not s.is_due(2001)


def test_background_encoding_writes_the_file_only_once_the_records_are_ready() -> None:
    futures: list[Future[list[bytes]]] = []
    encode = deferred_encoder(futures)
    s, sink, img = SnapshotScheduler(max_bytes=100, interval_ms=0, encode=encode), Sink(), image()
    due(s, 9)
    assert s.write(sink, img, 2000) is None and len(futures) == 1
    assert not sink.created  # nothing written on this thread yet
    s.committed(19, 1, 1500, record_bytes=1000)
    assert not s.is_due(2001)  # one snapshot at a time
    assert s.poll(sink) is None
    futures[0].set_result(snapshot_records_bytes(img))
    assert s.poll(sink) == OffsetAndEpoch(10, 1)
    assert sink.created[OffsetAndEpoch(10, 1)].frozen
    assert s.poll(sink) is None
    assert s.is_due(2002)  # the bytes replayed meanwhile count toward the next one


def test_a_snapshot_loaded_while_encoding_wins_over_an_older_one() -> None:
    futures: list[Future[list[bytes]]] = []
    encode = deferred_encoder(futures)
    s, sink, img = SnapshotScheduler(max_bytes=100, interval_ms=0, encode=encode), Sink(), image()
    due(s, 9)
    s.write(sink, img, 2000)
    s.loaded(50)  # e.g. a follower that fell behind fetched the leader's snapshot at offset 50
    futures[0].set_result(snapshot_records_bytes(img))
    assert s.poll(sink) is None and not sink.created
