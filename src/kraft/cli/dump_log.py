"""``kraft dump-log``: print the batches and records of log segments and snapshots.

Text output follows Kafka's ``kafka-dump-log`` (``DumpLogSegments``) line for line, so scripts and
eyes trained on one read the other::

    Dumping 00000000000000000000.log
    Log starting offset: 0
    baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1
      producerEpoch: -1 partitionLeaderEpoch: 1 isTransactional: false isControl: true
      deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1000 size: 106 magic: 2
      compresscodec: none crc: 123 isvalid: true            (one line in the real output)
    | offset: 0 CreateTime: 1000 keySize: 4 valueSize: 34 sequence: -1 headerKeys: [] LeaderChange: {...}

``--cluster-metadata-decoder`` (implies ``--print-records``) decodes each data record as a metadata
record (``kraft.metadata.records``) and appends it as Kafka does (spec 8.3)::

    | offset: 5 CreateTime: 1000 keySize: -1 valueSize: 30 sequence: -1 headerKeys: [] payload:
      {"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":0,"topicId":"...",...}}

Control records print as without the flag. A record of a type kraft does not model (SCRAM,
quotas, tokens) prints ``payload: <CLIENT_QUOTA_RECORD (type 14, version 0): 37-byte body
not decoded>``; one that does not decode prints ``payload: <undecodable: reason>``, the dump goes
on, and the exit status is 1. Works the same on segments, snapshots and ``bootstrap.checkpoint``.

Differences from Kafka, all additive: LEADER_CHANGE records are decoded (Kafka prints only
``controlType: LEADER_CHANGE(2)``); a batch whose records cannot be decoded gets a ``| error:``
line instead of a stack trace; a structurally broken batch (impossible length, wrong magic) ends
the file with a message instead of an exception. ``--json`` prints one JSON object per batch per
line on stdout (headers and notes go to stderr), with keys and values in base64; with
``--cluster-metadata-decoder`` each data record also gets ``payload`` (the decoded record as
above), ``payload_unmodelled`` (``{"type_id", "type", "version", "size"}``) or ``payload_error``.

A data partition's other files print as Kafka's tool prints them: ``.index`` one ``offset: O
position: P`` line per entry (each checked against the segment beside it: the batch at P must end
at O; mismatches go to stderr as Kafka's ``Mismatches in :<file>`` report and make the status 1),
``.timeindex`` one ``timestamp: T offset: O`` line per entry, a producer-state ``.snapshot`` one line
per producer; with ``--json`` one object per entry. ``--print-records`` (kraft's) prints every
record with its key and value: text when they are UTF-8, else ``key (hex): ...`` (Kafka's decoder
would replace the bytes); ``--deep-iteration`` keeps Kafka's meaning (record metadata only).

Only reads files; never writes. Exit status: 0 when every file was read (a torn tail or a bad CRC
is reported, not failed), 1 when a file is missing, is a directory or could not be parsed to its
end, or a metadata record could not be decoded, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import base64
import json
import mmap
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from kraft.cli.common import parse_args, streams
from kraft.common.errors import CorruptRecordError, StorageError
from kraft.metadata.records import (
    UNMODELLED_RECORD_NAMES,
    UnmodelledRecord,
    UnmodelledRecordError,
    decode_record,
    record_to_json,
)
from kraft.records.batch import (
    BatchHeader,
    Record,
    RecordBatch,
    batch_crc_valid,
    decode_batch,
    next_batch_size,
    read_batch_header,
)
from kraft.records.control import (
    CONTROL_MESSAGES,
    ControlType,
    control_type_id,
    control_type_of,
    decode_control_record,
    to_kafka_json,
)
from kraft.storage.producer_snapshot import decode_producer_snapshot
from kraft.storage.segment_index import decode_offset_index, decode_time_index

LOG_SUFFIX = ".log"
SNAPSHOT_SUFFIX = ".checkpoint"
OFFSET_INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
PRODUCER_SNAPSHOT_SUFFIX = ".snapshot"
BOOTSTRAP_SNAPSHOT = "bootstrap.checkpoint"  # Kafka's BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME
_SNAPSHOT_NAME = re.compile(r"^(\d{20})-(\d{10})\.checkpoint$")
# A progress bar is only worth drawing for files that take a noticeable time to read.
PROGRESS_MIN_BYTES = 64 * 1024 * 1024
_INT32_MAX = 2**31 - 1


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="kraft dump-log",
        description="Parse log segments (*.log), their indexes (*.index, *.timeindex), producer-state "
        "snapshots (*.snapshot) and metadata snapshots (*.checkpoint, bootstrap.checkpoint) and print "
        "them, like Kafka's kafka-dump-log.",
    )
    p.add_argument("paths", nargs="*", metavar="FILE", help="log segment or snapshot files")
    p.add_argument(
        "--files", default=None, help="comma-separated files to dump (Kafka's form; added to FILE...)"
    )
    p.add_argument(
        "--deep-iteration",
        dest="deep",
        action="store_true",
        help="print every record's metadata, not only batch headers (Kafka's flag)",
    )
    p.add_argument(
        "--print-data-log",
        "--print-records",
        dest="print_data_log",
        action="store_true",
        help="print every record with its key and value: text when UTF-8, else hex "
        "(implies --deep-iteration)",
    )
    p.add_argument(
        "--cluster-metadata-decoder",
        dest="metadata_decoder",
        action="store_true",
        help="decode data records as __cluster_metadata records and print each as "
        '\'payload: {"type":...,"version":...,"data":{...}}\' (implies --print-records)',
    )
    p.add_argument("--skip-record-metadata", action="store_true", help="omit per-record metadata")
    p.add_argument(
        "--max-bytes",
        type=int,
        default=_INT32_MAX,
        help="read at most this many bytes of each file (default: all)",
    )
    p.add_argument("--json", action="store_true", help="one JSON object per batch per line")
    return p


@dataclass(slots=True)
class _Options:
    deep: bool
    print_data: bool
    skip_metadata: bool
    max_bytes: int
    as_json: bool
    metadata_decoder: bool = False


@dataclass(slots=True)
class _FileResult:
    ok: bool = True
    non_consecutive: list[tuple[int, int]] = field(default_factory=list)
    undecodable: int = 0  # metadata records that did not decode (--cluster-metadata-decoder)


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    out, err = streams(out, err)
    ns = parse_args(build_parser(), argv)
    if isinstance(ns, int):
        return ns
    paths: list[str] = list(ns.paths)
    if ns.files:
        paths += [p for p in ns.files.split(",") if p]
    if not paths:
        print("kraft dump-log: no files given (pass FILE... or --files a.log,b.log)", file=err)
        return 2
    if ns.max_bytes <= 0:
        print(f"kraft dump-log: --max-bytes must be positive, got {ns.max_bytes}", file=err)
        return 2
    opts = _Options(
        deep=ns.deep or ns.print_data_log or ns.metadata_decoder,
        print_data=ns.print_data_log,
        skip_metadata=ns.skip_record_metadata,
        max_bytes=ns.max_bytes,
        as_json=ns.json,
        metadata_decoder=ns.metadata_decoder,
    )
    status = 0
    non_consecutive: dict[str, list[tuple[int, int]]] = {}
    for path in paths:
        result = _dump_path(path, opts, out, err)
        if result.undecodable:
            print(
                f"kraft dump-log: {path}: {result.undecodable} record(s) could not be decoded "
                "as metadata records",
                file=err,
            )
            status = 1
        if not result.ok:
            status = 1
        if result.non_consecutive:
            non_consecutive[os.path.abspath(path)] = result.non_consecutive
    for name, pairs in non_consecutive.items():
        print(f"Non-consecutive offsets in {name}", file=err)
        for first, second in pairs:
            print(f"  {first} is followed by {second}", file=err)
    return status


def _dump_path(path: str, opts: _Options, out: TextIO, err: TextIO) -> _FileResult:
    # In JSON mode stdout carries only batch objects; everything else is a note on stderr.
    info = err if opts.as_json else out
    print(f"Dumping {path}", file=info)
    if os.path.isdir(path):
        print(f"kraft dump-log: {path} is a directory; pass the .log or .checkpoint files in it", file=err)
        return _FileResult(ok=False)
    name = os.path.basename(path)
    suffix = name[name.rfind(".") :] if "." in name else ""
    if suffix in (OFFSET_INDEX_SUFFIX, TIME_INDEX_SUFFIX, PRODUCER_SNAPSHOT_SUFFIX):
        return _dump_side_file(path, suffix, opts, out, err, info)
    if suffix not in (LOG_SUFFIX, SNAPSHOT_SUFFIX):
        if not os.path.exists(path):
            print(f"kraft dump-log: {path}: no such file", file=err)
            return _FileResult(ok=False)
        print(f"Ignoring unknown file {path}", file=err)
        return _FileResult()
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size == 0:
                return _dump_data(b"", path, opts, out, err, info)
            with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                return _dump_data(mm, path, opts, out, err, info)
    except FileNotFoundError:
        print(f"kraft dump-log: {path}: no such file", file=err)
        return _FileResult(ok=False)
    except OSError as e:
        print(f"kraft dump-log: cannot read {path}: {e.strerror or e}", file=err)
        return _FileResult(ok=False)


def _base_offset_of(path: str) -> int | None:
    stem = os.path.basename(path).split(".")[0]
    return int(stem) if stem.isdigit() else None


def _dump_side_file(
    path: str, suffix: str, opts: _Options, out: TextIO, err: TextIO, info: TextIO
) -> _FileResult:
    """A segment's ``.index`` or ``.timeindex``, or a producer-state ``.snapshot`` (DumpLogSegments'
    ``dumpIndex``, ``dumpTimeIndex``, ``dumpProducerIdSnapshot``)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except FileNotFoundError:
        print(f"kraft dump-log: {path}: no such file", file=err)
        return _FileResult(ok=False)
    except OSError as e:
        print(f"kraft dump-log: cannot read {path}: {e.strerror or e}", file=err)
        return _FileResult(ok=False)
    base = _base_offset_of(path)
    if base is None:
        print(f"kraft dump-log: cannot take an offset from the name {os.path.basename(path)}", file=err)
        return _FileResult(ok=False)
    if suffix == PRODUCER_SNAPSHOT_SUFFIX:
        return _dump_producer_snapshot(path, data, opts, out, err)
    if suffix == OFFSET_INDEX_SUFFIX:
        return _dump_offset_index(path, data, base, opts, out, err)
    for i, (timestamp, offset) in enumerate(decode_time_index(data, base)):
        if i > 0 and timestamp == 0 and offset == base:
            break  # the zeros of a preallocated file (Kafka stops there too)
        if opts.as_json:
            out.write(json.dumps({"file": path, "timestamp": timestamp, "offset": offset}) + "\n")
        else:
            out.write(f"timestamp: {timestamp} offset: {offset}\n")
    return _FileResult()


