"""UnregisterBroker (API key 64), version 0."""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT16, INT32, STRING, Versions, f, struct

REQUEST = struct("UnregisterBrokerRequest", [
    f("BrokerId", INT32, "0+"),
])

RESPONSE = struct("UnregisterBrokerResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("ErrorMessage", STRING, "0+", nullable="0+"),
])

API = Api(
    key=64,
    name="UnregisterBroker",
    versions=Versions.parse("0"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
