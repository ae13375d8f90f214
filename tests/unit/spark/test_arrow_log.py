"""``kraft.spark.arrow_log`` without Spark: planning read units and decoding them into Arrow
batches that equal ``kraft dump-log --cluster-metadata-decoder --json`` record for record, with
the integrity rules of ``MetadataLog`` recovery (corruption fails naming file and offset; a torn tail
of the last segment ends the read)."""

from __future__ import annotations

import base64
import gzip
import io
import itertools
import json
import os
import shutil
import struct
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")

import lz4.frame  # noqa: E402
import zstandard  # noqa: E402

from kraft.cli import dump_log  # noqa: E402
from kraft.metadata.records import MetadataRecordType as T  # noqa: E402
from kraft.metadata.records import encode_record, make_record  # noqa: E402
from kraft.raft.listener import SnapshotWriter  # noqa: E402
from kraft.raft.types import OffsetAndEpoch  # noqa: E402
from kraft.records.batch import (  # noqa: E402
    HEADER_SIZE,
    TIMESTAMP_TYPE_MASK,
    Compression,
    Header,
    SimpleRecord,
    assign_offsets_and_epoch,
    build_batch,
    crc32c,
    decode_batch,
    iter_batch_headers,
)
from kraft.records.control import ControlType, build_control_batch, leader_change_message  # noqa: E402
from kraft.spark import arrow_log  # noqa: E402
from kraft.spark.arrow_log import (  # noqa: E402
    ALL_ROWS,
    LogReadError,
    RowFilter,
    decode_records,
    locate,
    plan_units,
    read_log,
    read_unit,
)
from kraft.spark.columns import RECORD_SCHEMA  # noqa: E402
from kraft.storage.meta_properties import MetaProperties, write_meta_properties  # noqa: E402
from kraft.storage.metadata_log import MetadataLog  # noqa: E402

NODE = 3
TOPIC_ID = uuid.UUID("6c1a0b52-3b8e-4d55-9a0e-8f3f2c1d4e5f")
ACL_VALUE = bytes([1, 14, 0]) + b"\x05acl-body"  # CLIENT_QUOTA_RECORD v0: read past, not modelled
RAFT_TEST_VALUE = b"1:1:7:" + b"." * 30  # a kraft test-raft-server payload: not a metadata record


def _values(i: int) -> list[SimpleRecord]:
    values = [
        make_record(T.TOPIC, name=f"t{i}", topic_id=TOPIC_ID),
        make_record(T.PARTITION_CHANGE, partition_id=i, topic_id=TOPIC_ID, leader=2),
        make_record(T.CONFIG, resource_type=2, resource_name=f"t{i}", name="x", value="é ü"),
        make_record(T.FENCE_BROKER, id=i, epoch=5),
        make_record(T.NO_OP),
    ]
    out = [SimpleRecord(value=encode_record(v)) for v in values]
    if i % 3 == 0:
        out.append(SimpleRecord(value=ACL_VALUE))
    if i % 4 == 1:
        out.append(SimpleRecord(value=RAFT_TEST_VALUE))
        out.append(SimpleRecord(value=None))
        out.append(
            SimpleRecord(key=b"k", value=encode_record(values[0]), headers=(Header(key="h", value=b"v"),))
        )
    return out


def _leader_change(leader: int, epoch: int) -> bytes:
    return build_control_batch(
        ControlType.LEADER_CHANGE,
        leader_change_message(leader, [1, 2, 3], [leader]),
        base_offset=0,
        partition_leader_epoch=epoch,
        timestamp_ms=1_700_000_000_000,
    )


def write_log(
    log_dir: Path, *, batches: int = 24, segment_bytes: int = 700, snapshot_at: int | None = 20
) -> Path:
    """A metadata log dir with meta.properties, several segments, two epochs and a snapshot."""
    log_dir.mkdir(parents=True, exist_ok=True)
    write_meta_properties(log_dir, MetaProperties(cluster_id="MkU3OEVBNTcwNTJENDM2Qg", node_id=NODE))
    log = MetadataLog(log_dir / "__cluster_metadata-0", segment_bytes=segment_bytes)
    log.append_as_leader(_leader_change(1, 1), 1)
    for i in range(batches):
        epoch = 1 if i < batches // 2 else 2
        if i == batches // 2:
            log.append_as_leader(_leader_change(2, 2), 2)
        log.append_as_leader(build_batch(_values(i), timestamp_ms=1_700_000_000_000 + i), epoch)
    log.flush()
    if snapshot_at is not None:
        raw = log.create_new_snapshot(OffsetAndEpoch(snapshot_at, 1))
        assert raw is not None
        writer = SnapshotWriter(raw, 1_700_000_000_005)
        writer.append([v.value or b"" for v in _values(0)[:5]])
        writer.append([encode_record(make_record(T.NO_OP))] * 3)
        writer.freeze()
    log.close()
    return log_dir


