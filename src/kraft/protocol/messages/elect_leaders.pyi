"""Typed view of ``kraft.protocol.messages.elect_leaders`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class ElectLeadersRequest(StructValue):
    class TopicPartitions(StructValue): topic: str = ...; partitions: list[int] = ...
    election_type: int = ...; topic_partitions: list[TopicPartitions] | None = ...; timeout_ms: int = ...
class ElectLeadersResponse(StructValue):
    class ReplicaElectionResult(StructValue):
        class PartitionResult(StructValue): partition_id: int = ...; error_code: int = ...; error_message: str | None = ...
        topic: str = ...; partition_result: list[PartitionResult] = ...
    throttle_time_ms: int = ...; error_code: int = ...; replica_election_results: list[ReplicaElectionResult] = ...

REQUEST: StructType[ElectLeadersRequest]
RESPONSE: StructType[ElectLeadersResponse]
API: Api