def _dump_offset_index(
    path: str, data: bytes, base: int, opts: _Options, out: TextIO, err: TextIO
) -> _FileResult:
    """Each entry, checked as Kafka does against the segment beside it: the batch at the entry's
    position must end at the entry's offset; mismatches are listed on stderr."""
    log_path = path[: -len(OFFSET_INDEX_SUFFIX)] + LOG_SUFFIX
    try:
        with open(log_path, "rb") as fh:
            log_data: bytes | None = fh.read()
    except OSError:
        log_data = None
    mismatches: list[tuple[int, int]] = []
    for i, (offset, position) in enumerate(decode_offset_index(data, base)):
        if i > 0 and offset == base:
            break  # the zeros of a preallocated file
        if log_data is not None:
            try:
                header = read_batch_header(log_data, position)
            except CorruptRecordError:
                header = None
            last = -1 if header is None else header.last_offset
            if last != offset:
                mismatches.append((offset, last))
        if opts.as_json:
            out.write(json.dumps({"file": path, "offset": offset, "position": position}) + "\n")
        else:
            out.write(f"offset: {offset} position: {position}\n")
    if mismatches:
        print(f"Mismatches in :{os.path.abspath(path)}", file=err)
        for index_offset, log_offset in mismatches:
            print(f"  Index offset: {index_offset}, log offset: {log_offset}", file=err)
    return _FileResult(ok=not mismatches)


