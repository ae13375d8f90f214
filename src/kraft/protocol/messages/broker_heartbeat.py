"""BrokerHeartbeat (API key 63), versions 0-1."""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT16, INT32, INT64, UUID, Versions, array, f, struct

REQUEST = struct("BrokerHeartbeatRequest", [
    f("BrokerId", INT32, "0+"),
    f("BrokerEpoch", INT64, "0+", default=-1),
    f("CurrentMetadataOffset", INT64, "0+"),
    f("WantFence", BOOL, "0+"),
    f("WantShutDown", BOOL, "0+"),
    f("OfflineLogDirs", array(UUID), "1+", tag=0, tagged="1+"),
])

RESPONSE = struct("BrokerHeartbeatResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("IsCaughtUp", BOOL, "0+", default=False),
    f("IsFenced", BOOL, "0+", default=True),
    f("ShouldShutDown", BOOL, "0+"),
])

API = Api(
    key=63,
    name="BrokerHeartbeat",
    versions=Versions.parse("0-1"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