@pytest.fixture
def log_dir(tmp_path: Path) -> Path:
    return write_log(tmp_path / "metadata")


def partition_dir(log_dir: Path) -> Path:
    return log_dir / "__cluster_metadata-0"


def segments(log_dir: Path) -> list[Path]:
    return sorted(partition_dir(log_dir).glob("*.log"))


def rows(table: Any) -> list[dict[str, Any]]:
    """Table rows with the timestamp as microseconds and the payload parsed."""
    table = table.set_column(
        table.schema.get_field_index("timestamp"), "timestamp", table.column("timestamp").cast(pa.int64())
    )
    out = table.to_pylist()
    for row in out:
        row["payload"] = None if row["payload"] is None else json.loads(row["payload"])
    return out


def dump_log_rows(
    paths: list[str], node: int | None, snapshot_offsets: dict[str, int]
) -> list[dict[str, Any]]:
    """What ``kraft dump-log --cluster-metadata-decoder --json`` prints, as RECORD_SCHEMA rows."""
    out = io.StringIO()
    dump_log.main(["--cluster-metadata-decoder", "--json", *paths], out=out, err=io.StringIO())
    expected = []
    for line in out.getvalue().splitlines():
        batch = json.loads(line)
        snapshot = batch["file"] in snapshot_offsets
        for r in batch["records"]:
            payload, unmodelled = r.get("payload"), r.get("payload_unmodelled")
            typed = payload or unmodelled
            expected.append(
                {
                    "offset": snapshot_offsets[batch["file"]] if snapshot else r["offset"],
                    "leader_epoch": batch["partition_leader_epoch"],
                    "batch_base_offset": batch["base_offset"],
                    "timestamp": r["timestamp"] * 1000,
                    "is_control": batch["is_control"],
                    "control_type": r.get("control_type"),
                    "record_type": typed["type"] if typed else None,
                    "record_version": typed["version"] if typed else None,
                    "key": None if r["key"] is None else base64.b64decode(r["key"]),
                    "value": None if r["value"] is None else base64.b64decode(r["value"]),
                    "payload": r.get("control")
                    if batch["is_control"]
                    else (payload["data"] if payload else None),
                    "from_snapshot": snapshot,
                    "node": node,
                    "file": batch["file"],
                }
            )
    return expected


def files_of(units: list[Any]) -> list[str]:
    return list(dict.fromkeys(u.path for u in units))


def flip_byte(path: Path, position: int) -> None:
    data = bytearray(path.read_bytes())
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))


# ------------------------------------------------------------------------------------------------


def test_rows_equal_dump_log_record_for_record(log_dir: Path) -> None:
    units = plan_units(log_dir, include_snapshots=True)
    snapshot_files = {u.path: u.snapshot_offset for u in units if u.snapshot_offset is not None}
    assert snapshot_files, "the fixture has a snapshot"
    got = rows(read_log(log_dir, include_snapshots=True))
    want = dump_log_rows(files_of(units), NODE, snapshot_files)  # type: ignore[arg-type]
    assert len(got) == len(want) > 150
    for g, w in zip(got, want):
        assert g == w
    kinds = {r["record_type"] for r in got}
    assert {"TOPIC_RECORD", "PARTITION_CHANGE_RECORD", "NO_OP_RECORD", "CLIENT_QUOTA_RECORD"} <= kinds
    # The non-metadata values stay bytes; the read-past type keeps its name but no payload.
    raft = [r for r in got if r["value"] == RAFT_TEST_VALUE]
    assert raft and all(r["record_type"] is None and r["payload"] is None for r in raft)
    acl = [r for r in got if r["value"] == ACL_VALUE]
    assert acl and all(r["record_version"] == 0 and r["payload"] is None for r in acl)
    controls = [r for r in got if r["is_control"]]
    assert {r["control_type"] for r in controls} >= {"LEADER_CHANGE", "SNAPSHOT_HEADER", "SNAPSHOT_FOOTER"}
    assert all(r["payload"] is not None for r in controls)
    # Non-ASCII text is kept as such in the payload column (Kafka's Jackson output).
    table = read_log(log_dir)
    assert any("é ü" in p for p in table.column("payload").to_pylist() if p)


