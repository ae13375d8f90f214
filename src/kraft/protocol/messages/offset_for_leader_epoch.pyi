"""Typed view of ``kraft.protocol.messages.offset_for_leader_epoch`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue, Versions

class OffsetForLeaderEpochRequest(StructValue):
    class OffsetForLeaderTopic(StructValue):
        class OffsetForLeaderPartition(StructValue): partition: int = ...; current_leader_epoch: int = ...; leader_epoch: int = ...
        topic: str = ...; partitions: list[OffsetForLeaderPartition] = ...
    replica_id: int = ...; topics: list[OffsetForLeaderTopic] = ...
class OffsetForLeaderEpochResponse(StructValue):
    class OffsetForLeaderTopicResult(StructValue):
        class EpochEndOffset(StructValue): error_code: int = ...; partition: int = ...; leader_epoch: int = ...; end_offset: int = ...
        topic: str = ...; partitions: list[EpochEndOffset] = ...
    throttle_time_ms: int = ...; topics: list[OffsetForLeaderTopicResult] = ...

REQUEST: StructType[OffsetForLeaderEpochRequest]
RESPONSE: StructType[OffsetForLeaderEpochResponse]
SERVED_VERSIONS: Versions
API: Api
