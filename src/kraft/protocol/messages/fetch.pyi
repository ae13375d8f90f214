"""Typed view of ``kraft.protocol.messages.fetch`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue, Versions

class FetchRequest(StructValue):
    class ReplicaState(StructValue):
        replica_id: int
        replica_epoch: int
        def __init__(
            self,
            *,
            replica_id: int = ...,
            replica_epoch: int = ...,
        ) -> None: ...

    class FetchTopic(StructValue):
        class FetchPartition(StructValue):
            partition: int
            current_leader_epoch: int
            fetch_offset: int
            last_fetched_epoch: int
            log_start_offset: int
            partition_max_bytes: int
            replica_directory_id: uuid.UUID
            def __init__(
                self,
                *,
                partition: int = ...,
                current_leader_epoch: int = ...,
                fetch_offset: int = ...,
                last_fetched_epoch: int = ...,
                log_start_offset: int = ...,
                partition_max_bytes: int = ...,
                replica_directory_id: uuid.UUID = ...,
            ) -> None: ...

        topic: str
        topic_id: uuid.UUID
        partitions: list[FetchPartition]
        def __init__(
            self,
            *,
            topic: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: list[FetchPartition] = ...,
        ) -> None: ...

    class ForgottenTopic(StructValue):
        topic: str
        topic_id: uuid.UUID
        partitions: list[int]
        def __init__(
            self,
            *,
            topic: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: list[int] = ...,
        ) -> None: ...

    cluster_id: str | None
    replica_id: int
    replica_state: ReplicaState
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    isolation_level: int
    session_id: int
    session_epoch: int
    topics: list[FetchTopic]
    forgotten_topics_data: list[ForgottenTopic]
    rack_id: str
    def __init__(
        self,
        *,
        cluster_id: str | None = ...,
        replica_id: int = ...,
        replica_state: ReplicaState = ...,
        max_wait_ms: int = ...,
        min_bytes: int = ...,
        max_bytes: int = ...,
        isolation_level: int = ...,
        session_id: int = ...,
        session_epoch: int = ...,
        topics: list[FetchTopic] = ...,
        forgotten_topics_data: list[ForgottenTopic] = ...,
        rack_id: str = ...,
    ) -> None: ...

class FetchResponse(StructValue):
    class FetchableTopicResponse(StructValue):
        class PartitionData(StructValue):
            class EpochEndOffset(StructValue):
                epoch: int
                end_offset: int
                def __init__(
                    self,
                    *,
                    epoch: int = ...,
                    end_offset: int = ...,
                ) -> None: ...

            class LeaderIdAndEpoch(StructValue):
                leader_id: int
                leader_epoch: int
                def __init__(
                    self,
                    *,
                    leader_id: int = ...,
                    leader_epoch: int = ...,
                ) -> None: ...

            class SnapshotId(StructValue):
                end_offset: int
                epoch: int
                def __init__(
                    self,
                    *,
                    end_offset: int = ...,
                    epoch: int = ...,
                ) -> None: ...

            class AbortedTransaction(StructValue):
                producer_id: int
                first_offset: int
                def __init__(
                    self,
                    *,
                    producer_id: int = ...,
                    first_offset: int = ...,
                ) -> None: ...

            partition_index: int
            error_code: int
            high_watermark: int
            last_stable_offset: int
            log_start_offset: int
            diverging_epoch: EpochEndOffset
            current_leader: LeaderIdAndEpoch
            snapshot_id: SnapshotId
            aborted_transactions: list[AbortedTransaction] | None
            preferred_read_replica: int
            records: bytes | None
            def __init__(
                self,
                *,
                partition_index: int = ...,
                error_code: int = ...,
                high_watermark: int = ...,
                last_stable_offset: int = ...,
                log_start_offset: int = ...,
                diverging_epoch: EpochEndOffset = ...,
                current_leader: LeaderIdAndEpoch = ...,
                snapshot_id: SnapshotId = ...,
                aborted_transactions: list[AbortedTransaction] | None = ...,
                preferred_read_replica: int = ...,
                records: bytes | None = ...,
            ) -> None: ...

        topic: str
        topic_id: uuid.UUID
        partitions: list[PartitionData]
        def __init__(
            self,
            *,
            topic: str = ...,
            topic_id: uuid.UUID = ...,
            partitions: list[PartitionData] = ...,
        ) -> None: ...

    class NodeEndpoint(StructValue):
        node_id: int
        host: str
        port: int
        rack: str | None
        def __init__(
            self,
            *,
            node_id: int = ...,
            host: str = ...,
            port: int = ...,
            rack: str | None = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    session_id: int
    responses: list[FetchableTopicResponse]
    node_endpoints: list[NodeEndpoint]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        session_id: int = ...,
        responses: list[FetchableTopicResponse] = ...,
        node_endpoints: list[NodeEndpoint] = ...,
    ) -> None: ...

REQUEST: StructType[FetchRequest]
RESPONSE: StructType[FetchResponse]
SERVED_VERSIONS: Versions
API: Api
