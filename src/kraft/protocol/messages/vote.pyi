"""Typed view of ``kraft.protocol.messages.vote`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class VoteRequest(StructValue):
    class TopicData(StructValue):
        class PartitionData(StructValue): partition_index: int = ...; replica_epoch: int = ...; replica_id: int = ...; replica_directory_id: uuid.UUID = ...; voter_directory_id: uuid.UUID = ...; last_offset_epoch: int = ...; last_offset: int = ...; pre_vote: bool = ...
        topic_name: str = ...; partitions: list[PartitionData] = ...
    cluster_id: str | None = ...; voter_id: int = ...; topics: list[TopicData] = ...
class VoteResponse(StructValue):
    class TopicData(StructValue):
        class PartitionData(StructValue): partition_index: int = ...; error_code: int = ...; leader_id: int = ...; leader_epoch: int = ...; vote_granted: bool = ...
        topic_name: str = ...; partitions: list[PartitionData] = ...
    class NodeEndpoint(StructValue): node_id: int = ...; host: str = ...; port: int = ...
    error_code: int = ...; topics: list[TopicData] = ...; node_endpoints: list[NodeEndpoint] = ...

REQUEST: StructType[VoteRequest]
RESPONSE: StructType[VoteResponse]
API: Api
