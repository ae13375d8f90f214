"""Typed view of ``kraft.protocol.messages.elect_leaders`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class ElectLeadersRequest(StructValue):
    class TopicPartitions(StructValue):
        topic: str
        partitions: list[int]
        def __init__(
            self,
            *,
            topic: str = ...,
            partitions: list[int] = ...,
        ) -> None: ...

    election_type: int
    topic_partitions: list[TopicPartitions] | None
    timeout_ms: int
    def __init__(
        self,
        *,
        election_type: int = ...,
        topic_partitions: list[TopicPartitions] | None = ...,
        timeout_ms: int = ...,
    ) -> None: ...

class ElectLeadersResponse(StructValue):
    class ReplicaElectionResult(StructValue):
        class PartitionResult(StructValue):
            partition_id: int
            error_code: int
            error_message: str | None
            def __init__(
                self,
                *,
                partition_id: int = ...,
                error_code: int = ...,
                error_message: str | None = ...,
            ) -> None: ...

        topic: str
        partition_result: list[PartitionResult]
        def __init__(
            self,
            *,
            topic: str = ...,
            partition_result: list[PartitionResult] = ...,
        ) -> None: ...

    throttle_time_ms: int
    error_code: int
    replica_election_results: list[ReplicaElectionResult]
    def __init__(
        self,
        *,
        throttle_time_ms: int = ...,
        error_code: int = ...,
        replica_election_results: list[ReplicaElectionResult] = ...,
    ) -> None: ...

REQUEST: StructType[ElectLeadersRequest]
RESPONSE: StructType[ElectLeadersResponse]
API: Api
