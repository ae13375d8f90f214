"""Typed view of ``kraft.protocol.messages.update_features`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue, Versions

class UpdateFeaturesRequest(StructValue):
    class FeatureUpdateKey(StructValue): feature: str = ...; max_version_level: int = ...; allow_downgrade: bool = ...; upgrade_type: int = ...
    timeout_ms: int = ...; feature_updates: list[FeatureUpdateKey] = ...; validate_only: bool = ...
class UpdateFeaturesResponse(StructValue):
    class UpdatableFeatureResult(StructValue): feature: str = ...; error_code: int = ...; error_message: str | None = ...
    throttle_time_ms: int = ...; error_code: int = ...; error_message: str | None = ...; results: list[UpdatableFeatureResult] = ...

REQUEST: StructType[UpdateFeaturesRequest]
RESPONSE: StructType[UpdateFeaturesResponse]
SERVED_VERSIONS: Versions
API: Api
