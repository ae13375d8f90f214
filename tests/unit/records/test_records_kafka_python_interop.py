"""Cross-checks against an independent implementation: kafka-python 3.0.12's record module.

Both directions: kafka-python reads what we build (CRC, offsets, timestamps, keys, values, headers,
control and transactional attributes), we read what it builds (uncompressed, gzip, lz4, zstd), and
where both can build the same batch the bytes are identical.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.record.default_records import ControlRecord, DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder

from kraft.records.batch import Compression, Header, SimpleRecord, build_batch, decode_batch, iter_batches
from kraft.records.control import (
    ControlType,
    build_control_batch,
    control_type_of,
    decode_control_record,
    leader_change_message,
    snapshot_header_record,
)

BASE_TS = 1_700_000_000_000


class ControlBatchBuilder(DefaultRecordBatchBuilder):  # type: ignore[misc]
    """kafka-python never writes control batches (only brokers do); set the bit the way Kafka does."""

    def _get_attributes(self, include_compression_type: bool = True) -> int:
        return int(super()._get_attributes(include_compression_type)) | 0x20


def kp_build(
    records: list[SimpleRecord],
    *,
    codec: int = 0,
    transactional: bool = False,
    producer: tuple[int, int, int] = (-1, -1, -1),
    builder_cls: type = DefaultRecordBatchBuilder,
) -> bytes:
    builder = builder_cls(2, codec, transactional, producer[0], producer[1], producer[2], 10**8)
    for i, r in enumerate(records):
        headers = [(h.key, h.value) for h in r.headers]
        assert builder.append(i, r.timestamp, r.key, r.value, headers) is not None
    return bytes(builder.build())


def kp_records(data: bytes) -> tuple[Any, list[Any]]:
    batch = DefaultRecordBatch(data)
    assert batch.validate_crc()
    return batch, list(batch)


headers_st = st.lists(
    st.builds(Header, key=st.text(max_size=8), value=st.none() | st.binary(max_size=8)), max_size=3
).map(tuple)
records_st = st.lists(
    st.builds(
        SimpleRecord,
        key=st.none() | st.binary(max_size=30),
        value=st.none() | st.binary(max_size=200),
        headers=headers_st,
        timestamp=st.integers(BASE_TS - 10**6, BASE_TS + 10**6),
    ),
    min_size=1,
    max_size=20,
)
producer_st = st.one_of(
    st.just((-1, -1, -1)),
    st.tuples(st.integers(0, 2**63 - 1), st.integers(0, 2**15 - 1), st.integers(0, 2**31 - 1)),
)


def test_kafka_python_reads_our_batch() -> None:
    records = [
        SimpleRecord(key=b"k1", value=b"v1", headers=(Header(key="h", value=b"x"),), timestamp=BASE_TS + 5),
        SimpleRecord(key=None, value=None, headers=(Header(key="n", value=None),), timestamp=BASE_TS),
        SimpleRecord(key=b"", value=b"", timestamp=BASE_TS + 9),
    ]
    built = build_batch(
        records, base_offset=40, partition_leader_epoch=6, producer_id=3, producer_epoch=2, base_sequence=11
    )
    batch, got = kp_records(built)
    assert (batch.base_offset, batch.leader_epoch, batch.last_offset, batch.records_count) == (40, 6, 42, 3)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence, batch.last_sequence) == (
        3,
        2,
        11,
        13,
    )
    assert (batch.first_timestamp, batch.max_timestamp) == (BASE_TS + 5, BASE_TS + 9)
    assert not batch.is_control_batch and not batch.is_transactional and batch.compression_type == 0
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in got] == [
        (40, BASE_TS + 5, b"k1", b"v1", [("h", b"x")]),
        (41, BASE_TS, None, None, [("n", None)]),
        (42, BASE_TS + 9, b"", b"", []),
    ]


def test_kafka_python_reads_our_control_batch() -> None:
    built = build_control_batch(
        ControlType.LEADER_CHANGE,
        leader_change_message(1, [1, 2, 3], [1, 2]),
        base_offset=0,
        partition_leader_epoch=1,
        timestamp_ms=BASE_TS,
    )
    batch, got = kp_records(built)
    assert batch.is_control_batch
    (rec,) = got
    assert isinstance(rec, ControlRecord)
    assert (rec.version, rec.type, rec.timestamp) == (0, 2, BASE_TS)


def test_kafka_python_iterates_a_log_of_our_batches() -> None:
    log = b"".join(
        build_batch([SimpleRecord(value=b"v%d" % i)] * 2, base_offset=2 * i, partition_leader_epoch=1)
        for i in range(5)
    )
    offsets = []
    for batch in MemoryRecords(log):
        assert batch.validate_crc()
        offsets += [r.offset for r in batch]
    assert offsets == list(range(10))


@pytest.mark.parametrize("codec", [Compression.NONE, Compression.GZIP, Compression.LZ4, Compression.ZSTD])
def test_we_read_kafka_python_batches(codec: int) -> None:
    records = [
        SimpleRecord(
            key=None if i % 4 == 0 else b"key%d" % i,
            value=b"value %d " % i * 20,
            headers=(Header(key="trace", value=b"%d" % i),) if i % 3 == 0 else (),
            timestamp=BASE_TS + i,
        )
        for i in range(200)
    ]
    data = kp_build(records, codec=codec)
    batch = decode_batch(data)
    assert batch.crc_valid and batch.header.compression == codec
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in batch.records] == [
        (i, r.timestamp, r.key, r.value, r.headers) for i, r in enumerate(records)
    ]


def test_we_read_kafka_python_memory_records_builder_output() -> None:
    builder = MemoryRecordsBuilder(magic=2, compression_type=Compression.LZ4, batch_size=10**6)
    for i in range(30):
        builder.append(BASE_TS + i, None, b"payload-%d" % i * 10)
    builder.close()
    (batch,) = iter_batches(bytes(builder.buffer()))
    assert [r.value for r in batch.records] == [b"payload-%d" % i * 10 for i in range(30)]


def test_we_read_kafka_python_transactional_and_control_batches() -> None:
    txn = decode_batch(
        kp_build([SimpleRecord(value=b"x", timestamp=1)], transactional=True, producer=(7, 1, 0))
    )
    assert txn.header.is_transactional and not txn.is_control
    assert (txn.header.producer_id, txn.records[0].sequence) == (7, 0)
    marker = SimpleRecord(key=b"\x00\x00\x00\x01", value=b"\x00\x00\x00\x00\x00\x05", timestamp=1)
    control = decode_batch(
        kp_build([marker], transactional=True, producer=(7, 1, 1), builder_cls=ControlBatchBuilder)
    )
    assert control.is_control and control.header.is_transactional
    assert control_type_of(control.records[0]) is ControlType.COMMIT
    assert decode_control_record(control.records[0])[1].coordinator_epoch == 5  # type: ignore[attr-defined]


def test_identical_bytes_for_a_control_batch() -> None:
    ours = build_control_batch(
        ControlType.SNAPSHOT_HEADER,
        snapshot_header_record(123),
        base_offset=0,
        partition_leader_epoch=0,
        timestamp_ms=9,
    )
    value = decode_batch(ours).records[0].value
    theirs = kp_build(
        [SimpleRecord(key=b"\x00\x00\x00\x03", value=value, timestamp=9)], builder_cls=ControlBatchBuilder
    )
    assert ours == theirs


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=records_st, producer=producer_st, transactional=st.booleans())
def test_identical_bytes_to_kafka_python_builder(
    records: list[SimpleRecord], producer: tuple[int, int, int], transactional: bool
) -> None:
    transactional = transactional and producer[0] >= 0
    # kafka-python always writes baseOffset 0 and partitionLeaderEpoch 0 (the broker assigns both).
    ours = build_batch(
        records,
        base_offset=0,
        partition_leader_epoch=0,
        is_transactional=transactional,
        producer_id=producer[0],
        producer_epoch=producer[1],
        base_sequence=producer[2],
    )
    theirs = kp_build(records, transactional=transactional, producer=producer)
    assert ours == theirs


@settings(max_examples=60, deadline=None)
@given(records=records_st, codec=st.sampled_from([Compression.GZIP, Compression.LZ4, Compression.ZSTD]))
def test_we_decode_what_kafka_python_compresses(records: list[SimpleRecord], codec: int) -> None:
    batch = decode_batch(kp_build(records, codec=codec))
    assert [(r.key, r.value, r.headers, r.timestamp) for r in batch.records] == [
        (r.key, r.value, r.headers, r.timestamp) for r in records
    ]


@settings(max_examples=100, deadline=None)
@given(records=records_st, base_offset=st.integers(0, 2**62), epoch=st.integers(-1, 2**31 - 1))
def test_kafka_python_decodes_what_we_build(
    records: list[SimpleRecord], base_offset: int, epoch: int
) -> None:
    batch, got = kp_records(build_batch(records, base_offset=base_offset, partition_leader_epoch=epoch))
    assert batch.leader_epoch == epoch
    assert [(r.offset, r.key, r.value, r.timestamp, r.headers) for r in got] == [
        (base_offset + i, r.key, r.value, r.timestamp, [(h.key, h.value) for h in r.headers])
        for i, r in enumerate(records)
    ]
