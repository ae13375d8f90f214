"""``kraft dump-log`` on a data partition's files, as written by ``PartitionLog``: segments with
keys and values (text or hex), ``.index``/``.timeindex`` entries checked against the segment, and
producer-state ``.snapshot`` files; and the same segment files read by kafka-python's decoder."""

from __future__ import annotations

import base64
import io
import json
import struct
import uuid
from pathlib import Path

import pytest
from kafka.record import MemoryRecords

from kraft.cli import dump_log
from kraft.records.batch import Compression, SimpleRecord, build_batch
from kraft.storage.partition_log import PartitionLog
from kraft.storage.segment_index import IndexConfig

TOPIC_ID = uuid.UUID("6ba7b810-9dad-41d1-80b4-00c04fd430c8")
NOW_MS = 50_000


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = dump_log.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def _batch(
    records: list[tuple[bytes | None, bytes | None]],
    *,
    ts: int,
    compression: int = Compression.NONE,
    **kw: int,
) -> bytes:
    return build_batch(
        [SimpleRecord(key=k, value=v, timestamp=ts + i) for i, (k, v) in enumerate(records)],
        timestamp_ms=ts,
        compression=compression,
        **kw,
    )


@pytest.fixture
def partition(tmp_path: Path) -> PartitionLog:
    log = PartitionLog(
        tmp_path,
        "events",
        0,
        TOPIC_ID,
        segment_bytes=600,
        index=IndexConfig(interval_bytes=150, max_bytes=800),
    )
    log.append_as_leader(
        _batch([(b"k1", b"hello"), (None, b"\xff\x00binary")], ts=1_000),
        1,
        now_ms=NOW_MS,
        log_append_time=False,
    )
    for seq in range(6):
        log.append_as_leader(
            _batch(
                [(b"id-%d" % seq, b"v" * 40)],
                ts=2_000 + seq,
                producer_id=9,
                producer_epoch=1,
                base_sequence=seq,
            ),
            2,
            now_ms=NOW_MS,
            log_append_time=False,
        )
    log.append_as_leader(
        _batch([(b"z", b"gz" * 30), (b"y", None)], ts=3_000, compression=Compression.GZIP),
        2,
        now_ms=NOW_MS,
        log_append_time=False,
    )
    log.flush()
    log.close()
    return log


def _files(log: PartitionLog, suffix: str) -> list[str]:
    return sorted(str(p) for p in log.directory.glob(f"*{suffix}"))


def test_print_records_shows_keys_and_values_as_text_or_hex(partition: PartitionLog) -> None:
    first = _files(partition, ".log")[0]
    code, out, _ = run("--print-records", first)
    assert code == 0
    records = [line for line in out.splitlines() if line.startswith("|")]
    assert records[0] == (
        "| offset: 0 CreateTime: 1000 keySize: 2 valueSize: 5 sequence: -1 headerKeys: [] "
        "key: k1 payload: hello"
    )
    assert records[1].endswith(" payload (hex): ff0062696e617279")
    assert "producerId: 9 producerEpoch: 1 partitionLeaderEpoch: 2" in out


def test_json_records_of_every_segment_match_what_was_appended(partition: PartitionLog) -> None:
    code, out, _ = run("--json", *_files(partition, ".log"))
    assert code == 0
    values = [
        (r["offset"], r["key"] and base64.b64decode(r["key"]), r["value"] and base64.b64decode(r["value"]))
        for line in out.splitlines()
        for r in json.loads(line)["records"]
    ]
    assert values[:2] == [(0, b"k1", b"hello"), (1, None, b"\xff\x00binary")]
    assert values[-2:] == [(8, b"z", b"gz" * 30), (9, b"y", None)]
    assert [v[0] for v in values] == list(range(10))


def test_kafka_python_reads_the_segment_files_the_same(partition: PartitionLog) -> None:
    ours: list[tuple[int, int, bytes | None, bytes | None, int]] = []
    for path in _files(partition, ".log"):
        _, out, _ = run("--json", path)
        for line in out.splitlines():
            batch = json.loads(line)
            for r in batch["records"]:
                key = r["key"] and base64.b64decode(r["key"])
                value = r["value"] and base64.b64decode(r["value"])
                ours.append((r["offset"], batch["partition_leader_epoch"], key, value, r["timestamp"]))
    theirs = []
    for path in _files(partition, ".log"):
        records = MemoryRecords(Path(path).read_bytes())
        while (batch := records.next_batch()) is not None:
            assert batch.validate_crc()
            for r in batch:
                theirs.append((r.offset, batch.leader_epoch, r.key, r.value, r.timestamp))
    assert len(theirs) == 10 and theirs == ours


def test_index_and_time_index_entries_are_printed_and_checked(partition: PartitionLog) -> None:
    index = _files(partition, ".index")[0]
    code, out, err = run(index)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == f"Dumping {index}"
    entries = [tuple(int(w) for w in line.split()[1::2]) for line in lines[1:]]
    assert entries and all(line.startswith("offset: ") for line in lines[1:])
    code, out, _ = run(_files(partition, ".timeindex")[0])
    assert code == 0 and out.splitlines()[1].startswith("timestamp: ")
    # A wrong entry: Kafka's "Mismatches in" report, and the exit status says so.
    Path(index).write_bytes(struct.pack(">ii", 0, entries[0][1]))  # offset 0 at another batch
    code, _, err = run(index)
    assert code == 1 and f"Mismatches in :{index}" in err and "Index offset: 0, log offset:" in err


def test_a_producer_snapshot_is_printed(partition: PartitionLog) -> None:
    snapshot = _files(partition, ".snapshot")[-1]
    code, out, _ = run(snapshot)
    assert code == 0
    assert out.splitlines()[1] == (
        "producerId: 9 producerEpoch: 1 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty "
        "lastTimestamp: 2005 firstSequence: 5 lastSequence: 5 lastOffset: 7 offsetDelta: 0 timestamp: 2005"
    )
    _, out, _ = run("--json", snapshot)
    assert json.loads(out)["last_sequence"] == 5
    Path(snapshot).write_bytes(b"\x00\x01\x00\x00\x00\x00")
    code, _, err = run(snapshot)
    assert code == 1 and "unknown version" not in err and snapshot in err