def test_snapshot_rows_carry_the_snapshot_end_offset_and_come_first(log_dir: Path) -> None:
    table = read_log(log_dir, include_snapshots=True)
    assert table.schema == RECORD_SCHEMA
    data = rows(table)
    snap = [r for r in data if r["from_snapshot"]]
    assert snap == data[: len(snap)]
    assert {r["offset"] for r in snap} == {19}
    assert snap[0]["control_type"] == "SNAPSHOT_HEADER" and snap[-1]["control_type"] == "SNAPSHOT_FOOTER"
    assert not any(r["from_snapshot"] for r in rows(read_log(log_dir)))


def test_every_path_form_reads_the_same_rows(log_dir: Path) -> None:
    whole = read_log(log_dir)
    assert read_log(partition_dir(log_dir)).equals(whole)
    assert sum(read_log(p).num_rows for p in segments(log_dir)) == whole.num_rows
    one = segments(log_dir)[1]
    assert set(read_log(one).column("file").to_pylist()) == {str(one)}
    assert set(read_log(one).column("node").to_pylist()) == {NODE}
    # A snapshot file given alone is read without include_snapshots.
    snap = next(partition_dir(log_dir).glob("*.checkpoint"))
    assert set(read_log(snap).column("from_snapshot").to_pylist()) == {True}
    # bootstrap.checkpoint in the metadata log dir: a snapshot ending at offset 0.
    shutil.copy(snap, log_dir / "bootstrap.checkpoint")
    assert set(read_log(log_dir / "bootstrap.checkpoint").column("offset").to_pylist()) == {-1}
    with pytest.raises(Exception, match="does not exist"):
        locate(log_dir / "nope")
    with pytest.raises(Exception, match="not a segment"):
        locate(log_dir / "meta.properties")
    with pytest.raises(Exception, match="no __cluster_metadata-0"):
        locate(log_dir.parent)


def test_node_is_null_without_meta_properties(log_dir: Path) -> None:
    os.unlink(log_dir / "meta.properties")
    assert set(read_log(log_dir).column("node").to_pylist()) == {None}


def test_one_unit_per_segment_and_a_large_one_splits_at_batch_boundaries(tmp_path: Path) -> None:
    log_dir = write_log(tmp_path / "big", batches=30, segment_bytes=1 << 20, snapshot_at=None)
    (segment,) = segments(log_dir)
    assert len(plan_units(log_dir)) == 1
    units = plan_units(log_dir, max_bytes_per_unit=1000)
    assert len(units) > 5
    size = segment.stat().st_size
    assert units[0].start == 0 and units[-1].end == size
    starts = {pos: h.base_offset for pos, h in iter_batch_headers(segment.read_bytes())}
    for a, b in itertools.pairwise(units):
        assert a.end == b.start and b.start in starts
        assert b.first_offset == starts[b.start] == a.end_offset
    split = pa.Table.from_batches([b for u in units for b in read_unit(u)], schema=RECORD_SCHEMA)
    assert split.equals(read_log(log_dir))


def test_batches_have_the_schema_and_about_batch_rows_rows(log_dir: Path) -> None:
    unit = max(plan_units(log_dir), key=lambda u: u.size)
    batches = list(read_unit(unit, batch_rows=4))
    assert len(batches) > 1
    assert all(b.schema == RECORD_SCHEMA for b in batches)
    assert all(b.num_rows >= 4 for b in batches[:-1])


def test_offset_filters_prune_units_and_rows(log_dir: Path) -> None:
    everything = rows(read_log(log_dir))
    all_units = plan_units(log_dir)
    rf = ALL_ROWS.offset_at_least(60).offset_below(90)
    units = plan_units(log_dir, row_filter=rf)
    assert 0 < len(units) < len(all_units)
    got = [r["offset"] for r in rows(read_log(log_dir, row_filter=rf))]
    assert got == [r["offset"] for r in everything if 60 <= r["offset"] < 90]
    picked = ALL_ROWS.offset_in([5, 77, 78, 10_000])
    # The two segments holding 5 and 77-78, and the last one, whose end is open (10_000 may come).
    assert len(plan_units(log_dir, row_filter=picked)) == 3
    assert [r["offset"] for r in rows(read_log(log_dir, row_filter=picked))] == [5, 77, 78]
    assert plan_units(log_dir, row_filter=ALL_ROWS.offset_in([1]).offset_at_least(2)) == []
    # A snapshot unit passes or fails as a whole on its offset (end - 1 = 19).
    with_snap = plan_units(log_dir, include_snapshots=True, row_filter=ALL_ROWS.offset_at_least(20))
    assert all(u.snapshot_offset is None for u in with_snap)


