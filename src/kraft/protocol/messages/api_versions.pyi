"""Typed view of ``kraft.protocol.messages.api_versions`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class ApiVersionsRequest(StructValue):
    client_software_name: str
    client_software_version: str
    def __init__(
        self,
        *,
        client_software_name: str = ...,
        client_software_version: str = ...,
    ) -> None: ...

class ApiVersionsResponse(StructValue):
    class ApiVersion(StructValue):
        api_key: int
        min_version: int
        max_version: int
        def __init__(
            self,
            *,
            api_key: int = ...,
            min_version: int = ...,
            max_version: int = ...,
        ) -> None: ...

    class SupportedFeatureKey(StructValue):
        name: str
        min_version: int
        max_version: int
        def __init__(
            self,
            *,
            name: str = ...,
            min_version: int = ...,
            max_version: int = ...,
        ) -> None: ...

    class FinalizedFeatureKey(StructValue):
        name: str
        max_version_level: int
        min_version_level: int
        def __init__(
            self,
            *,
            name: str = ...,
            max_version_level: int = ...,
            min_version_level: int = ...,
        ) -> None: ...

    error_code: int
    api_keys: list[ApiVersion]
    throttle_time_ms: int
    supported_features: list[SupportedFeatureKey]
    finalized_features_epoch: int
    finalized_features: list[FinalizedFeatureKey]
    zk_migration_ready: bool
    def __init__(
        self,
        *,
        error_code: int = ...,
        api_keys: list[ApiVersion] = ...,
        throttle_time_ms: int = ...,
        supported_features: list[SupportedFeatureKey] = ...,
        finalized_features_epoch: int = ...,
        finalized_features: list[FinalizedFeatureKey] = ...,
        zk_migration_ready: bool = ...,
    ) -> None: ...

REQUEST: StructType[ApiVersionsRequest]
RESPONSE: StructType[ApiVersionsResponse]
API: Api
