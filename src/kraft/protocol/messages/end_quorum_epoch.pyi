"""Typed view of ``kraft.protocol.messages.end_quorum_epoch`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class EndQuorumEpochRequest(StructValue):
    class TopicData(StructValue):
        class PartitionData(StructValue):
            class ReplicaInfo(StructValue):
                candidate_id: int
                candidate_directory_id: uuid.UUID
                def __init__(
                    self,
                    *,
                    candidate_id: int = ...,
                    candidate_directory_id: uuid.UUID = ...,
                ) -> None: ...

            partition_index: int
            leader_id: int
            leader_epoch: int
            preferred_successors: list[int]
            preferred_candidates: list[ReplicaInfo]
            def __init__(
                self,
                *,
                partition_index: int = ...,
                leader_id: int = ...,
                leader_epoch: int = ...,
                preferred_successors: list[int] = ...,
                preferred_candidates: list[ReplicaInfo] = ...,
            ) -> None: ...

        topic_name: str
        partitions: list[PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[PartitionData] = ...,
        ) -> None: ...

    class LeaderEndpoint(StructValue):
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

    cluster_id: str | None
    topics: list[TopicData]
    leader_endpoints: list[LeaderEndpoint]
    def __init__(
        self,
        *,
        cluster_id: str | None = ...,
        topics: list[TopicData] = ...,
        leader_endpoints: list[LeaderEndpoint] = ...,
    ) -> None: ...

class EndQuorumEpochResponse(StructValue):
    class TopicData(StructValue):
        class PartitionData(StructValue):
            partition_index: int
            error_code: int
            leader_id: int
            leader_epoch: int
            def __init__(
                self,
                *,
                partition_index: int = ...,
                error_code: int = ...,
                leader_id: int = ...,
                leader_epoch: int = ...,
            ) -> None: ...

        topic_name: str
        partitions: list[PartitionData]
        def __init__(
            self,
            *,
            topic_name: str = ...,
            partitions: list[PartitionData] = ...,
        ) -> None: ...

    class NodeEndpoint(StructValue):
        node_id: int
        host: str
        port: int
        def __init__(
            self,
            *,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
        ) -> None: ...

    error_code: int
    topics: list[TopicData]
    node_endpoints: list[NodeEndpoint]
    def __init__(
        self,
        *,
        error_code: int = ...,
        topics: list[TopicData] = ...,
        node_endpoints: list[NodeEndpoint] = ...,
    ) -> None: ...

REQUEST: StructType[EndQuorumEpochRequest]
RESPONSE: StructType[EndQuorumEpochResponse]
API: Api
