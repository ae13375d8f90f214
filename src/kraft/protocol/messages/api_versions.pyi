"""Typed view of ``kraft.protocol.messages.api_versions`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class ApiVersionsRequest(StructValue): client_software_name: str = ...; client_software_version: str = ...
class ApiVersionsResponse(StructValue):
    class ApiVersion(StructValue): api_key: int = ...; min_version: int = ...; max_version: int = ...
    class SupportedFeatureKey(StructValue): name: str = ...; min_version: int = ...; max_version: int = ...
    class FinalizedFeatureKey(StructValue): name: str = ...; max_version_level: int = ...; min_version_level: int = ...
    error_code: int = ...; api_keys: list[ApiVersion] = ...; throttle_time_ms: int = ...; supported_features: list[SupportedFeatureKey] = ...; finalized_features_epoch: int = ...; finalized_features: list[FinalizedFeatureKey] = ...; zk_migration_ready: bool = ...

REQUEST: StructType[ApiVersionsRequest]
RESPONSE: StructType[ApiVersionsResponse]
API: Api
