"""Typed view of ``kraft.protocol.messages.create_topics`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class CreateTopicsRequest(StructValue):
    class CreatableTopic(StructValue):
        class CreatableReplicaAssignment(StructValue): partition_index: int = ...; broker_ids: list[int] = ...
        class CreatableTopicConfig(StructValue): name: str = ...; value: str | None = ...
        name: str = ...; num_partitions: int = ...; replication_factor: int = ...; assignments: list[CreatableReplicaAssignment] = ...; configs: list[CreatableTopicConfig] = ...
    topics: list[CreatableTopic] = ...; timeout_ms: int = ...; validate_only: bool = ...
class CreateTopicsResponse(StructValue):
    class CreatableTopicResult(StructValue):
        class CreatableTopicConfigs(StructValue): name: str = ...; value: str | None = ...; read_only: bool = ...; config_source: int = ...; is_sensitive: bool = ...
        name: str = ...; topic_id: uuid.UUID = ...; error_code: int = ...; error_message: str | None = ...; topic_config_error_code: int = ...; num_partitions: int = ...; replication_factor: int = ...; configs: list[CreatableTopicConfigs] | None = ...
    throttle_time_ms: int = ...; topics: list[CreatableTopicResult] = ...

REQUEST: StructType[CreateTopicsRequest]
RESPONSE: StructType[CreateTopicsResponse]
API: Api
