"""Typed view of ``kraft.protocol.messages.describe_topic_partitions`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class DescribeTopicPartitionsRequest(StructValue):
    class TopicRequest(StructValue):
        name: str
        def __init__(
            self,
            *,
            name: str = ...,
        ) -> None: ...

    class Cursor(StructValue):
        topic_name: str
        partition_index: int
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partition_index: int = ...,
        ) -> None: ...

    topics: list[TopicRequest]
    response_partition_limit: int
    cursor: Cursor | None
    def __init__(
        self,
        *,
        topics: list[TopicRequest] = ...,
        response_partition_limit: int = ...,
        cursor: Cursor | None = ...,
    ) -> None: ...

class DescribeTopicPartitionsResponse(StructValue):
    class DescribeTopicPartitionsResponseTopic(StructValue):
        class DescribeTopicPartitionsResponsePartition(StructValue):
            error_code: int
            partition_index: int
            leader_id: int
            leader_epoch: int
            replica_nodes: list[int]
            isr_nodes: list[int]
            eligible_leader_replicas: list[int] | None
            last_known_elr: list[int] | None
            offline_replicas: list[int]
            def __init__(
                self,
                *,
                error_code: int = ...,
                partition_index: int = ...,
                leader_id: int = ...,
                leader_epoch: int = ...,
                replica_nodes: list[int] = ...,
                isr_nodes: list[int] = ...,
                eligible_leader_replicas: list[int] | None = ...,
                last_known_elr: list[int] | None = ...,
                offline_replicas: list[int] = ...,
            ) -> None: ...

        error_code: int
        name: str | None
        topic_id: uuid.UUID
        is_internal: bool
        partitions: list[DescribeTopicPartitionsResponsePartition]
        topic_authorized_operations: int
        def __init__(
            self,
            *,
            error_code: int = ...,
            name: str | None = ...,
            topic_id: uuid.UUID = ...,
            is_internal: bool = ...,
            partitions: list[DescribeTopicPartitionsResponsePartition] = ...,
            topic_authorized_operations: int = ...,
        ) -> None: ...

    class Cursor(StructValue):
        topic_name: str
        partition_index: int
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partition_index: int = ...,
        ) -> None: ...

    throttle_time_ms: int
    topics: list[DescribeTopicPartitionsResponseTopic]
    next_cursor: Cursor | None
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        topics: list[DescribeTopicPartitionsResponseTopic] = ...,
        next_cursor: Cursor | None = ...,
    ) -> None: ...

REQUEST: StructType[DescribeTopicPartitionsRequest]
RESPONSE: StructType[DescribeTopicPartitionsResponse]
API: Api
