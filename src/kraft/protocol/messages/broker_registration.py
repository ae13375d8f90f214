"""BrokerRegistration (API key 62), versions 0-4."""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT16, INT32, INT64, STRING, UINT16, UUID, Versions, array, f, struct

REQUEST = struct("BrokerRegistrationRequest", [
    f("BrokerId", INT32, "0+"),
    f("ClusterId", STRING, "0+"),
    f("IncarnationId", UUID, "0+"),
    f("Listeners", array(struct("Listener", [
        f("Name", STRING, "0+"),
        f("Host", STRING, "0+"),
        f("Port", UINT16, "0+"),
        f("SecurityProtocol", INT16, "0+"),
    ])), "0+"),
    f("Features", array(struct("Feature", [
        f("Name", STRING, "0+"),
        f("MinSupportedVersion", INT16, "0+"),
        f("MaxSupportedVersion", INT16, "0+"),
    ])), "0+"),
    f("Rack", STRING, "0+", nullable="0+"),
    f("IsMigratingZkBroker", BOOL, "1+", default=False),
    f("LogDirs", array(UUID), "2+", ignorable=True),
    f("PreviousBrokerEpoch", INT64, "3+", default=-1, ignorable=True),
])

RESPONSE = struct("BrokerRegistrationResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("BrokerEpoch", INT64, "0+", default=-1),
])

API = Api(
    key=62,
    name="BrokerRegistration",
    versions=Versions.parse("0-4"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
