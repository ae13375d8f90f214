"""Typed view of ``kraft.protocol.messages.list_offsets`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class ListOffsetsRequest(StructValue):
    class ListOffsetsTopic(StructValue):
        class ListOffsetsPartition(StructValue):
            partition_index: int
            current_leader_epoch: int
            timestamp: int
            max_num_offsets: int
            def __init__(
                self,
                *,
                partition_index: int = ...,
                current_leader_epoch: int = ...,
                timestamp: int = ...,
                max_num_offsets: int = ...,
            ) -> None: ...

        name: str
        partitions: list[ListOffsetsPartition]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[ListOffsetsPartition] = ...,
        ) -> None: ...

    replica_id: int
    isolation_level: int
    topics: list[ListOffsetsTopic]
    timeout_ms: int
    def __init__(
        self,
        *,
        replica_id: int = ...,
        isolation_level: int = ...,
        topics: list[ListOffsetsTopic] = ...,
        timeout_ms: int = ...,
    ) -> None: ...

class ListOffsetsResponse(StructValue):
    class ListOffsetsTopicResponse(StructValue):
        class ListOffsetsPartitionResponse(StructValue):
            partition_index: int
            error_code: int
            old_style_offsets: list[int]
            timestamp: int
            offset: int
            leader_epoch: int
            def __init__(
                self,
                *,
                partition_index: int = ...,
                error_code: int = ...,
                old_style_offsets: list[int] = ...,
                timestamp: int = ...,
                offset: int = ...,
                leader_epoch: int = ...,
            ) -> None: ...

        name: str
        partitions: list[ListOffsetsPartitionResponse]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[ListOffsetsPartitionResponse] = ...,
        ) -> None: ...

    throttle_time_ms: int
    topics: list[ListOffsetsTopicResponse]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[ListOffsetsTopicResponse] = ...,
    ) -> None: ...

REQUEST: StructType[ListOffsetsRequest]
RESPONSE: StructType[ListOffsetsResponse]
API: Api
