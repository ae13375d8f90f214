"""``bootstrap.checkpoint``: Kafka's snapshot framing, round trips, atomic writes, corrupt files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kafka.record.memory_records import MemoryRecords

from kraft.common.errors import StorageError
from kraft.metadata.bootstrap import BootstrapMetadata, bootstrap_metadata
from kraft.metadata.records import (
    ApiMessageAndVersion,
    MetadataRecordType,
    MetadataVersion,
    decode_record,
    encode_record,
    make_record,
)
from kraft.records.batch import SimpleRecord, build_batch
from kraft.records.control import (
    ControlType,
    build_control_batch,
    snapshot_footer_record,
    snapshot_header_record,
)
from kraft.storage import bootstrap_file
from kraft.storage.bootstrap_file import (
    BOOTSTRAP_FILE,
    decode_bootstrap_checkpoint,
    encode_bootstrap_checkpoint,
    read_bootstrap_checkpoint,
    write_bootstrap_checkpoint,
)

T = MetadataRecordType
BOOTSTRAP = bootstrap_metadata(MetadataVersion.IBP_4_0_IV3, [("group.version", 1)])


def test_file_is_a_snapshot_at_offset_zero_epoch_zero_as_kafkas_batch_file_writer_writes_it() -> None:
    """Read back with kafka-python, an independent RecordBatch v2 reader."""
    data = encode_bootstrap_checkpoint(BOOTSTRAP, timestamp_ms=1234)
    records = MemoryRecords(data)
    batches = []
    while records.has_next():
        batches.append(records.next_batch())
    assert records.valid_bytes() == len(data)
    assert [(b.base_offset, b.last_offset, b.is_control_batch) for b in batches] == [
        (0, 0, True),
        (1, 3, False),
        (4, 4, True),
    ]
    for b in batches:
        assert b.validate_crc() and b.leader_epoch == 0 and b.producer_id == -1 and b.compression_type == 0
        assert b.max_timestamp == 1234
    (header,) = list(batches[0])
    assert header.key == b"\x00\x00\x00\x03"  # control key: version 0, SNAPSHOT_HEADER
    assert header.value == bytes.fromhex("0000 0000000000000000 00")  # v0, lastContainedLogTimestamp 0
    (footer,) = list(batches[2])
    assert footer.key == b"\x00\x00\x00\x04" and footer.value == bytes.fromhex("0000 00")
    values = [r.value for r in batches[1]]
    assert all(r.key is None for r in batches[1])
    assert [decode_record(v) for v in values] == [
        make_record(T.FEATURE_LEVEL, 0, name="metadata.version", feature_level=25),
        make_record(T.FEATURE_LEVEL, 0, name="eligible.leader.replicas.version", feature_level=1),
        make_record(T.FEATURE_LEVEL, 0, name="group.version", feature_level=1),
    ]
    assert values[0] == bytes.fromhex("01 0c 00") + b"\x11metadata.version" + bytes.fromhex("0019 00")


def test_write_then_read_gives_the_same_bootstrap(tmp_path: Path) -> None:
    for bootstrap in (BOOTSTRAP, bootstrap_metadata(MetadataVersion.IBP_3_3_IV0)):
        path = write_bootstrap_checkpoint(tmp_path, bootstrap, timestamp_ms=5)
        assert path == tmp_path / BOOTSTRAP_FILE
        assert read_bootstrap_checkpoint(tmp_path) == bootstrap
        assert path.read_bytes() == encode_bootstrap_checkpoint(bootstrap, timestamp_ms=5)


def test_write_uses_the_clock_when_no_timestamp_is_given(tmp_path: Path) -> None:
    write_bootstrap_checkpoint(tmp_path, BOOTSTRAP)
    batch = MemoryRecords((tmp_path / BOOTSTRAP_FILE).read_bytes()).next_batch()
    assert batch.max_timestamp > 1_600_000_000_000


def test_no_file_reads_as_none(tmp_path: Path) -> None:
    assert read_bootstrap_checkpoint(tmp_path) is None
    assert read_bootstrap_checkpoint(tmp_path / "missing") is None


def test_write_replaces_an_existing_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    write_bootstrap_checkpoint(tmp_path, bootstrap_metadata(MetadataVersion.IBP_3_9_IV0))
    (tmp_path / (BOOTSTRAP_FILE + ".tmp")).write_bytes(b"left by a crash")
    write_bootstrap_checkpoint(tmp_path, BOOTSTRAP)
    assert read_bootstrap_checkpoint(tmp_path) == BOOTSTRAP
    assert sorted(os.listdir(tmp_path)) == [BOOTSTRAP_FILE]


def test_a_failed_write_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    old = bootstrap_metadata(MetadataVersion.IBP_3_9_IV0)
    write_bootstrap_checkpoint(tmp_path, old)

    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(OSError, match="No space left"):
        write_bootstrap_checkpoint(tmp_path, BOOTSTRAP)
    monkeypatch.undo()
    assert read_bootstrap_checkpoint(tmp_path) == old
    assert sorted(os.listdir(tmp_path)) == [BOOTSTRAP_FILE]


def test_writing_into_a_missing_directory_is_a_storage_error(tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="is not a directory"):
        write_bootstrap_checkpoint(tmp_path / "missing", BOOTSTRAP)


def test_write_fsyncs_the_file_and_the_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    write_bootstrap_checkpoint(tmp_path, BOOTSTRAP)
    assert len(synced) == 2  # the temp file, then the directory after the rename


# ---------------------------------------------------------------------------------------------------
# Corrupt files: StorageError naming the file, never anything else


def write_raw(directory: Path, data: bytes) -> Path:
    path = directory / BOOTSTRAP_FILE
    path.write_bytes(data)
    return path


def read_error(directory: Path) -> str:
    with pytest.raises(StorageError) as e:
        read_bootstrap_checkpoint(directory)
    message = str(e.value)
    assert f"{directory / BOOTSTRAP_FILE} is not a valid bootstrap checkpoint" in message
    return message


def test_every_truncation_is_a_storage_error(tmp_path: Path) -> None:
    data = encode_bootstrap_checkpoint(BOOTSTRAP, timestamp_ms=0)
    for n in range(len(data)):
        write_raw(tmp_path, data[:n])
        read_error(tmp_path)


def test_trailing_bytes_are_a_storage_error(tmp_path: Path) -> None:
    write_raw(tmp_path, encode_bootstrap_checkpoint(BOOTSTRAP, timestamp_ms=0) + b"\x00" * 5)
    assert "5 bytes after the last whole batch" in read_error(tmp_path)


def test_a_flipped_byte_is_a_storage_error(tmp_path: Path) -> None:
    data = encode_bootstrap_checkpoint(BOOTSTRAP, timestamp_ms=0)
    starts = [0]
    while starts[-1] < len(data):
        starts.append(starts[-1] + 12 + int.from_bytes(data[starts[-1] + 8 : starts[-1] + 12], "big"))
    # Every byte but the partitionLeaderEpoch (bytes 12..15 of a batch: outside the CRC, and not
    # checked by Kafka's reader either).
    epoch_bytes = {s + k for s in starts for k in range(12, 16)}
    for i in range(len(data)):
        if i in epoch_bytes:
            continue
        bad = bytearray(data)
        bad[i] ^= 0x55
        write_raw(tmp_path, bytes(bad))
        read_error(tmp_path)


def header_batch(offset: int = 0) -> bytes:
    return build_control_batch(
        ControlType.SNAPSHOT_HEADER,
        snapshot_header_record(0),
        base_offset=offset,
        partition_leader_epoch=0,
        timestamp_ms=0,
    )


def footer_batch(offset: int) -> bytes:
    return build_control_batch(
        ControlType.SNAPSHOT_FOOTER,
        snapshot_footer_record(),
        base_offset=offset,
        partition_leader_epoch=0,
        timestamp_ms=0,
    )


def data_batch(records: list[ApiMessageAndVersion], values: tuple[bytes, ...] = ()) -> bytes:
    return build_batch(
        [SimpleRecord(value=encode_record(r)) for r in records] + [SimpleRecord(value=v) for v in values],
        base_offset=1,
        partition_leader_epoch=0,
    )


MV_RECORD = make_record(T.FEATURE_LEVEL, name="metadata.version", feature_level=25)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "expected a snapshot"),
        (data_batch([MV_RECORD]), "expected a snapshot"),
        (header_batch() + data_batch([MV_RECORD]), "expected a snapshot"),
        (data_batch([MV_RECORD]) + footer_batch(2), "expected a snapshot"),
        (footer_batch(0) + data_batch([MV_RECORD]) + footer_batch(2), "does not start with a SnapshotHeader"),
        (header_batch() + data_batch([MV_RECORD]) + footer_batch(5), "batch at offset 5; expected offset 2"),
        (header_batch() + data_batch([MV_RECORD]) + header_batch(2), "does not end with a SnapshotFooter"),
        (header_batch() + footer_batch(1), "no FeatureLevelRecord for metadata.version"),
        (
            header_batch() + data_batch([MV_RECORD, make_record(T.NO_OP)]) + footer_batch(3),
            "holds a NoOpRecord",
        ),
        (header_batch() + data_batch([MV_RECORD], (b"\x01\x0e\x00\x00",)) + footer_batch(3), "not modelled"),
        (
            header_batch() + data_batch([MV_RECORD], (b"\x01\x63\x00\x00",)) + footer_batch(3),
            "unknown metadata record type 99",
        ),
        (header_batch() + data_batch([MV_RECORD], (b"\x02",)) + footer_batch(3), "frame version 2"),
    ],
)
def test_files_that_are_not_bootstrap_checkpoints_are_storage_errors(
    tmp_path: Path, data: bytes, message: str
) -> None:
    write_raw(tmp_path, data)
    assert message in read_error(tmp_path)


def test_a_null_record_value_is_a_storage_error(tmp_path: Path) -> None:
    batch = build_batch([SimpleRecord(value=None)], base_offset=1, partition_leader_epoch=0)
    write_raw(tmp_path, header_batch() + batch + footer_batch(2))
    assert "record at offset 1 has no value" in read_error(tmp_path)


def test_an_unreadable_file_is_a_storage_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / BOOTSTRAP_FILE).mkdir()
    with pytest.raises(StorageError, match=f"cannot read {tmp_path / BOOTSTRAP_FILE}"):
        read_bootstrap_checkpoint(tmp_path)


def test_decode_accepts_a_file_with_several_data_batches() -> None:
    # Kafka's BatchAccumulator may split records over batches; every data batch counts.
    group = make_record(T.FEATURE_LEVEL, name="group.version", feature_level=1)
    second = build_batch([SimpleRecord(value=encode_record(group))], base_offset=2, partition_leader_epoch=0)
    data = header_batch() + data_batch([MV_RECORD]) + second + footer_batch(3)
    expected = BootstrapMetadata({"metadata.version": 25, "group.version": 1})
    assert decode_bootstrap_checkpoint(data) == expected


def test_module_names_the_kafka_file() -> None:
    assert bootstrap_file.BOOTSTRAP_FILE == "bootstrap.checkpoint"
