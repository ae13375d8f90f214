"""Typed view of ``kraft.protocol.messages.remove_raft_voter`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class RemoveRaftVoterRequest(StructValue): cluster_id: str | None = ...; voter_id: int = ...; voter_directory_id: uuid.UUID = ...
class RemoveRaftVoterResponse(StructValue): throttle_time_ms: int = ...; error_code: int = ...; error_message: str | None = ...

REQUEST: StructType[RemoveRaftVoterRequest]
RESPONSE: StructType[RemoveRaftVoterResponse]
API: Api
