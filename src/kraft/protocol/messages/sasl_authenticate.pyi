"""Typed view of ``kraft.protocol.messages.sasl_authenticate`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class SaslAuthenticateRequest(StructValue): auth_bytes: bytes = ...
class SaslAuthenticateResponse(StructValue): error_code: int = ...; error_message: str | None = ...; auth_bytes: bytes = ...; session_lifetime_ms: int = ...

REQUEST: StructType[SaslAuthenticateRequest]
RESPONSE: StructType[SaslAuthenticateResponse]
API: Api
