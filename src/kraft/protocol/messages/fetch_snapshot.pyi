"""Typed view of ``kraft.protocol.messages.fetch_snapshot`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class FetchSnapshotRequest(StructValue):
    class TopicSnapshot(StructValue):
        class PartitionSnapshot(StructValue):
            class SnapshotId(StructValue):
                end_offset: int
                epoch: int
                def __init__(
                    self,
                    *,
                    end_offset: int = ...,
                    epoch: int = ...,
                ) -> None: ...

            partition: int
            current_leader_epoch: int
            snapshot_id: SnapshotId
            position: int
            replica_directory_id: uuid.UUID
            def __init__(
                self,
                *,
                partition: int = ...,
                current_leader_epoch: int = ...,
                snapshot_id: SnapshotId = ...,
                position: int = ...,
                replica_directory_id: uuid.UUID = ...,
            ) -> None: ...

        name: str
        partitions: list[PartitionSnapshot]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[PartitionSnapshot] = ...,
        ) -> None: ...

    cluster_id: str | None
    replica_id: int
    max_bytes: int
    topics: list[TopicSnapshot]
    def __init__(
        self,
        *,
        cluster_id: str | None = ...,
        replica_id: int = ...,
        max_bytes: int = ...,
        topics: list[TopicSnapshot] = ...,
    ) -> None: ...

class FetchSnapshotResponse(StructValue):
    class TopicSnapshot(StructValue):
        class PartitionSnapshot(StructValue):
            class SnapshotId(StructValue):
                end_offset: int
                epoch: int
                def __init__(
                    self,
                    *,
                    end_offset: int = ...,
                    epoch: int = ...,
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

            index: int
            error_code: int
            snapshot_id: SnapshotId
            current_leader: LeaderIdAndEpoch
            size: int
            position: int
            unaligned_records: bytes
            def __init__(
                self,
                *,
                index: int = ...,
                error_code: int = ...,
                snapshot_id: SnapshotId = ...,
                current_leader: LeaderIdAndEpoch = ...,
                size: int = ...,
                position: int = ...,
                unaligned_records: bytes = ...,
            ) -> None: ...

        name: str
        partitions: list[PartitionSnapshot]
        def __init__(
            self,
            *,
            name: str = ...,
            partitions: list[PartitionSnapshot] = ...,
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

    throttle_time_ms: int
    error_code: int
    topics: list[TopicSnapshot]
    node_endpoints: list[NodeEndpoint]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        topics: list[TopicSnapshot] = ...,
        node_endpoints: list[NodeEndpoint] = ...,
    ) -> None: ...

REQUEST: StructType[FetchSnapshotRequest]
RESPONSE: StructType[FetchSnapshotResponse]
API: Api
