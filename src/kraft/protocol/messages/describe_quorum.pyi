"""Typed view of ``kraft.protocol.messages.describe_quorum`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class DescribeQuorumRequest(StructValue):
    class TopicData(StructValue):
        class PartitionData(StructValue): partition_index: int = ...
        topic_name: str = ...; partitions: list[PartitionData] = ...
    topics: list[TopicData] = ...
class DescribeQuorumResponse(StructValue):
    class TopicData(StructValue):
        class PartitionData(StructValue):
            class ReplicaState(StructValue): replica_id: int = ...; replica_directory_id: uuid.UUID = ...; log_end_offset: int = ...; last_fetch_timestamp: int = ...; last_caught_up_timestamp: int = ...
            partition_index: int = ...; error_code: int = ...; error_message: str | None = ...; leader_id: int = ...; leader_epoch: int = ...; high_watermark: int = ...; current_voters: list[ReplicaState] = ...; observers: list[ReplicaState] = ...
        topic_name: str = ...; partitions: list[PartitionData] = ...
    class Node(StructValue):
        class Listener(StructValue): name: str = ...; host: str = ...; port: int = ...
        node_id: int = ...; listeners: list[Listener] = ...
    error_code: int = ...; error_message: str | None = ...; topics: list[TopicData] = ...; nodes: list[Node] = ...

REQUEST: StructType[DescribeQuorumRequest]
RESPONSE: StructType[DescribeQuorumResponse]
API: Api