def _dump_producer_snapshot(path: str, data: bytes, opts: _Options, out: TextIO, err: TextIO) -> _FileResult:
    try:
        entries = decode_producer_snapshot(data)
    except StorageError as exc:
        print(f"kraft dump-log: {path}: {exc}", file=err)
        return _FileResult(ok=False)
    for entry in entries:
        last = entry.batches[-1] if entry.batches else None
        if opts.as_json:
            obj: dict[str, Any] = {
                "file": path,
                "producer_id": entry.producer_id,
                "producer_epoch": entry.producer_epoch,
                "coordinator_epoch": -1,
                "current_txn_first_offset": None,
                "last_timestamp": entry.last_timestamp,
            }
            if last is not None:
                obj.update(
                    first_sequence=last.first_seq,
                    last_sequence=last.last_seq,
                    last_offset=last.last_offset,
                    offset_delta=last.last_offset - last.first_offset,
                    timestamp=last.timestamp,
                )
            out.write(json.dumps(obj) + "\n")
            continue
        line = (
            f"producerId: {entry.producer_id} producerEpoch: {entry.producer_epoch} coordinatorEpoch: -1 "
            f"currentTxnFirstOffset: OptionalLong.empty lastTimestamp: {entry.last_timestamp} "
        )
        if last is not None:
            line += (
                f"firstSequence: {last.first_seq} lastSequence: {last.last_seq} lastOffset: "
                f"{last.last_offset} offsetDelta: {last.last_offset - last.first_offset} "
                f"timestamp: {last.timestamp}"
            )
        out.write(line.rstrip() + "\n")
    return _FileResult()


