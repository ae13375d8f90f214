"""ApiVersions (API key 18), versions 0-4."""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Versions, array, f, struct

REQUEST = struct("ApiVersionsRequest", [
    f("ClientSoftwareName", STRING, "3+", ignorable=True),
    f("ClientSoftwareVersion", STRING, "3+", ignorable=True),
])

RESPONSE = struct("ApiVersionsResponse", [
    f("ErrorCode", INT16, "0+"),
    f("ApiKeys", array(struct("ApiVersion", [
        f("ApiKey", INT16, "0+"),
        f("MinVersion", INT16, "0+"),
        f("MaxVersion", INT16, "0+"),
    ])), "0+"),
    f("ThrottleTimeMs", INT32, "1+", ignorable=True),
    f("SupportedFeatures", array(struct("SupportedFeatureKey", [
        f("Name", STRING, "3+"),
        f("MinVersion", INT16, "3+"),
        f("MaxVersion", INT16, "3+"),
    ])), "3+", tag=0, tagged="3+", ignorable=True),
    f("FinalizedFeaturesEpoch", INT64, "3+", tag=1, tagged="3+", default=-1, ignorable=True),
    f("FinalizedFeatures", array(struct("FinalizedFeatureKey", [
        f("Name", STRING, "3+"),
        f("MaxVersionLevel", INT16, "3+"),
        f("MinVersionLevel", INT16, "3+"),
    ])), "3+", tag=2, tagged="3+", ignorable=True),
    f("ZkMigrationReady", BOOL, "3+", tag=3, tagged="3+", default=False, ignorable=True),
])

API = Api(
    key=18,
    name="ApiVersions",
    versions=Versions.parse("0-4"),
    flexible=Versions.parse("3+"),
    request=REQUEST,
    response=RESPONSE,
)
