"""Typed view of ``kraft.protocol.messages.delete_acls`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class DeleteAclsRequest(StructValue):
    class DeleteAclsFilter(StructValue): resource_type_filter: int = ...; resource_name_filter: str | None = ...; pattern_type_filter: int = ...; principal_filter: str | None = ...; host_filter: str | None = ...; operation: int = ...; permission_type: int = ...
    filters: list[DeleteAclsFilter] = ...
class DeleteAclsResponse(StructValue):
    class DeleteAclsFilterResult(StructValue):
        class DeleteAclsMatchingAcl(StructValue): error_code: int = ...; error_message: str | None = ...; resource_type: int = ...; resource_name: str = ...; pattern_type: int = ...; principal: str = ...; host: str = ...; operation: int = ...; permission_type: int = ...
        error_code: int = ...; error_message: str | None = ...; matching_acls: list[DeleteAclsMatchingAcl] = ...
    throttle_time_ms: int = ...; filter_results: list[DeleteAclsFilterResult] = ...

REQUEST: StructType[DeleteAclsRequest]
RESPONSE: StructType[DeleteAclsResponse]
API: Api
