"""Typed view of ``kraft.protocol.messages.describe_acls`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class DescribeAclsRequest(StructValue): resource_type_filter: int = ...; resource_name_filter: str | None = ...; pattern_type_filter: int = ...; principal_filter: str | None = ...; host_filter: str | None = ...; operation: int = ...; permission_type: int = ...
class DescribeAclsResponse(StructValue):
    class DescribeAclsResource(StructValue):
        class AclDescription(StructValue): principal: str = ...; host: str = ...; operation: int = ...; permission_type: int = ...
        resource_type: int = ...; resource_name: str = ...; pattern_type: int = ...; acls: list[AclDescription] = ...
    throttle_time_ms: int = ...; error_code: int = ...; error_message: str | None = ...; resources: list[DescribeAclsResource] = ...

REQUEST: StructType[DescribeAclsRequest]
RESPONSE: StructType[DescribeAclsResponse]
API: Api
