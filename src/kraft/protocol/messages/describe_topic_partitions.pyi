"""Typed view of ``kraft.protocol.messages.describe_topic_partitions`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class DescribeTopicPartitionsRequest(StructValue):
    class TopicRequest(StructValue): name: str = ...
    class Cursor(StructValue): topic_name: str = ...; partition_index: int = ...
    topics: list[TopicRequest] = ...; response_partition_limit: int = ...; cursor: Cursor | None = ...
class DescribeTopicPartitionsResponse(StructValue):
    class DescribeTopicPartitionsResponseTopic(StructValue):
        class DescribeTopicPartitionsResponsePartition(StructValue): error_code: int = ...; partition_index: int = ...; leader_id: int = ...; leader_epoch: int = ...; replica_nodes: list[int] = ...; isr_nodes: list[int] = ...; eligible_leader_replicas: list[int] | None = ...; last_known_elr: list[int] | None = ...; offline_replicas: list[int] = ...
        error_code: int = ...; name: str | None = ...; topic_id: uuid.UUID = ...; is_internal: bool = ...; partitions: list[DescribeTopicPartitionsResponsePartition] = ...; topic_authorized_operations: int = ...
    class Cursor(StructValue): topic_name: str = ...; partition_index: int = ...
    throttle_time_ms: int = ...; topics: list[DescribeTopicPartitionsResponseTopic] = ...; next_cursor: Cursor | None = ...

REQUEST: StructType[DescribeTopicPartitionsRequest]
RESPONSE: StructType[DescribeTopicPartitionsResponse]
API: Api
