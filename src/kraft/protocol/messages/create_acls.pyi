"""Typed view of ``kraft.protocol.messages.create_acls`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class CreateAclsRequest(StructValue):
    class AclCreation(StructValue): resource_type: int = ...; resource_name: str = ...; resource_pattern_type: int = ...; principal: str = ...; host: str = ...; operation: int = ...; permission_type: int = ...
    creations: list[AclCreation] = ...
class CreateAclsResponse(StructValue):
    class AclCreationResult(StructValue): error_code: int = ...; error_message: str | None = ...
    throttle_time_ms: int = ...; results: list[AclCreationResult] = ...

REQUEST: StructType[CreateAclsRequest]
RESPONSE: StructType[CreateAclsResponse]
API: Api
