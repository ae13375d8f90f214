"""Typed view of ``kraft.protocol.messages.delete_topics`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

import uuid

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class DeleteTopicsRequest(StructValue):
    class DeleteTopicState(StructValue): name: str | None = ...; topic_id: uuid.UUID = ...
    topics: list[DeleteTopicState] = ...; topic_names: list[str] = ...; timeout_ms: int = ...
class DeleteTopicsResponse(StructValue):
    class DeletableTopicResult(StructValue): name: str | None = ...; topic_id: uuid.UUID = ...; error_code: int = ...; error_message: str | None = ...
    throttle_time_ms: int = ...; responses: list[DeletableTopicResult] = ...

REQUEST: StructType[DeleteTopicsRequest]
RESPONSE: StructType[DeleteTopicsResponse]
API: Api
