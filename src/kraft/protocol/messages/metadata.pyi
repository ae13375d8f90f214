"""Typed view of ``kraft.protocol.messages.metadata`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class MetadataRequest(StructValue):
    class MetadataRequestTopic(StructValue): topic_id: uuid.UUID = ...; name: str | None = ...
    topics: list[MetadataRequestTopic] | None = ...; allow_auto_topic_creation: bool = ...; include_cluster_authorized_operations: bool = ...; include_topic_authorized_operations: bool = ...
class MetadataResponse(StructValue):
    class MetadataResponseBroker(StructValue): node_id: int = ...; host: str = ...; port: int = ...; rack: str | None = ...
    class MetadataResponseTopic(StructValue):
        class MetadataResponsePartition(StructValue): error_code: int = ...; partition_index: int = ...; leader_id: int = ...; leader_epoch: int = ...; replica_nodes: list[int] = ...; isr_nodes: list[int] = ...; offline_replicas: list[int] = ...
        error_code: int = ...; name: str | None = ...; topic_id: uuid.UUID = ...; is_internal: bool = ...; partitions: list[MetadataResponsePartition] = ...; topic_authorized_operations: int = ...
    throttle_time_ms: int = ...; brokers: list[MetadataResponseBroker] = ...; cluster_id: str | None = ...; controller_id: int = ...; topics: list[MetadataResponseTopic] = ...; cluster_authorized_operations: int = ...; error_code: int = ...

REQUEST: StructType[MetadataRequest]
RESPONSE: StructType[MetadataResponse]
API: Api