def _print_file_header(path: str, info: TextIO, err: TextIO) -> None:
    name = os.path.basename(path)
    if name.endswith(LOG_SUFFIX):
        stem = name.split(".")[0]
        if stem.isdigit():
            print(f"Log starting offset: {int(stem)}", file=info)
        else:
            print(f"kraft dump-log: cannot take a starting offset from the name {name}", file=err)
    elif name == BOOTSTRAP_SNAPSHOT:
        print("KRaft bootstrap snapshot", file=info)
    else:
        m = _SNAPSHOT_NAME.match(name)
        if m:
            print(f"Snapshot end offset: {int(m.group(1))}, epoch: {int(m.group(2))}", file=info)
        else:
            print(f"kraft dump-log: {name} is not named <offset>-<epoch>.checkpoint", file=err)


def _want_progress(stream: TextIO, size: int) -> bool:
    isatty = getattr(stream, "isatty", None)
    return size >= PROGRESS_MIN_BYTES and callable(isatty) and bool(isatty())


def _dump_data(
    data: bytes | mmap.mmap, path: str, opts: _Options, out: TextIO, err: TextIO, info: TextIO
) -> _FileResult:
    _print_file_header(path, info, err)
    result = _FileResult()
    file_size = len(data)
    limit = min(file_size, opts.max_bytes)
    progress: Any = None
    if _want_progress(err, limit):
        from tqdm import tqdm

        progress = tqdm(total=limit, unit="B", unit_scale=True, file=err, desc=os.path.basename(path))
    pos = 0
    last_offset = -1
    try:
        while pos < limit:
            try:
                size = next_batch_size(data, pos, limit)
            except CorruptRecordError as e:
                print(f"kraft dump-log: {path}: stopping at position {pos}: {e}", file=err)
                result.ok = False
                break
            if size is None:
                break  # a partial batch: reported below as invalid trailing bytes
            # Slicing an mmap copies into bytes, so no buffer export outlives the map.
            chunk = data[pos : pos + size]
            header = read_batch_header(chunk)
            assert header is not None  # next_batch_size vouched for a whole, sane batch
            crc_ok = batch_crc_valid(chunk, 0, header)
            batch: RecordBatch | None = None
            decode_error: str | None = None
            if opts.deep or opts.as_json:
                try:
                    batch = decode_batch(chunk, verify_crc=False)
                except CorruptRecordError as e:
                    decode_error = str(e)
            if batch is not None:
                for rec in batch.records:
                    if last_offset != -1 and rec.offset != last_offset + 1:
                        result.non_consecutive.append((last_offset, rec.offset))
                    last_offset = rec.offset
            payloads: list[_Payload] | None = None
            if batch is not None and opts.metadata_decoder and not header.is_control:
                payloads = [_decode_payload(rec) for rec in batch.records]
                result.undecodable += sum(1 for p in payloads if p.error is not None)
            if opts.as_json:
                _print_json_batch(path, pos, header, crc_ok, batch, decode_error, payloads, out)
            else:
                _print_batch_line(pos, header, crc_ok, out)
                if opts.deep:
                    _print_records(header, batch, decode_error, payloads, opts, out)
            pos += size
            if progress is not None:
                progress.update(size)
    finally:
        if progress is not None:
            progress.close()
    trailing = file_size - pos
    # Kafka reports trailing bytes only when the whole file was read (no --max-bytes).
    if trailing > 0 and opts.max_bytes == _INT32_MAX:
        print(f"Found {trailing} invalid bytes at the end of {os.path.basename(path)}", file=info)
    return result


