"""Type stub of the C extension ``kraft.records._native_decode`` (source: ``_native_decode.c``)."""

from typing_extensions import Buffer

MIN_RECORD_SIZE: int

class ColumnBuilder:
    """Rows of record batches gathered as Arrow column buffers (offset, leader_epoch,
    batch_base_offset, timestamp in microseconds, key, value). Not thread-safe."""

    def __init__(self) -> None: ...
    def __len__(self) -> int: ...
    def add_batch(
        self,
        data: Buffer,
        start: int,
        end: int,
        base_offset: int,
        leader_epoch: int,
        records_count: int,
        base_timestamp: int,
        log_append_time: int | None,
        row_offset: int | None,
        python_value_byte: int,
        /,
    ) -> bool:
        """Append the rows of the records in ``data[start:end]`` and return True, or return False
        and append nothing when the batch must be decoded in Python."""

    def take(
        self,
    ) -> tuple[int, bytes, bytes, bytes, bytes, bytes | None, bytes, bytes, bytes | None, bytes, bytes]:
        """(rows, offset, leader_epoch, batch_base_offset, timestamp_us, key_validity, key_offsets,
        key_data, value_validity, value_offsets, value_data), emptying the builder."""

def record_values(
    data: Buffer, start: int, end: int, base_offset: int, records_count: int, from_offset: int, /
) -> tuple[bytes, ...] | None:
    """The values (null as b"") of the records in ``data[start:end]`` with offset >= ``from_offset``,
    or None where the batch must be decoded in Python."""
