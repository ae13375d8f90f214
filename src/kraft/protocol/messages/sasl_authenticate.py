"""SaslAuthenticate (API key 36), versions 0-2: one SASL token each way (KIP-152).

v1 adds SessionLifetimeMs (KIP-368 re-authentication; 0 = no limit), v2 is flexible.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import BYTES, INT16, INT64, STRING, Versions, f, struct

REQUEST = struct("SaslAuthenticateRequest", [
    f("AuthBytes", BYTES, "0+"),
])

RESPONSE = struct("SaslAuthenticateResponse", [
    f("ErrorCode", INT16, "0+"),
    f("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    f("AuthBytes", BYTES, "0+"),
    f("SessionLifetimeMs", INT64, "1+", default=0, ignorable=True),
])

API = Api(
    key=36,
    name="SaslAuthenticate",
    versions=Versions.parse("0-2"),
    flexible=Versions.parse("2+"),
    request=REQUEST,
    response=RESPONSE,
)
