"""Typed view of ``kraft.protocol.messages.broker_heartbeat`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class BrokerHeartbeatRequest(StructValue):
    class TopicLogInfo(StructValue):
        class PartitionLogInfo(StructValue): partition_index: int = ...; partition_epoch: int = ...; last_written_leader_epoch: int = ...; log_end_offset: int = ...
        topic_id: uuid.UUID = ...; partitions: list[PartitionLogInfo] = ...
    broker_id: int = ...; broker_epoch: int = ...; current_metadata_offset: int = ...; want_fence: bool = ...; want_shut_down: bool = ...; offline_log_dirs: list[uuid.UUID] = ...; replica_log_info: list[TopicLogInfo] = ...
class BrokerHeartbeatResponse(StructValue): throttle_time_ms: int = ...; error_code: int = ...; is_caught_up: bool = ...; is_fenced: bool = ...; should_shut_down: bool = ...

REQUEST: StructType[BrokerHeartbeatRequest]
RESPONSE: StructType[BrokerHeartbeatResponse]
API: Api
