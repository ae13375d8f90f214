"""UpdateFeatures (API key 57), versions 0-2."""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT8, INT16, INT32, STRING, Versions, array, f, struct

REQUEST = struct("UpdateFeaturesRequest", [
    f("timeoutMs", INT32, "0+", default=60000),
    f("FeatureUpdates", array(struct("FeatureUpdateKey", [
        f("Feature", STRING, "0+"),
        f("MaxVersionLevel", INT16, "0+"),
        f("AllowDowngrade", BOOL, "0"),
        f("UpgradeType", INT8, "1+", default=1),
    ])), "0+"),
    f("ValidateOnly", BOOL, "1+", default=False),
])

RESPONSE = struct("UpdateFeaturesResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("ErrorMessage", STRING, "0+", nullable="0+"),
    f("Results", array(struct("UpdatableFeatureResult", [
        f("Feature", STRING, "0+"),
        f("ErrorCode", INT16, "0+"),
        f("ErrorMessage", STRING, "0+", nullable="0+"),
    ])), "0-1", ignorable=True),
])

# The versions this node accepts and advertises; the schema above describes all of 0-2.
SERVED_VERSIONS = Versions.parse("0-1")

API = Api(
    key=57,
    name="UpdateFeatures",
    versions=Versions.parse("0-2"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
    served_versions=SERVED_VERSIONS,
)
