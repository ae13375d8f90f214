"""``kraft dump-log``: Kafka's line layout, JSON lines, torn tails, corrupt batches, bad paths."""

from __future__ import annotations

import base64
import contextlib
import io
import json
import struct
import uuid
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from kraft.cli import dump_log
from kraft.metadata.bootstrap import bootstrap_metadata
from kraft.metadata.records import ApiMessageAndVersion, MetadataRecordType, encode_record, make_record
from kraft.records.batch import Header, SimpleRecord, assign_offsets_and_epoch, build_batch, crc32c
from kraft.records.control import (
    ControlType,
    VoterEndpoint,
    VoterInfo,
    build_control_batch,
    build_control_batch_of,
    control_key,
    encode_control_value,
    end_txn_marker,
    kraft_version_record,
    leader_change_message,
    snapshot_footer_record,
    snapshot_header_record,
    voters_record,
)
from kraft.storage.bootstrap_file import write_bootstrap_checkpoint

SEGMENT = "00000000000000000000.log"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = dump_log.main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def leader_change_batch(base_offset: int = 0, epoch: int = 1) -> bytes:
    return build_control_batch(
        ControlType.LEADER_CHANGE,
        leader_change_message(1, [1, 2, 3], [1, 2]),
        base_offset=base_offset,
        partition_leader_epoch=epoch,
        timestamp_ms=1000,
    )


def data_batch(base_offset: int, values: list[bytes], epoch: int = 1) -> bytes:
    return build_batch(
        [SimpleRecord(key=None, value=v) for v in values],
        base_offset=base_offset,
        partition_leader_epoch=epoch,
        timestamp_ms=2000 + base_offset,
    )


@pytest.fixture
def segment(tmp_path: Path) -> Path:
    path = tmp_path / SEGMENT
    path.write_bytes(leader_change_batch() + data_batch(1, [b"one", b"two"]))
    return path


def test_batch_lines_follow_kafka_dump_log(segment: Path) -> None:
    code, out, err = run(str(segment))
    assert code == 0 and err == ""
    lc = leader_change_batch()
    lc_crc = struct.unpack_from(">I", lc, 17)[0]
    lines = out.splitlines()
    assert lines[0] == f"Dumping {segment}"
    assert lines[1] == "Log starting offset: 0"
    assert lines[2] == (
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 "
        "producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false isControl: true "
        "deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1000 size: "
        f"{len(lc)} magic: 2 compresscodec: none crc: {lc_crc} isvalid: true"
    )
    assert lines[3].startswith("baseOffset: 1 lastOffset: 2 count: 2 ")
    assert f" position: {len(lc)} CreateTime: 2001 " in lines[3]
    assert len(lines) == 4  # no record lines without --print-records


def test_print_records_shows_record_metadata_and_decoded_control_payloads(segment: Path) -> None:
    code, out, _ = run("--print-records", str(segment))
    assert code == 0
    records = [line for line in out.splitlines() if line.startswith("|")]
    assert records[0] == (
        "| offset: 0 CreateTime: 1000 keySize: 4 valueSize: 34 sequence: -1 headerKeys: [] LeaderChange "
        '{"version":0,"leaderId":1,"voters":[{"voterId":1,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"},'
        '{"voterId":2,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"},'
        '{"voterId":3,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}],'
        '"grantingVoters":[{"voterId":1,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"},'
        '{"voterId":2,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}]}'
    )
    # --print-records (kraft's) also shows the data records' values; Kafka's --deep-iteration does not.
    assert records[1] == (
        "| offset: 1 CreateTime: 2001 keySize: -1 valueSize: 3 sequence: -1 headerKeys: [] payload: one"
    )
    _, deep, _ = run("--deep-iteration", str(segment))
    assert [line for line in deep.splitlines() if line.startswith("| offset: 1 ")] == [
        "| offset: 1 CreateTime: 2001 keySize: -1 valueSize: 3 sequence: -1 headerKeys: []"
    ]
    assert records[2].startswith("| offset: 2 ")