def test_record_type_filters_prune_rows(log_dir: Path) -> None:
    everything = rows(read_log(log_dir))
    wanted = {"TOPIC_RECORD", "CLIENT_QUOTA_RECORD"}
    got = rows(read_log(log_dir, row_filter=ALL_ROWS.record_type_in(wanted)))
    assert got == [r for r in everything if r["record_type"] in wanted]
    present = rows(read_log(log_dir, row_filter=ALL_ROWS.record_type_present()))
    assert present == [r for r in everything if r["record_type"] is not None]
    assert (
        read_log(
            log_dir, row_filter=ALL_ROWS.record_type_in(["TOPIC_RECORD"]).record_type_in(["NO_OP_RECORD"])
        ).num_rows
        == 0
    )


def test_row_filter_algebra() -> None:
    rf = RowFilter().offset_at_least(10).offset_below(20)
    assert rf.may_contain(0, 11) and not rf.may_contain(0, 10) and not rf.may_contain(20, None)
    assert rf.may_contain(15, None) and rf.covers(12, 18) and not rf.covers(5, 18)
    assert not rf.offset_in([5, 25]).may_contain(0, None)
    both = rf.intersect(RowFilter(start=15, record_types=frozenset({"A"}), record_type_not_null=True))
    assert (both.start, both.end, both.record_types, both.record_type_not_null) == (15, 20, {"A"}, True)
    assert both.admits_record_type("A") and not both.admits_record_type(None)
    assert ALL_ROWS.admits_record_type(None)


# ------------------------------------------------------------------------------------------------
# Integrity


def test_a_corrupt_byte_in_the_middle_fails_naming_the_file_and_offset(log_dir: Path) -> None:
    segment = segments(log_dir)[1]
    (pos, header), *_ = list(iter_batch_headers(segment.read_bytes()))[1:]
    flip_byte(segment, pos + 70)  # inside the second batch's records: its CRC no longer matches
    with pytest.raises(LogReadError) as info:
        read_log(log_dir)
    message = str(info.value)
    assert (
        str(segment) in message and f"position {pos}" in message and f"offset {header.base_offset}" in message
    )
    assert "CRC mismatch" in message
    assert (info.value.file, info.value.position, info.value.offset) == (
        str(segment),
        pos,
        header.base_offset,
    )
    # Units that do not hold the bad batch still read.
    assert read_log(log_dir, row_filter=ALL_ROWS.offset_at_least(header.next_offset + 50)).num_rows > 0


def test_a_corrupt_batch_in_the_last_segment_followed_by_a_valid_one_is_not_a_torn_tail(
    log_dir: Path,
) -> None:
    last = segments(log_dir)[-1]
    positions = [pos for pos, _ in iter_batch_headers(last.read_bytes())]
    assert len(positions) >= 2
    flip_byte(last, positions[0] + 70)
    with pytest.raises(LogReadError, match="a valid batch follows"):
        read_log(log_dir)


def test_a_torn_tail_is_read_up_to_the_last_complete_batch(log_dir: Path) -> None:
    whole = rows(read_log(log_dir))
    last = segments(log_dir)[-1]
    data = last.read_bytes()
    pos, header = list(iter_batch_headers(data))[-1]
    last.write_bytes(data[: pos + 40])  # a crash in the middle of the last write
    assert rows(read_log(log_dir)) == [r for r in whole if r["offset"] < header.base_offset]
    last.write_bytes(data + bytes(100))  # preallocated zeros after the last batch
    assert rows(read_log(log_dir)) == whole


def test_a_partial_batch_at_the_end_of_a_non_last_segment_is_corruption(log_dir: Path) -> None:
    first = segments(log_dir)[0]
    first.write_bytes(first.read_bytes()[:-10])
    with pytest.raises(LogReadError, match="only the last segment can have a torn tail"):
        read_log(log_dir)


