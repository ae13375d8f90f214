"""What a partition leader checks before it writes produced batches, and how it assigns their offsets.

Kafka spreads these rules over ``ProduceRequest.validateRecords`` (magic 2, one batch per partition),
``UnifiedLog.analyzeAndValidateRecords`` (base offset 0 from clients, ``max.message.bytes``, CRC) and
``LogValidator`` for magic 2 (record count, no control batch from a client, sequence present with a
producer id, timestamps, offset assignment, LogAppendTime). They are gathered here as pure functions
of bytes: no file, no clock (``now_ms`` is an argument), no log state but the next offset.

Rule: records are never decoded on the append path. Every check reads the 61-byte batch header, the
batch bytes are rewritten in place (baseOffset and partitionLeaderEpoch, which the CRC does not
cover; attributes and maxTimestamp for LogAppendTime, which it does, so the CRC is recomputed) and
written as they came, compressed or not. The one exception is ``message.timestamp.before.max.ms``:
the earliest record timestamp is not in the header, so when (and only when) that check is asked for,
each batch is decoded to find it.

Where this is less thorough than Kafka (said, not hidden): Kafka iterates the records of every
produced batch, so it also rejects a batch whose records do not match its declared count and
recomputes a CreateTime batch's maxTimestamp from the records; here the header is trusted for both
(the CRC covers them, so only a buggy producer could get them wrong).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kraft.common.errors import CorruptRecordError
from kraft.records.batch import (
    ATTRIBUTES_OFFSET,
    CRC_OFFSET,
    HEADER_SIZE,
    MAGIC,
    MAGIC_OFFSET,
    NO_TIMESTAMP,
    TIMESTAMP_TYPE_MASK,
    BatchHeader,
    TimestampType,
    UnsupportedCompressionError,
    assign_offsets_and_epoch,
    batch_crc_valid,
    compression_name,
    crc32c,
    decode_batch,
    read_batch_header,
    recompress_batch,
)
from kraft.storage.log_errors import (
    CorruptMessageError,
    InvalidRecordError,
    InvalidTimestampError,
    RecordTooLargeError,
    UnsupportedMagicError,
)

# Kafka's max.message.bytes default (1 MiB plus the batch overhead).
DEFAULT_MAX_MESSAGE_BYTES = 1048588

_MAX_TIMESTAMP_OFFSET = 35
_ATTRIBUTES = struct.Struct(">h")
_TIMESTAMP = struct.Struct(">q")
_CRC = struct.Struct(">I")


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidatedAppend:
    """Batches ready to be written: ``data`` is their bytes, ``headers`` their headers as written.

    ``max_timestamp``/``offset_of_max_timestamp`` are Kafka 4's "shallow" values: the largest batch
    maxTimestamp and the *last* offset of the first batch that holds it (-1, -1 when no batch has a
    timestamp); with LogAppendTime, the append time and the last offset.
    """

    data: bytes
    headers: tuple[BatchHeader, ...]
    first_offset: int
    last_offset: int
    max_timestamp: int
    offset_of_max_timestamp: int
    log_append_time_ms: int
    record_count: int


def _split(data: bytes, *, partial_ok: bool) -> list[tuple[int, BatchHeader]]:
    """(position, header) of each batch; raises the typed errors of a bad magic or a bad header.

    A trailing partial batch raises ``CorruptMessageError``, or with ``partial_ok`` ends the list
    (Kafka trims it from a follower's fetch: ``UnifiedLog.trimInvalidBytes``).
    """
    out: list[tuple[int, BatchHeader]] = []
    pos = 0
    end = len(data)
    while pos < end:
        remaining = end - pos
        if remaining <= MAGIC_OFFSET:
            if partial_ok:
                break
            raise CorruptMessageError(f"{remaining} bytes at position {pos} are not a whole batch")
        # v0/v1 messages keep their magic byte at the same position as v2 batches.
        magic = data[pos + MAGIC_OFFSET]
        if magic != MAGIC:
            raise UnsupportedMagicError(
                f"batch at position {pos} has magic {magic}; only record batches of magic {MAGIC} "
                "are accepted (Produce v3+)"
            )
        if remaining < HEADER_SIZE:
            if partial_ok:
                break
            raise CorruptMessageError(f"{remaining} bytes at position {pos} are not a whole batch header")
        try:
            header = read_batch_header(data, pos)
        except CorruptRecordError as e:
            raise CorruptMessageError(str(e)) from None
        assert header is not None  # at least HEADER_SIZE bytes remain
        if header.size_in_bytes > remaining:
            if partial_ok:
                break
            raise CorruptMessageError(
                f"batch at position {pos} needs {header.size_in_bytes} bytes, {remaining} present"
            )
        out.append((pos, header))
        pos += header.size_in_bytes
    return out


def set_log_append_time(batch: bytes, now_ms: int) -> bytes:
    """The batch with the LogAppendTime attribute bit set and maxTimestamp ``now_ms``, CRC fixed
    (Kafka's ``DefaultRecordBatch.setMaxTimestamp(LOG_APPEND_TIME, now)``); unchanged if it already
    says so. Readers then give every record the timestamp ``now_ms``."""
    (attributes,) = _ATTRIBUTES.unpack_from(batch, ATTRIBUTES_OFFSET)
    (max_timestamp,) = _TIMESTAMP.unpack_from(batch, _MAX_TIMESTAMP_OFFSET)
    if attributes & TIMESTAMP_TYPE_MASK and max_timestamp == now_ms:
        return batch
    out = bytearray(batch)
    _ATTRIBUTES.pack_into(out, ATTRIBUTES_OFFSET, attributes | TIMESTAMP_TYPE_MASK)
    _TIMESTAMP.pack_into(out, _MAX_TIMESTAMP_OFFSET, now_ms)
    _CRC.pack_into(out, CRC_OFFSET, crc32c(memoryview(out)[ATTRIBUTES_OFFSET:]))
    return bytes(out)


def _check_timestamps(
    data: bytes,
    pos: int,
    header: BatchHeader,
    now_ms: int,
    before_max_ms: int | None,
    after_max_ms: int | None,
) -> None:
    """``message.timestamp.{before,after}.max.ms`` for a CreateTime append (``None``: unlimited)."""
    # The header's maxTimestamp is the latest record timestamp: exact without decoding.
    latest = header.max_timestamp
    if after_max_ms is not None and latest != NO_TIMESTAMP and latest - now_ms > after_max_ms:
        raise InvalidTimestampError(
            f"timestamp {latest} of the batch at position {pos} is more than {after_max_ms} ms "
            f"after the broker time {now_ms}"
        )
    if before_max_ms is not None:
        try:
            batch = decode_batch(data, pos)
        except CorruptRecordError as e:
            raise CorruptMessageError(str(e)) from None
        for index, record in enumerate(batch.records):
            if record.timestamp != NO_TIMESTAMP and now_ms - record.timestamp > before_max_ms:
                raise InvalidTimestampError(
                    f"timestamp {record.timestamp} of record {index} is more than {before_max_ms} ms "
                    f"before the broker time {now_ms}"
                )


def validate_leader_append(
    data: bytes,
    *,
    next_offset: int,
    leader_epoch: int,
    now_ms: int,
    log_append_time: bool,
    max_message_bytes: int,
    origin_client: bool,
    timestamp_before_max_ms: int | None = None,
    timestamp_after_max_ms: int | None = None,
    compression: int | None = None,
) -> ValidatedAppend:
    """Check produced ``data`` and give it offsets from ``next_offset`` and ``leader_epoch``.

    ``compression`` is the topic's ``compression.type`` as a codec id (None: ``producer``, keep the
    producer's). A batch under another codec is re-encoded (records decoded only then), and its new
    size is held to ``max.message.bytes`` again, as Kafka's LogValidator does.

    ``origin_client`` is Kafka's ``AppendOrigin.CLIENT``: the rules only a producer is held to (one
    batch, base offset 0, record count, no control batch, a sequence with a producer id, no
    LogAppendTime set by the producer). ``False`` is our own code appending (Kafka's COORDINATOR).

    Raises:
        UnsupportedMagicError, InvalidRecordError, CorruptMessageError, RecordTooLargeError,
        InvalidTimestampError: the first rule broken, checked in Kafka's order; nothing is returned.
    """
    if not data:
        raise InvalidRecordError("the append holds no record batch")
    batches = _split(data, partial_ok=False)
    if origin_client and len(batches) > 1:
        # ProduceRequest.validateRecords (v3+) and LogValidator: one v2 batch per partition.
        raise InvalidRecordError(
            f"a produce request may hold one record batch per partition, not {len(batches)}"
        )
    # UnifiedLog.analyzeAndValidateRecords
    for pos, header in batches:
        if origin_client and header.base_offset != 0:
            raise InvalidRecordError(
                f"the base offset of a produced batch must be 0, not {header.base_offset}"
            )
        if header.size_in_bytes > max_message_bytes:
            raise RecordTooLargeError(
                f"the batch at position {pos} is {header.size_in_bytes} bytes, "
                f"above max.message.bytes {max_message_bytes}"
            )
        if not batch_crc_valid(data, pos, header):
            raise CorruptMessageError(f"the batch at position {pos} failed its CRC (stored {header.crc})")
    # LogValidator.validateBatch and validateTimestamp
    for pos, header in batches:
        if origin_client:
            count = header.records_count
            if count <= 0:
                raise InvalidRecordError(f"invalid record count {count} in the batch at position {pos}")
            if header.last_offset_delta + 1 != count:
                raise InvalidRecordError(
                    f"the batch at position {pos} spans offset deltas 0..{header.last_offset_delta} "
                    f"but counts {count} records"
                )
            if header.is_control:
                raise InvalidRecordError("clients may not write control batches")
            if header.producer_id >= 0 and header.base_sequence < 0:
                raise InvalidRecordError(
                    f"batch of producer {header.producer_id} has invalid sequence {header.base_sequence}"
                )
            if header.timestamp_type is TimestampType.LOG_APPEND_TIME:
                # Kafka rejects it under LogAppendTime and rewrites it under CreateTime; we reject both
                # (no producer sets this bit).
                raise InvalidTimestampError("a producer may not set the LogAppendTime timestamp type")
        if not log_append_time:
            _check_timestamps(data, pos, header, now_ms, timestamp_before_max_ms, timestamp_after_max_ms)

    offset = next_offset
    parts: list[bytes] = []
    headers: list[BatchHeader] = []
    max_timestamp = NO_TIMESTAMP
    offset_of_max_timestamp = -1
    for pos, header in batches:
        raw = data[pos : pos + header.size_in_bytes]
        if compression is not None and header.compression != compression:
            raw = _recompressed(raw, pos, header, compression, max_message_bytes)
        if header.base_offset != offset or header.partition_leader_epoch != leader_epoch:
            raw = assign_offsets_and_epoch(raw, offset, leader_epoch)
        if log_append_time:
            raw = set_log_append_time(raw, now_ms)
        written = read_batch_header(raw)
        assert written is not None
        last = offset + header.last_offset_delta
        if written.max_timestamp > max_timestamp:
            max_timestamp = written.max_timestamp
            offset_of_max_timestamp = last
        parts.append(raw)
        headers.append(written)
        offset = last + 1
    if log_append_time:
        max_timestamp, offset_of_max_timestamp = now_ms, offset - 1
    return ValidatedAppend(
        data=parts[0] if len(parts) == 1 else b"".join(parts),
        headers=tuple(headers),
        first_offset=next_offset,
        last_offset=offset - 1,
        max_timestamp=max_timestamp,
        offset_of_max_timestamp=offset_of_max_timestamp,
        log_append_time_ms=now_ms if log_append_time else NO_TIMESTAMP,
        record_count=offset - next_offset,
    )


def _recompressed(raw: bytes, pos: int, header: BatchHeader, codec: int, max_message_bytes: int) -> bytes:
    try:
        out = recompress_batch(raw, codec)
    except UnsupportedCompressionError as e:
        # Kafka would recompress; kraft cannot read snappy (no codec installed), so it refuses
        # rather than store a batch against the topic's compression.type.
        raise InvalidRecordError(
            f"the batch at position {pos} cannot be recompressed to {compression_name(codec)}: {e}"
        ) from None
    except ValueError as e:  # a codec this build cannot write (snappy)
        raise InvalidRecordError(f"the topic's compression.type cannot be written: {e}") from None
    except CorruptRecordError as e:
        raise CorruptMessageError(f"the batch at position {pos} does not decompress: {e}") from None
    if len(out) > max_message_bytes:
        raise RecordTooLargeError(
            f"the batch at position {pos} is {len(out)} bytes once recompressed to "
            f"{compression_name(codec)}, above max.message.bytes {max_message_bytes}"
        )
    return out


def validate_follower_append(data: bytes) -> ValidatedAppend | None:
    """Check batches a follower fetched: whole batches, each CRC-valid. Offsets and epochs are the
    leader's and stay (the caller checks that they continue its log). A trailing partial batch is
    dropped, as Kafka does with a fetch response cut at its byte limit. ``None`` when no whole batch is left.

    Raises:
        CorruptMessageError, UnsupportedMagicError: a batch that is not a valid v2 batch.
    """
    batches = _split(data, partial_ok=True)
    if not batches:
        return None
    headers: list[BatchHeader] = []
    max_timestamp = NO_TIMESTAMP
    offset_of_max_timestamp = -1
    for pos, header in batches:
        if not batch_crc_valid(data, pos, header):
            raise CorruptMessageError(
                f"fetched batch at offset {header.base_offset} (position {pos}) failed its CRC"
            )
        if header.max_timestamp > max_timestamp:
            max_timestamp = header.max_timestamp
            offset_of_max_timestamp = header.last_offset
        headers.append(header)
    end = batches[-1][0] + batches[-1][1].size_in_bytes
    return ValidatedAppend(
        data=data if end == len(data) else data[:end],
        headers=tuple(headers),
        first_offset=headers[0].base_offset,
        last_offset=headers[-1].last_offset,
        max_timestamp=max_timestamp,
        offset_of_max_timestamp=offset_of_max_timestamp,
        log_append_time_ms=NO_TIMESTAMP,
        record_count=sum(h.last_offset_delta + 1 for h in headers),
    )
