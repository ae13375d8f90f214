"""Typed view of ``kraft.protocol.messages.incremental_alter_configs`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class IncrementalAlterConfigsRequest(StructValue):
    class AlterConfigsResource(StructValue):
        class AlterableConfig(StructValue): name: str = ...; config_operation: int = ...; value: str | None = ...
        resource_type: int = ...; resource_name: str = ...; configs: list[AlterableConfig] = ...
    resources: list[AlterConfigsResource] = ...; validate_only: bool = ...
class IncrementalAlterConfigsResponse(StructValue):
    class AlterConfigsResourceResponse(StructValue): error_code: int = ...; error_message: str | None = ...; resource_type: int = ...; resource_name: str = ...
    throttle_time_ms: int = ...; responses: list[AlterConfigsResourceResponse] = ...

REQUEST: StructType[IncrementalAlterConfigsRequest]
RESPONSE: StructType[IncrementalAlterConfigsResponse]
API: Api
