"""Typed view of ``kraft.protocol.messages.sasl_handshake`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class SaslHandshakeRequest(StructValue): mechanism: str = ...
class SaslHandshakeResponse(StructValue): error_code: int = ...; mechanisms: list[str] = ...

REQUEST: StructType[SaslHandshakeRequest]
RESPONSE: StructType[SaslHandshakeResponse]
API: Api
