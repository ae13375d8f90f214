"""Typed view of ``kraft.protocol.messages.list_offsets`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class ListOffsetsRequest(StructValue):
    class ListOffsetsTopic(StructValue):
        class ListOffsetsPartition(StructValue): partition_index: int = ...; current_leader_epoch: int = ...; timestamp: int = ...; max_num_offsets: int = ...
        name: str = ...; partitions: list[ListOffsetsPartition] = ...
    replica_id: int = ...; isolation_level: int = ...; topics: list[ListOffsetsTopic] = ...; timeout_ms: int = ...
class ListOffsetsResponse(StructValue):
    class ListOffsetsTopicResponse(StructValue):
        class ListOffsetsPartitionResponse(StructValue): partition_index: int = ...; error_code: int = ...; old_style_offsets: list[int] = ...; timestamp: int = ...; offset: int = ...; leader_epoch: int = ...
        name: str = ...; partitions: list[ListOffsetsPartitionResponse] = ...
    throttle_time_ms: int = ...; topics: list[ListOffsetsTopicResponse] = ...

REQUEST: StructType[ListOffsetsRequest]
RESPONSE: StructType[ListOffsetsResponse]
API: Api
