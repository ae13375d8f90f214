"""Typed view of ``kraft.protocol.messages.describe_log_dirs`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class DescribeLogDirsRequest(StructValue):
    class DescribableLogDirTopic(StructValue): topic: str = ...; partitions: list[int] = ...
    topics: list[DescribableLogDirTopic] | None = ...
class DescribeLogDirsResponse(StructValue):
    class DescribeLogDirsResult(StructValue):
        class DescribeLogDirsTopic(StructValue):
            class DescribeLogDirsPartition(StructValue): partition_index: int = ...; partition_size: int = ...; offset_lag: int = ...; is_future_key: bool = ...
            name: str = ...; partitions: list[DescribeLogDirsPartition] = ...
        error_code: int = ...; log_dir: str = ...; topics: list[DescribeLogDirsTopic] = ...; total_bytes: int = ...; usable_bytes: int = ...; is_cordoned: bool = ...
    throttle_time_ms: int = ...; error_code: int = ...; results: list[DescribeLogDirsResult] = ...

REQUEST: StructType[DescribeLogDirsRequest]
RESPONSE: StructType[DescribeLogDirsResponse]
API: Api
