"""The errors a partition log raises for a request it must refuse, each carrying Kafka's error code.

A Produce, Fetch or ListOffsets handler catches ``PartitionLogError`` and puts ``error.error_code`` in
the partition's response; nothing here is a broken invariant (those stay ``FatalError``). The codes
are the ones Kafka 4 answers for the same refusal (its ``Errors.forException`` of the exception its
``UnifiedLog``/``LogValidator``/``ProducerAppendInfo`` throws), checked against Kafka's source:

* a batch whose magic is not 2: ``ProduceRequest.validateRecords`` throws ``InvalidRecordException``
  for Produce v3+, which is every version Kafka 4 serves, so INVALID_RECORD (87), not
  UNSUPPORTED_FOR_MESSAGE_FORMAT or CORRUPT_MESSAGE;
* a CRC mismatch or bytes that are not a batch: ``CorruptRecordException``, CORRUPT_MESSAGE (2);
* a batch over ``max.message.bytes``: ``RecordTooLargeException``, MESSAGE_TOO_LARGE (10); an append
  over ``segment.bytes``: ``RecordBatchTooLargeException``, RECORD_LIST_TOO_LARGE (18);
* Kafka 4 never answers UNKNOWN_PRODUCER_ID (59) to a Produce: since KIP-360 a producer without
  state is accepted at any sequence (``ProducerAppendInfo.checkSequence``), so there is no class
  for it here.
"""

from __future__ import annotations

from typing import ClassVar

from kraft.common.errors import CorruptRecordError, KraftError
from kraft.protocol.error_codes import ErrorCode


class PartitionLogError(KraftError):
    """A request the partition log refuses; ``error_code`` is what the response carries."""

    error_code: ClassVar[ErrorCode] = ErrorCode.UNKNOWN_SERVER_ERROR


class CorruptMessageError(PartitionLogError, CorruptRecordError):
    """Bytes that are not whole, CRC-valid RecordBatch v2 batches (Kafka's ``CorruptRecordException``)."""

    error_code = ErrorCode.CORRUPT_MESSAGE


class InvalidRecordError(PartitionLogError):
    """A well-formed batch this origin may not append (Kafka's ``InvalidRecordException``)."""

    error_code = ErrorCode.INVALID_RECORD


class UnsupportedMagicError(InvalidRecordError):
    """A batch of magic 0 or 1 (or any magic but 2): Kafka 4 answers INVALID_RECORD (see module doc)."""


class RecordTooLargeError(PartitionLogError):
    """A batch larger than ``max.message.bytes``."""

    error_code = ErrorCode.MESSAGE_TOO_LARGE


class RecordBatchTooLargeError(PartitionLogError):
    """An append larger than ``segment.bytes``: it could never fit in one segment."""

    error_code = ErrorCode.RECORD_LIST_TOO_LARGE


class InvalidTimestampError(PartitionLogError):
    """A timestamp outside ``message.timestamp.{before,after}.max.ms``, or a producer that set
    LogAppendTime itself."""

    error_code = ErrorCode.INVALID_TIMESTAMP


class OutOfOrderSequenceError(PartitionLogError):
    """An idempotent producer's batch that does not follow its last sequence."""

    error_code = ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER


class InvalidProducerEpochError(PartitionLogError):
    """An idempotent producer's batch from an epoch older than the one the log holds (a zombie)."""

    error_code = ErrorCode.INVALID_PRODUCER_EPOCH


class OffsetOutOfRangeError(PartitionLogError):
    """A read below the log start offset or past the log end offset (or a start-offset move past
    the high watermark)."""

    error_code = ErrorCode.OFFSET_OUT_OF_RANGE


class UnexpectedAppendOffsetError(KraftError):
    """A follower append that does not begin at the log end offset: the caller fetched from the
    wrong offset (Kafka's ``UnexpectedAppendOffsetException``); no response code, the fetcher's bug."""
