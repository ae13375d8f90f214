"""Typed view of ``kraft.protocol.messages.unregister_broker`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class UnregisterBrokerRequest(StructValue): broker_id: int = ...
class UnregisterBrokerResponse(StructValue): throttle_time_ms: int = ...; error_code: int = ...; error_message: str | None = ...

REQUEST: StructType[UnregisterBrokerRequest]
RESPONSE: StructType[UnregisterBrokerResponse]
API: Api
