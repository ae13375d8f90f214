"""Typed view of ``kraft.protocol.messages.describe_configs`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class DescribeConfigsRequest(StructValue):
    class DescribeConfigsResource(StructValue): resource_type: int = ...; resource_name: str = ...; configuration_keys: list[str] | None = ...
    resources: list[DescribeConfigsResource] = ...; include_synonyms: bool = ...; include_documentation: bool = ...
class DescribeConfigsResponse(StructValue):
    class DescribeConfigsResult(StructValue):
        class DescribeConfigsResourceResult(StructValue):
            class DescribeConfigsSynonym(StructValue): name: str = ...; value: str | None = ...; source: int = ...
            name: str = ...; value: str | None = ...; read_only: bool = ...; is_default: bool = ...; config_source: int = ...; is_sensitive: bool = ...; synonyms: list[DescribeConfigsSynonym] = ...; config_type: int = ...; documentation: str | None = ...
        error_code: int = ...; error_message: str | None = ...; resource_type: int = ...; resource_name: str = ...; configs: list[DescribeConfigsResourceResult] = ...
    throttle_time_ms: int = ...; results: list[DescribeConfigsResult] = ...

REQUEST: StructType[DescribeConfigsRequest]
RESPONSE: StructType[DescribeConfigsResponse]
API: Api