def test_a_missing_segment_is_reported(log_dir: Path) -> None:
    os.unlink(segments(log_dir)[2])
    with pytest.raises(LogReadError, match="missing data"):
        read_log(log_dir)


def test_a_decreasing_epoch_is_corruption(tmp_path: Path) -> None:
    part = tmp_path / "__cluster_metadata-0"
    part.mkdir()
    one = build_batch([SimpleRecord(value=encode_record(make_record(T.NO_OP)))])
    data = b"".join(assign_offsets_and_epoch(one, i, e) for i, e in enumerate([2, 1, 2]))
    (part / f"{0:020d}.log").write_bytes(data)
    with pytest.raises(LogReadError, match="epoch 1 is below the previous 2"):
        read_log(part)


def test_a_corrupt_snapshot_fails(log_dir: Path) -> None:
    snap = next(partition_dir(log_dir).glob("*.checkpoint"))
    flip_byte(snap, snap.stat().st_size - 5)
    with pytest.raises(LogReadError, match="never torn"):
        read_log(log_dir, include_snapshots=True)
    assert read_log(log_dir).num_rows > 0  # the log alone does not read it


# ------------------------------------------------------------------------------------------------
# The C decoder (kraft.records._native_decode): plain data batches go header -> C -> Arrow buffers;
# everything else, and anything it declines, takes the Python path. Both give the same batches.


def reframe(
    batch: bytes,
    *,
    attributes: int | None = None,
    max_timestamp: int | None = None,
    records_count: int | None = None,
    body: bytes | None = None,
) -> bytes:
    """``batch`` with some header fields or its records replaced, and a matching CRC."""
    out = bytearray(batch[:HEADER_SIZE] + (batch[HEADER_SIZE:] if body is None else body))
    struct.pack_into(">i", out, 8, len(out) - 12)
    if attributes is not None:
        struct.pack_into(">h", out, 21, attributes)
    if max_timestamp is not None:
        struct.pack_into(">q", out, 35, max_timestamp)
    if records_count is not None:
        struct.pack_into(">i", out, 57, records_count)
    struct.pack_into(">I", out, 17, crc32c(memoryview(out)[21:]))
    return bytes(out)


def _plain(i: int, n: int = 7) -> list[SimpleRecord]:
    """test-raft-server-like values with null, empty and binary keys and values, and timestamps
    that go backwards within the batch."""
    return [
        SimpleRecord(
            key=None if j % 3 == 0 else (b"" if j % 3 == 1 else bytes([j, 0, 255])),
            value=None if j == 4 else (b"" if j == 5 else f"1:1:{i}-{j}:".encode().ljust(40 + j, b".")),
            timestamp=1_700_000_000_000 + i * 10 - j,
        )
        for j in range(n)
    ]


def data_batches() -> list[bytes]:
    """Plain data batches, and among them each kind of batch that must take the Python path."""
    plain = [build_batch(_plain(i), timestamp_ms=0) for i in range(12)]
    body = build_batch(_plain(99), timestamp_ms=0)
    return [
        _leader_change(1, 1),
        *plain[:3],
        # LogAppendTime: every record carries maxTimestamp.
        reframe(plain[3], attributes=TIMESTAMP_TYPE_MASK, max_timestamp=1_800_000_000_000),
        reframe(body, attributes=Compression.GZIP, body=gzip.compress(body[HEADER_SIZE:])),
        reframe(body, attributes=Compression.LZ4, body=lz4.frame.compress(body[HEADER_SIZE:])),
        reframe(body, attributes=Compression.ZSTD, body=zstandard.compress(body[HEADER_SIZE:])),
        *plain[4:6],
        # Python: record headers; a metadata record among plain values; a value that starts like
        # one but does not decode.
        build_batch([*_plain(50, 2), SimpleRecord(value=b"v", headers=(Header(key="h", value=None),))]),
        build_batch([*_plain(51, 2), SimpleRecord(value=encode_record(make_record(T.NO_OP)))]),
        build_batch([SimpleRecord(value=b"\x01 not a metadata record")]),
        # No records (a batch emptied by compaction): none, whatever follows the header.
        reframe(plain[6], records_count=0),
        *plain[7:],
    ]


def python_only(batch: bytes) -> bool:
    """Whether read_unit must decode ``batch`` in Python (see ``data_batches``)."""
    decoded = decode_batch(batch)
    return decoded.is_control or any(r.headers or (r.value or b"\0")[0] == 1 for r in decoded.records)


