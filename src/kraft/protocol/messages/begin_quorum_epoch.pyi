"""Typed view of ``kraft.protocol.messages.begin_quorum_epoch`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class BeginQuorumEpochRequest(StructValue):
    class TopicData(StructValue):
        class PartitionData(StructValue): partition_index: int = ...; voter_directory_id: uuid.UUID = ...; leader_id: int = ...; leader_epoch: int = ...
        topic_name: str = ...; partitions: list[PartitionData] = ...
    class LeaderEndpoint(StructValue): name: str = ...; host: str = ...; port: int = ...
    cluster_id: str | None = ...; voter_id: int = ...; topics: list[TopicData] = ...; leader_endpoints: list[LeaderEndpoint] = ...
class BeginQuorumEpochResponse(StructValue):
    class TopicData(StructValue):
        class PartitionData(StructValue): partition_index: int = ...; error_code: int = ...; leader_id: int = ...; leader_epoch: int = ...
        topic_name: str = ...; partitions: list[PartitionData] = ...
    class NodeEndpoint(StructValue): node_id: int = ...; host: str = ...; port: int = ...
    error_code: int = ...; topics: list[TopicData] = ...; node_endpoints: list[NodeEndpoint] = ...

REQUEST: StructType[BeginQuorumEpochRequest]
RESPONSE: StructType[BeginQuorumEpochResponse]
API: Api
