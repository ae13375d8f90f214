"""Typed view of ``kraft.protocol.messages.add_raft_voter`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class AddRaftVoterRequest(StructValue):
    class Listener(StructValue): name: str = ...; host: str = ...; port: int = ...
    cluster_id: str | None = ...; timeout_ms: int = ...; voter_id: int = ...; voter_directory_id: uuid.UUID = ...; listeners: list[Listener] = ...
class AddRaftVoterResponse(StructValue): throttle_time_ms: int = ...; error_code: int = ...; error_message: str | None = ...

REQUEST: StructType[AddRaftVoterRequest]
RESPONSE: StructType[AddRaftVoterResponse]
API: Api