def write_data_log(log_dir: Path, *, segment_bytes: int = 2000) -> Path:
    """A data log (and a snapshot of plain values) in several segments and two epochs."""
    log_dir.mkdir(parents=True, exist_ok=True)
    write_meta_properties(log_dir, MetaProperties(cluster_id="MkU3OEVBNTcwNTJENDM2Qg", node_id=NODE))
    log = MetadataLog(log_dir / "__cluster_metadata-0", segment_bytes=segment_bytes)
    batches = data_batches()
    for i, batch in enumerate(batches):
        log.append_as_leader(batch, 1 if i < len(batches) // 2 else 2)
    log.flush()
    raw = log.create_new_snapshot(OffsetAndEpoch(20, 1))
    assert raw is not None
    writer = SnapshotWriter(raw, 1)
    writer.append([b"plain-" + bytes([i]) * i for i in range(9)])
    writer.append_batch(batches[4])  # LogAppendTime
    writer.freeze()
    log.close()
    return log_dir


Outcome = tuple[str, Any]


def outcome(fn: Any) -> Outcome:
    """What ``fn()`` returns (batches as Python rows) or raises (the error's type, text, fields)."""
    try:
        batches = list(fn())
    except LogReadError as e:
        return "error", (str(e), e.file, e.position, e.offset)
    assert all(b.schema == RECORD_SCHEMA for b in batches)
    return "batches", [(b.num_rows, b.to_pylist()) for b in batches]


def both_paths(monkeypatch: pytest.MonkeyPatch, fn: Any) -> Outcome:
    """``outcome(fn)`` with the C decoder and forced onto the Python path, which must agree."""
    monkeypatch.setattr(arrow_log, "USE_NATIVE", True)
    native = outcome(fn)
    monkeypatch.setattr(arrow_log, "USE_NATIVE", False)
    python = outcome(fn)
    assert native == python
    return native


@pytest.fixture
def data_log(tmp_path: Path) -> Path:
    return write_data_log(tmp_path / "data")


FILTERS = [
    ALL_ROWS,
    ALL_ROWS.offset_at_least(9).offset_below(40),  # cuts batches: those rows take the Python path
    ALL_ROWS.offset_in([3, 4, 30, 31, 32, 33, 34, 35, 36]),
    ALL_ROWS.record_type_present(),
    ALL_ROWS.record_type_in(["NO_OP_RECORD"]),
]


@pytest.mark.parametrize("which", ["data", "metadata"])
@pytest.mark.parametrize("batch_rows", [5, 4096])
@pytest.mark.parametrize("row_filter", FILTERS, ids=range(len(FILTERS)))
def test_the_c_decoder_yields_the_same_batches_as_the_python_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, which: str, batch_rows: int, row_filter: RowFilter
) -> None:
    log_dir = write_data_log(tmp_path / "d") if which == "data" else write_log(tmp_path / "m")
    units = plan_units(log_dir, include_snapshots=True, row_filter=row_filter)
    assert len(units) > (2 if row_filter == ALL_ROWS else 0)
    rows_read = 0
    for unit in units:
        kind, got = both_paths(monkeypatch, lambda u=unit: read_unit(u, row_filter, batch_rows=batch_rows))
        assert kind == "batches"
        rows_read += sum(n for n, _ in got)
    if row_filter == ALL_ROWS:
        assert rows_read > 100
    # The same bytes held in memory (a stream's fetched batches), through decode_records.
    for path in files_of(units):
        data = Path(path).read_bytes()
        snap = next((u.snapshot_offset for u in units if u.path == path), None)
        kind, _ = both_paths(
            monkeypatch,
            lambda d=data, s=snap: decode_records(
                d, source="q", node=1, snapshot_offset=s, row_filter=row_filter, batch_rows=batch_rows
            ),
        )
        assert kind == "batches"


