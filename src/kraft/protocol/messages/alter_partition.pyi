"""Typed view of ``kraft.protocol.messages.alter_partition`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class AlterPartitionRequest(StructValue):
    class TopicData(StructValue):
        class PartitionData(StructValue):
            class BrokerState(StructValue): broker_id: int = ...; broker_epoch: int = ...
            partition_index: int = ...; leader_epoch: int = ...; new_isr: list[int] = ...; new_isr_with_epochs: list[BrokerState] = ...; leader_recovery_state: int = ...; partition_epoch: int = ...
        topic_name: str = ...; topic_id: uuid.UUID = ...; partitions: list[PartitionData] = ...
    broker_id: int = ...; broker_epoch: int = ...; topics: list[TopicData] = ...
class AlterPartitionResponse(StructValue):
    class TopicData(StructValue):
        class PartitionData(StructValue): partition_index: int = ...; error_code: int = ...; leader_id: int = ...; leader_epoch: int = ...; isr: list[int] = ...; leader_recovery_state: int = ...; partition_epoch: int = ...
        topic_name: str = ...; topic_id: uuid.UUID = ...; partitions: list[PartitionData] = ...
    throttle_time_ms: int = ...; error_code: int = ...; topics: list[TopicData] = ...

REQUEST: StructType[AlterPartitionRequest]
RESPONSE: StructType[AlterPartitionResponse]
API: Api