def _bool(v: bool) -> str:
    return "true" if v else "false"


def _print_batch_line(pos: int, h: BatchHeader, crc_ok: bool, out: TextIO) -> None:
    horizon = "OptionalLong.empty" if h.delete_horizon_ms is None else f"OptionalLong[{h.delete_horizon_ms}]"
    out.write(
        f"baseOffset: {h.base_offset} lastOffset: {h.last_offset} count: {h.records_count} "
        f"baseSequence: {h.base_sequence} lastSequence: {h.last_sequence} "
        f"producerId: {h.producer_id} producerEpoch: {h.producer_epoch} "
        f"partitionLeaderEpoch: {h.partition_leader_epoch} isTransactional: {_bool(h.is_transactional)} "
        f"isControl: {_bool(h.is_control)} deleteHorizonMs: {horizon} "
        f"position: {pos} {h.timestamp_type}: {h.max_timestamp} size: {h.size_in_bytes} magic: {h.magic} "
        f"compresscodec: {h.compression_name} crc: {h.crc} isvalid: {_bool(crc_ok)}\n"
    )


def _compact_json(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def _describe_control(rec: Record) -> str:
    """The text kafka-dump-log appends for a control record."""
    try:
        type_id = control_type_id(rec)
        kind = control_type_of(rec)
        if kind is None:
            return f" controlType: UNKNOWN({type_id})"
        _, value = decode_control_record(rec)
    except CorruptRecordError as e:
        return f" error: {e}"
    if kind in (ControlType.ABORT, ControlType.COMMIT):
        return f" endTxnMarker: {kind.name} coordinatorEpoch: {value.coordinator_epoch}"  # type: ignore[attr-defined]
    return f" {CONTROL_MESSAGES[kind].display_name} {_compact_json(to_kafka_json(value))}"


@dataclass(frozen=True, slots=True)
class _Payload:
    """One data record seen through --cluster-metadata-decoder: exactly one field is set."""

    decoded: dict[str, Any] | None = None
    unmodelled: UnmodelledRecord | None = None
    error: str | None = None

    def text(self) -> str:
        if self.decoded is not None:
            # Kafka's Jackson output: compact, non-ASCII text as is (not \u escapes).
            return json.dumps(self.decoded, separators=(",", ":"), ensure_ascii=False)
        if self.unmodelled is not None:
            u = self.unmodelled
            return (
                f"<{_unmodelled_name(u.type)} (type {u.type}, version {u.version}): "
                f"{len(u.body)}-byte body not decoded>"
            )
        return f"<undecodable: {self.error}>"


def _unmodelled_name(type_id: int) -> str:
    return UNMODELLED_RECORD_NAMES.get(type_id, f"UNKNOWN_{type_id}")


def _decode_payload(rec: Record) -> _Payload:
    if rec.value is None:
        return _Payload(error="the record has no value")
    try:
        return _Payload(decoded=record_to_json(decode_record(rec.value)))
    except UnmodelledRecordError as e:
        return _Payload(unmodelled=e.record)
    except CorruptRecordError as e:
        return _Payload(error=str(e))


def _text_or_hex(label: str, data: bytes) -> str:
    """``label: text`` when ``data`` is UTF-8 (Kafka's StringDecoder), else ``label (hex): ...``
    (Kafka would print U+FFFD replacement characters, losing the bytes)."""
    try:
        return f"{label}: {data.decode('utf-8')}"
    except UnicodeDecodeError:
        return f"{label} (hex): {data.hex()}"


def _print_records(
    header: BatchHeader,
    batch: RecordBatch | None,
    decode_error: str | None,
    payloads: list[_Payload] | None,
    opts: _Options,
    out: TextIO,
) -> None:
    if batch is None:
        out.write(f"| error: {decode_error}\n")
        return
    for i, rec in enumerate(batch.records):
        line = "| "
        if not opts.skip_metadata:
            header_keys = "[" + ",".join(h.key for h in rec.headers) + "]"
            line += (
                f"offset: {rec.offset} {header.timestamp_type}: {rec.timestamp} "
                f"keySize: {rec.key_size} valueSize: {rec.value_size} "
                f"sequence: {rec.sequence} headerKeys: {header_keys}"
            )
            if header.is_control:
                line += _describe_control(rec)
            sep = " "
        else:
            sep = ""
        if payloads is not None:
            # Kafka's ClusterMetadataLogMessageParser: metadata records have no key to print.
            line += f" payload: {payloads[i].text()}"
        elif opts.print_data and not header.is_control:
            if rec.key is not None:
                line += sep + _text_or_hex("key", rec.key)
                sep = " "
            if rec.value is not None:
                line += " " + _text_or_hex("payload", rec.value)
        out.write(line + "\n")


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _record_json(header: BatchHeader, rec: Record) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "offset": rec.offset,
        "timestamp": rec.timestamp,
        "sequence": rec.sequence,
        "key": _b64(rec.key),
        "value": _b64(rec.value),
        "headers": [{"key": h.key, "value": _b64(h.value)} for h in rec.headers],
    }
    if header.is_control:
        try:
            kind = control_type_of(rec)
            obj["control_type_id"] = control_type_id(rec)
            obj["control_type"] = "UNKNOWN" if kind is None else kind.name
            if kind is not None:
                obj["control"] = to_kafka_json(decode_control_record(rec)[1])
        except CorruptRecordError as e:
            obj["error"] = str(e)
    return obj


