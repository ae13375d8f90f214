"""Typed view of ``kraft.protocol.messages.update_raft_voter`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class UpdateRaftVoterRequest(StructValue):
    class Listener(StructValue): name: str = ...; host: str = ...; port: int = ...
    class KRaftVersionFeature(StructValue): min_supported_version: int = ...; max_supported_version: int = ...
    cluster_id: str | None = ...; current_leader_epoch: int = ...; voter_id: int = ...; voter_directory_id: uuid.UUID = ...; listeners: list[Listener] = ...; k_raft_version_feature: KRaftVersionFeature = ...
class UpdateRaftVoterResponse(StructValue):
    class CurrentLeader(StructValue): leader_id: int = ...; leader_epoch: int = ...; host: str = ...; port: int = ...
    throttle_time_ms: int = ...; error_code: int = ...; current_leader: CurrentLeader = ...

REQUEST: StructType[UpdateRaftVoterRequest]
RESPONSE: StructType[UpdateRaftVoterResponse]
API: Api