def test_plain_data_batches_are_decoded_without_record_objects(
    data_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded: list[int] = []
    real = arrow_log.decode_batch

    def counting(data: bytes, pos: int, **kwargs: Any) -> Any:
        decoded.append(pos)
        return real(data, pos, **kwargs)

    monkeypatch.setattr(arrow_log, "decode_batch", counting)
    monkeypatch.setattr(arrow_log, "USE_NATIVE", True)
    table = read_log(data_log, include_snapshots=True)
    units = plan_units(data_log, include_snapshots=True)
    batches = [
        bytes(data[pos : pos + h.size_in_bytes])
        for path in files_of(units)
        for data in [Path(path).read_bytes()]
        for pos, h in iter_batch_headers(data)
    ]
    assert len(decoded) == sum(python_only(b) for b in batches) < len(batches) // 2
    # The rows the C decoder gathered: LogAppendTime, nulls and empties, snapshot offsets.
    got = rows(table)
    assert {r["timestamp"] for r in got if r["timestamp"] == 1_800_000_000_000_000}
    assert {None, b""} <= {r["key"] for r in got} and {None, b""} <= {r["value"] for r in got}
    snapshot_plain = [r for r in got if r["from_snapshot"] and not r["is_control"]]
    assert len(snapshot_plain) == 16 and {r["offset"] for r in snapshot_plain} == {19}


def test_corruption_fails_the_same_way_on_both_paths(data_log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Records that do not parse under a valid CRC, in a plain batch, on disk and in memory.
    segment = segments(data_log)[0]
    data = segment.read_bytes()
    (pos, header), *_ = [(p, h) for p, h in iter_batch_headers(data) if not h.is_control]
    batch = data[pos : pos + header.size_in_bytes]
    for bad in (
        reframe(batch, records_count=header.records_count + 1),
        reframe(batch, body=batch[HEADER_SIZE:-1] + b"\x02"),  # header count 1, then nothing
        reframe(batch, attributes=Compression.GZIP, body=b"not gzip"),
    ):
        segment.write_bytes(data[:pos] + bad + data[pos + len(batch) :])
        kind, error = both_paths(monkeypatch, lambda: read_unit(plan_units(segment)[0]))
        assert kind == "error" and "corrupt records" in error[0] and error[2:] == (pos, header.base_offset)
        kind, error = both_paths(monkeypatch, lambda b=bad: decode_records(b, source="q"))
        assert kind == "error" and "corrupt records" in error[0]
    # A flipped byte in a plain batch: a CRC mismatch, or a torn tail in the last segment.
    segment.write_bytes(data)
    flip_byte(segment, pos + 80)
    kind, error = both_paths(monkeypatch, lambda: read_log(data_log).to_batches())
    assert kind == "error" and "CRC mismatch" in error[0]
    last = segments(data_log)[-1]
    last_data = last.read_bytes()
    last_pos = list(iter_batch_headers(last_data))[-1][0]
    segment.write_bytes(data)
    last.write_bytes(last_data[: last_pos + 70])
    kind, got = both_paths(monkeypatch, lambda: read_log(data_log).to_batches())
    assert kind == "batches" and got


def test_the_c_decoder_is_on_unless_the_environment_turns_it_off() -> None:
    # The extension must be built where the tests run (an optional build that failed would
    # otherwise go unnoticed), and arrow_log must use it by default.
    assert arrow_log._NativeBuilder is not None
    probe = "import kraft.spark.arrow_log as a; print(a.USE_NATIVE)"
    for value, expected in (("", "True"), ("0", "True"), ("1", "False")):
        env = {**os.environ, arrow_log.PURE_PYTHON_ENV: value}
        out = subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == expected


def test_interleaved_and_abandoned_reads_do_not_share_bytes(data_log: Path, log_dir: Path) -> None:
    # read_unit reuses one read buffer per process, but only once a read is over.
    units = plan_units(data_log, include_snapshots=True) + plan_units(log_dir, include_snapshots=True)
    alone = [[b.to_pylist() for b in read_unit(u, batch_rows=3)] for u in units]
    abandoned = read_unit(units[-1], batch_rows=3)
    next(abandoned)
    readers = [read_unit(u, batch_rows=3) for u in units]
    interleaved: list[list[Any]] = [[] for _ in units]
    live = set(range(len(units)))
    while live:  # one batch from each unfinished read in turn
        for i in sorted(live):
            batch = next(readers[i], None)
            if batch is None:
                live.discard(i)
            else:
                interleaved[i].append(batch.to_pylist())
    assert interleaved == alone
    # Reads after those (smaller and larger units, in another order) are still right.
    assert [[b.to_pylist() for b in read_unit(u, batch_rows=3)] for u in reversed(units)] == alone[::-1]
    assert [b.to_pylist() for b in abandoned] == alone[-1][1:]