def test_print_data_log_prints_keys_and_payloads(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000005.log"
    path.write_bytes(
        build_batch(
            [
                SimpleRecord(
                    key=b"k",
                    value=b"hello",
                    headers=(Header(key="a", value=b"1"), Header(key="b", value=None)),
                )
            ],
            base_offset=5,
        )
    )
    _, out, _ = run("--print-data-log", str(path))
    assert "Log starting offset: 5" in out
    assert out.splitlines()[-1] == (
        "| offset: 5 CreateTime: 0 keySize: 1 valueSize: 5 sequence: -1 headerKeys: [a,b] "
        "key: k payload: hello"
    )
    _, out, _ = run("--print-data-log", "--skip-record-metadata", str(path))
    assert out.splitlines()[-1] == "| key: k payload: hello"


def test_snapshot_control_records_and_header_line(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000042-0000000007.checkpoint"
    voters = [
        VoterInfo(
            voter_id=1, directory_id=uuid.UUID(int=1), endpoints=(VoterEndpoint(name="C", host="h", port=9),)
        )
    ]
    path.write_bytes(
        build_control_batch_of(
            [
                (ControlType.SNAPSHOT_HEADER, snapshot_header_record(99)),
                (ControlType.KRAFT_VERSION, kraft_version_record(1)),
                (ControlType.KRAFT_VOTERS, voters_record(voters)),
            ],
            base_offset=0,
            partition_leader_epoch=7,
            timestamp_ms=5,
        )
        + build_control_batch(
            ControlType.SNAPSHOT_FOOTER,
            snapshot_footer_record(),
            base_offset=3,
            partition_leader_epoch=7,
            timestamp_ms=5,
        )
    )
    code, out, _ = run("--deep-iteration", str(path))
    assert code == 0
    assert "Snapshot end offset: 42, epoch: 7" in out.splitlines()
    assert ' SnapshotHeader {"version":0,"lastContainedLogTimestamp":99}' in out
    assert ' KRaftVersion {"version":0,"kRaftVersion":1}' in out
    assert (
        ' KRaftVoters {"version":0,"voters":[{"voterId":1,"voterDirectoryId":"AAAAAAAAAAAAAAAAAAAAAQ"' in out
    )
    assert out.rstrip().endswith(' SnapshotFooter {"version":0}')


def test_bootstrap_snapshot_header_line(tmp_path: Path) -> None:
    path = tmp_path / "bootstrap.checkpoint"
    path.write_bytes(leader_change_batch())
    assert run(str(path))[1].splitlines()[1] == "KRaft bootstrap snapshot"


def test_end_txn_markers_and_unknown_control_types(tmp_path: Path) -> None:
    path = tmp_path / SEGMENT
    marker = build_batch(
        [
            SimpleRecord(
                key=control_key(ControlType.COMMIT),
                value=encode_control_value(ControlType.COMMIT, end_txn_marker(4)),
            ),
            SimpleRecord(key=b"\x00\x00\x00\x63", value=b"?"),
        ],
        is_control=True,
    )
    path.write_bytes(marker)
    _, out, _ = run("--print-records", str(path))
    assert " endTxnMarker: COMMIT coordinatorEpoch: 4" in out
    assert " controlType: UNKNOWN(99)" in out


def test_torn_tail_is_reported_as_invalid_bytes(segment: Path) -> None:
    whole = segment.read_bytes()
    partial = data_batch(3, [b"three"])[:40]
    segment.write_bytes(whole + partial)
    code, out, err = run("--print-records", str(segment))
    assert code == 0 and err == ""
    assert out.splitlines()[-1] == f"Found 40 invalid bytes at the end of {SEGMENT}"
    assert out.count("baseOffset:") == 2


def test_a_crc_mismatch_is_shown_and_iteration_continues(tmp_path: Path) -> None:
    bad = bytearray(data_batch(0, [b"abc"]))
    bad[-2] ^= 0xFF
    path = tmp_path / SEGMENT
    path.write_bytes(bytes(bad) + data_batch(1, [b"def"]))
    code, out, _ = run("--print-records", str(path))
    assert code == 0
    batch_lines = [line for line in out.splitlines() if line.startswith("baseOffset")]
    assert batch_lines[0].endswith("isvalid: false") and batch_lines[1].endswith("isvalid: true")
    assert "| offset: 1 " in out


def test_a_batch_whose_records_do_not_parse_gets_an_error_line(tmp_path: Path) -> None:
    bad = bytearray(data_batch(0, [b"abc"]))
    struct.pack_into(">i", bad, 57, 5)  # recordsCount lies
    struct.pack_into(">I", bad, 17, crc32c(bytes(bad[21:])))
    path = tmp_path / SEGMENT
    path.write_bytes(bytes(bad) + data_batch(1, [b"def"]))
    code, out, _ = run("--print-records", str(path))
    assert code == 0
    assert "| error: batch at offset 0 (position 0): batch claims 5 records" in out
    assert "| offset: 1 " in out


def test_an_impossible_length_stops_the_file_with_an_error(tmp_path: Path) -> None:
    first = data_batch(0, [b"abc"])
    bad = bytearray(data_batch(1, [b"def"]))
    struct.pack_into(">i", bad, 8, 3)
    path = tmp_path / SEGMENT
    path.write_bytes(first + bytes(bad))
    code, out, err = run(str(path))
    assert code == 1
    assert f"stopping at position {len(first)}: batch at position {len(first)} has impossible length 3" in err
    assert out.splitlines()[-1] == f"Found {len(bad)} invalid bytes at the end of {SEGMENT}"


def test_missing_files_and_directories_fail_clearly(tmp_path: Path, segment: Path) -> None:
    code, out, err = run(str(tmp_path / "missing.log"), str(tmp_path), str(segment))
    assert code == 1
    assert f"{tmp_path / 'missing.log'}: no such file" in err
    assert f"{tmp_path} is a directory" in err
    assert "baseOffset: 1 " in out  # the good file is still dumped


def test_unknown_suffixes_are_ignored_like_kafka(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000000.txnindex"  # Kafka's transaction index: not read here
    path.write_bytes(b"\x00" * 8)
    code, _, err = run(str(path))
    assert code == 0 and f"Ignoring unknown file {path}" in err


def test_no_files_is_a_usage_error() -> None:
    code, _, err = run()
    assert code == 2 and "no files given" in err


def test_files_option_takes_a_comma_separated_list(segment: Path, tmp_path: Path) -> None:
    other = tmp_path / "00000000000000000003.log"
    other.write_bytes(data_batch(3, [b"x"]))
    _, out, _ = run("--files", f"{segment},{other}")
    assert out.count("Dumping ") == 2 and "Log starting offset: 3" in out


def test_max_bytes_limits_reading_and_suppresses_the_tail_report(segment: Path) -> None:
    size = len(leader_change_batch())
    _, out, _ = run("--max-bytes", str(size + 10), str(segment))
    assert out.count("baseOffset:") == 1 and "invalid bytes" not in out


def test_empty_segment(tmp_path: Path) -> None:
    path = tmp_path / SEGMENT
    path.write_bytes(b"")
    code, out, _ = run(str(path))
    assert code == 0 and out.splitlines() == [f"Dumping {path}", "Log starting offset: 0"]


def test_non_consecutive_offsets_are_reported_on_stderr(tmp_path: Path) -> None:
    path = tmp_path / SEGMENT
    path.write_bytes(data_batch(0, [b"a"]) + data_batch(5, [b"b"]))
    _, _, err = run("--print-records", str(path))
    assert "Non-consecutive offsets in" in err and "  0 is followed by 5" in err


def test_json_lines_have_batch_and_record_fields(segment: Path) -> None:
    code, out, err = run("--json", str(segment))
    assert code == 0
    assert f"Dumping {segment}" in err  # stdout stays pure JSON lines
    lines = [json.loads(line) for line in out.splitlines()]
    assert len(lines) == 2
    first, second = lines
    assert first["base_offset"] == 0 and first["last_offset"] == 0 and first["partition_leader_epoch"] == 1
    assert first["crc_valid"] is True and first["is_control"] is True and first["position"] == 0
    (lc,) = first["records"]
    assert lc["control_type"] == "LEADER_CHANGE" and lc["offset"] == 0
    assert base64.b64decode(lc["key"]) == b"\x00\x00\x00\x02"
    assert lc["control"]["leaderId"] == 1
    assert second["is_control"] is False and second["size"] == len(data_batch(1, [b"one", b"two"]))
    assert [(r["offset"], r["key"], base64.b64decode(r["value"])) for r in second["records"]] == [
        (1, None, b"one"),
        (2, None, b"two"),
    ]
    assert "control_type" not in second["records"][0]


def test_json_reports_crc_failures(tmp_path: Path) -> None:
    bad = bytearray(data_batch(0, [b"abc"]))
    bad[-1] ^= 1
    path = tmp_path / SEGMENT
    path.write_bytes(bytes(bad))
    (obj,) = [json.loads(line) for line in run("--json", str(path))[1].splitlines()]
    assert obj["crc_valid"] is False


@pytest.mark.parametrize("codec", [0, 1, 3, 4])
def test_reads_segments_written_by_kafka_python(tmp_path: Path, codec: int) -> None:
    segment = b""
    for base in (0, 50):
        builder = DefaultRecordBatchBuilder(2, codec, False, -1, -1, -1, 10**7)
        for i in range(50):
            builder.append(i, 1_000 + base + i, b"key", b"value-%d" % (base + i) * 5, [("h", b"v")])
        # kafka-python leaves baseOffset and the leader epoch to the broker; assign them as a log would.
        segment += assign_offsets_and_epoch(bytes(builder.build()), base, 3)
    path = tmp_path / SEGMENT
    path.write_bytes(segment)
    code, out, err = run("--json", str(path))
    assert code == 0 and "Non-consecutive" not in err
    batches = [json.loads(line) for line in out.splitlines()]
    assert [b["base_offset"] for b in batches] == [0, 50]
    assert all(b["crc_valid"] and b["partition_leader_epoch"] == 3 for b in batches)
    assert {b["compression"] for b in batches} == {["none", "gzip", "snappy", "lz4", "zstd"][codec]}
    values = [base64.b64decode(r["value"]) for b in batches for r in b["records"]]
    assert values == [b"value-%d" % i * 5 for i in range(100)]
    _, text, _ = run("--print-records", str(path))
    assert "| offset: 99 CreateTime: 1099 keySize: 3 valueSize: 40 sequence: -1 headerKeys: [h]" in text


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_only_for_large_files_on_a_terminal() -> None:
    assert not dump_log._want_progress(io.StringIO(), 10**10)
    assert not dump_log._want_progress(FakeTty(), 10)
    assert dump_log._want_progress(FakeTty(), dump_log.PROGRESS_MIN_BYTES)


def test_progress_bar_goes_to_stderr_and_leaves_stdout_alone(
    segment: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dump_log, "PROGRESS_MIN_BYTES", 1)
    out, err = io.StringIO(), FakeTty()
    assert dump_log.main([str(segment)], out=out, err=err) == 0
    assert out.getvalue() == run(str(segment))[1]
    assert "B" in err.getvalue()  # tqdm drew something


# ---------------------------------------------------------------------------------------------------
# --cluster-metadata-decoder (spec 8.3)

TOPIC_ID = uuid.UUID(int=1)  # AAAAAAAAAAAAAAAAAAAAAQ
DIR_ID = uuid.UUID(int=2)  # AAAAAAAAAAAAAAAAAAAAAg


def metadata_records() -> list[ApiMessageAndVersion]:
    return [
        make_record(MetadataRecordType.TOPIC, name="orders", topic_id=TOPIC_ID),
        make_record(
            MetadataRecordType.PARTITION,
            partition_id=0,
            topic_id=TOPIC_ID,
            replicas=[1, 2],
            isr=[1, 2],
            leader=1,
            leader_epoch=0,
            partition_epoch=0,
            directories=[DIR_ID, DIR_ID],
        ),
        make_record(
            MetadataRecordType.PARTITION_CHANGE,
            2,
            partition_id=0,
            topic_id=TOPIC_ID,
            isr=[2],
            leader=2,
            eligible_leader_replicas=[0, 3],
        ),
    ]


def metadata_segment(tmp_path: Path, extra_values: tuple[bytes, ...] = ()) -> Path:
    values = [encode_record(r) for r in metadata_records()] + list(extra_values)
    path = tmp_path / SEGMENT
    path.write_bytes(
        leader_change_batch()
        + data_batch(1, values, epoch=1)
        + data_batch(1 + len(values), [encode_record(make_record(MetadataRecordType.NO_OP))])
    )
    return path


def payload_lines(out: str) -> list[str]:
    return [line.split(" payload: ", 1)[1] for line in out.splitlines() if " payload: " in line]


def test_cluster_metadata_decoder_prints_each_record_as_kafka_does(tmp_path: Path) -> None:
    path = metadata_segment(tmp_path)
    code, out, err = run("--cluster-metadata-decoder", str(path))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[:2] == [f"Dumping {path}", "Log starting offset: 0"]
    # The control record prints as without the flag; data records get their payload.
    assert (
        lines[3].startswith("| offset: 0 CreateTime: 1000 keySize: 4 valueSize: 34 ")
        and " LeaderChange " in lines[3]
    )
    assert " payload: " not in lines[3]
    change_size = len(encode_record(metadata_records()[2]))
    assert lines[5:8] == [
        "| offset: 1 CreateTime: 2001 keySize: -1 valueSize: 27 sequence: -1 headerKeys: [] payload: "
        '{"type":"TOPIC_RECORD","version":0,"data":{"name":"orders","topicId":"AAAAAAAAAAAAAAAAAAAAAQ"}}',
        "| offset: 2 CreateTime: 2001 keySize: -1 valueSize: 89 sequence: -1 headerKeys: [] payload: "
        '{"type":"PARTITION_RECORD","version":2,"data":{"partitionId":0,"topicId":"AAAAAAAAAAAAAAAAAAAAAQ",'
        '"replicas":[1,2],"isr":[1,2],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":0,'
        '"partitionEpoch":0,"directories":["AAAAAAAAAAAAAAAAAAAAAg","AAAAAAAAAAAAAAAAAAAAAg"]}}',
        f"| offset: 3 CreateTime: 2001 keySize: -1 valueSize: {change_size} sequence: -1 headerKeys: [] "
        "payload: "
        '{"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":0,'
        '"topicId":"AAAAAAAAAAAAAAAAAAAAAQ","isr":[2],"leader":2,"eligibleLeaderReplicas":[0,3]}}',
    ]
    assert lines[-1].endswith(' payload: {"type":"NO_OP_RECORD","version":0,"data":{}}')


def test_cluster_metadata_decoder_with_skip_record_metadata(tmp_path: Path) -> None:
    path = metadata_segment(tmp_path)
    _, out, _ = run("--cluster-metadata-decoder", "--skip-record-metadata", str(path))
    records = [line for line in out.splitlines() if line.startswith("|")]
    assert records[1] == (
        '|  payload: {"type":"TOPIC_RECORD","version":0,'
        '"data":{"name":"orders","topicId":"AAAAAAAAAAAAAAAAAAAAAQ"}}'
    )


def test_cluster_metadata_decoder_wins_over_print_data_log(tmp_path: Path) -> None:
    path = metadata_segment(tmp_path)
    _, out, _ = run("--print-data-log", "--cluster-metadata-decoder", str(path))
    assert payload_lines(out)[0].startswith('{"type":"TOPIC_RECORD"')


def test_non_ascii_names_print_as_text_like_kafkas_jackson(tmp_path: Path) -> None:
    path = tmp_path / SEGMENT
    record = make_record(MetadataRecordType.TOPIC, name="tópic", topic_id=TOPIC_ID)
    path.write_bytes(data_batch(0, [encode_record(record)]))
    _, out, _ = run("--cluster-metadata-decoder", str(path))
    assert payload_lines(out) == [
        '{"type":"TOPIC_RECORD","version":0,"data":{"name":"tópic","topicId":"AAAAAAAAAAAAAAAAAAAAAQ"}}'
    ]


def test_unmodelled_records_print_their_type_and_size(tmp_path: Path) -> None:
    acl = bytes((1, 14, 0)) + b"\x07opaque-acl-body"
    path = metadata_segment(tmp_path, (acl,))
    code, out, err = run("--cluster-metadata-decoder", str(path))
    assert code == 0 and err == ""
    assert payload_lines(out)[3] == "<CLIENT_QUOTA_RECORD (type 14, version 0): 16-byte body not decoded>"


def test_an_undecodable_record_is_shown_and_the_dump_goes_on_then_fails(tmp_path: Path) -> None:
    truncated = encode_record(metadata_records()[0])[:-3]
    unknown = bytes((1, 99, 0, 0))
    path = metadata_segment(tmp_path, (truncated, unknown, b"\x00\x14\x00\x00"))
    code, out, err = run("--cluster-metadata-decoder", str(path))
    assert code == 1
    payloads = payload_lines(out)
    assert payloads[3].startswith("<undecodable: malformed metadata record: ")
    assert payloads[4] == "<undecodable: unknown metadata record type 99>"
    assert payloads[5] == "<undecodable: metadata record frame version 0; only 1 is valid>"
    assert payloads[6] == '{"type":"NO_OP_RECORD","version":0,"data":{}}'  # the records after are still read
    assert f"kraft dump-log: {path}: 3 record(s) could not be decoded as metadata records" in err


def test_a_record_without_a_value_is_undecodable(tmp_path: Path) -> None:
    path = tmp_path / SEGMENT
    path.write_bytes(build_batch([SimpleRecord(key=b"k", value=None)]))
    code, out, _ = run("--cluster-metadata-decoder", str(path))
    assert code == 1 and payload_lines(out) == ["<undecodable: the record has no value>"]


def test_cluster_metadata_decoder_reads_snapshots(tmp_path: Path) -> None:
    path = tmp_path / "00000000000000000042-0000000007.checkpoint"
    values = [encode_record(r) for r in metadata_records()]
    path.write_bytes(
        build_control_batch(
            ControlType.SNAPSHOT_HEADER,
            snapshot_header_record(99),
            base_offset=0,
            partition_leader_epoch=7,
            timestamp_ms=5,
        )
        + data_batch(1, values, epoch=7)
        + build_control_batch(
            ControlType.SNAPSHOT_FOOTER,
            snapshot_footer_record(),
            base_offset=4,
            partition_leader_epoch=7,
            timestamp_ms=5,
        )
    )
    code, out, _ = run("--cluster-metadata-decoder", str(path))
    assert code == 0
    assert "Snapshot end offset: 42, epoch: 7" in out
    assert ' SnapshotHeader {"version":0,"lastContainedLogTimestamp":99}' in out
    assert [json.loads(p)["type"] for p in payload_lines(out)] == [
        "TOPIC_RECORD",
        "PARTITION_RECORD",
        "PARTITION_CHANGE_RECORD",
    ]
    assert out.rstrip().endswith(' SnapshotFooter {"version":0}')


def test_cluster_metadata_decoder_reads_the_bootstrap_checkpoint_kraft_storage_format_writes(
    tmp_path: Path,
) -> None:
    write_bootstrap_checkpoint(tmp_path, bootstrap_metadata(), timestamp_ms=7)
    code, out, err = run("--cluster-metadata-decoder", str(tmp_path / "bootstrap.checkpoint"))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[1] == "KRaft bootstrap snapshot"
    assert payload_lines(out) == [
        '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":25}}',
        '{"type":"FEATURE_LEVEL_RECORD","version":0,"data":'
        '{"name":"eligible.leader.replicas.version","featureLevel":1}}',
    ]
    assert [line.split(" lastOffset:")[0] for line in lines if line.startswith("baseOffset")] == [
        "baseOffset: 0",
        "baseOffset: 1",
        "baseOffset: 3",
    ]
    assert all("partitionLeaderEpoch: 0 " in line for line in lines if line.startswith("baseOffset"))


def test_cluster_metadata_decoder_in_json_mode(tmp_path: Path) -> None:
    acl = bytes((1, 14, 1)) + b"\x00" * 5
    path = metadata_segment(tmp_path, (acl, b"\x01\x02"))
    code, out, err = run("--json", "--cluster-metadata-decoder", str(path))
    assert code == 1 and "1 record(s) could not be decoded" in err
    control, data, noop = [json.loads(line) for line in out.splitlines()]
    assert "payload" not in control["records"][0] and control["records"][0]["control_type"] == "LEADER_CHANGE"
    records = data["records"]
    assert records[0]["payload"] == {
        "type": "TOPIC_RECORD",
        "version": 0,
        "data": {"name": "orders", "topicId": "AAAAAAAAAAAAAAAAAAAAAQ"},
    }
    assert records[2]["payload"]["data"]["eligibleLeaderReplicas"] == [0, 3]
    assert base64.b64decode(records[0]["value"]) == encode_record(metadata_records()[0])  # raw value kept
    assert records[3]["payload_unmodelled"] == {
        "type_id": 14,
        "type": "CLIENT_QUOTA_RECORD",
        "version": 1,
        "size": 5,
    }
    assert records[4]["payload_error"].startswith("malformed metadata record: ")
    assert noop["records"][0]["payload"] == {"type": "NO_OP_RECORD", "version": 0, "data": {}}


def test_json_without_the_decoder_has_no_payload_keys(tmp_path: Path) -> None:
    path = metadata_segment(tmp_path)
    _, out, _ = run("--json", str(path))
    assert all("payload" not in r for line in out.splitlines() for r in json.loads(line)["records"])


def test_help_describes_the_cluster_metadata_decoder() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert dump_log.main(["--help"]) == 0
    text = " ".join(out.getvalue().split())
    assert "--cluster-metadata-decoder" in text and "implies --print-records" in text
    assert "bootstrap.checkpoint" in text