def _payload_json(payload: _Payload) -> dict[str, Any]:
    if payload.decoded is not None:
        return {"payload": payload.decoded}
    if payload.unmodelled is not None:
        u = payload.unmodelled
        return {
            "payload_unmodelled": {
                "type_id": u.type,
                "type": _unmodelled_name(u.type),
                "version": u.version,
                "size": len(u.body),
            }
        }
    return {"payload_error": payload.error}


def _print_json_batch(
    path: str,
    pos: int,
    h: BatchHeader,
    crc_ok: bool,
    batch: RecordBatch | None,
    decode_error: str | None,
    payloads: list[_Payload] | None,
    out: TextIO,
) -> None:
    records: list[dict[str, Any]] | None = None
    if batch is not None:
        records = [_record_json(h, r) for r in batch.records]
        for record_obj, payload in zip(records, payloads or ()):
            record_obj.update(_payload_json(payload))
    obj: dict[str, Any] = {
        "file": path,
        "position": pos,
        "size": h.size_in_bytes,
        "base_offset": h.base_offset,
        "last_offset": h.last_offset,
        "count": h.records_count,
        "partition_leader_epoch": h.partition_leader_epoch,
        "magic": h.magic,
        "crc": h.crc,
        "crc_valid": crc_ok,
        "is_control": h.is_control,
        "is_transactional": h.is_transactional,
        "compression": h.compression_name,
        "timestamp_type": str(h.timestamp_type),
        "base_timestamp": h.base_timestamp,
        "max_timestamp": h.max_timestamp,
        "delete_horizon_ms": h.delete_horizon_ms,
        "producer_id": h.producer_id,
        "producer_epoch": h.producer_epoch,
        "base_sequence": h.base_sequence,
        "last_sequence": h.last_sequence,
        "records": records,
    }
    if decode_error is not None:
        obj["error"] = decode_error
    out.write(json.dumps(obj) + "\n")


if __name__ == "__main__":
    sys.exit(main())
