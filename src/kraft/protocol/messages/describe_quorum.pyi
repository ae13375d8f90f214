"""Typed view of ``kraft.protocol.messages.describe_quorum`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class DescribeQuorumRequest(StructValue):
    class TopicData(StructValue):
        class PartitionData(StructValue):
            partition_index: int
            def __init__(
                self,
                *,
                partition_index: int = ...,
            ) -> None: ...

        topic_name: str
        partitions: list[PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[PartitionData] = ...,
        ) -> None: ...

    topics: list[TopicData]
    def __init__(
        self,
        *,
        topics: list[TopicData] = ...,
    ) -> None: ...

class DescribeQuorumResponse(StructValue):
    class TopicData(StructValue):
        class PartitionData(StructValue):
            class ReplicaState(StructValue):
                replica_id: int
                replica_directory_id: uuid.UUID
                log_end_offset: int
                last_fetch_timestamp: int
                last_caught_up_timestamp: int
                def __init__(
                    self,
                    *,
                    replica_id: int = ...,
                    replica_directory_id: uuid.UUID = ...,
                    log_end_offset: int = ...,
                    last_fetch_timestamp: int = ...,
                    last_caught_up_timestamp: int = ...,
                ) -> None: ...

            partition_index: int
            error_code: int
            error_message: str | None
            leader_id: int
            leader_epoch: int
            high_watermark: int
            current_voters: list[ReplicaState]
            observers: list[ReplicaState]
            def __init__(
                self,
                *,
                partition_index: int = ...,
                error_code: int = ...,
                error_message: str | None = ...,
                leader_id: int = ...,
                leader_epoch: int = ...,
                high_watermark: int = ...,
                current_voters: list[ReplicaState] = ...,
                observers: list[ReplicaState] = ...,
            ) -> None: ...

        topic_name: str
        partitions: list[PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[PartitionData] = ...,
        ) -> None: ...

    class Node(StructValue):
        class Listener(StructValue):
            name: str
            host: str
            port: int
            def __init__(
                self,
                *,
                name: str = ...,
                host: str = ...,
                port: int = ...,
            ) -> None: ...

        node_id: int
        listeners: list[Listener]
        def __init__(
            self,
            *,
            node_id: int = ...,
            listeners: list[Listener] = ...,
        ) -> None: ...

    error_code: int
    error_message: str | None
    topics: list[TopicData]
    nodes: list[Node]
    def __init__(
        self,
        *,
        error_code: int = ...,
        error_message: str | None = ...,
        topics: list[TopicData] = ...,
        nodes: list[Node] = ...,
    ) -> None: ...

REQUEST: StructType[DescribeQuorumRequest]
RESPONSE: StructType[DescribeQuorumResponse]
API: Api
