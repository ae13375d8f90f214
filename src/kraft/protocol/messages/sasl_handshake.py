"""SaslHandshake (API key 17), versions 0-1.

v1 means "the tokens that follow travel inside SaslAuthenticate requests" (KIP-152); v0 means raw,
size-prefixed tokens with no request header. Kafka 4.x still lists 0-1 (KAFKA-9577: the version
cannot be bumped because clients up to 2.4 negotiated it wrongly). Never flexible.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT16, STRING, Versions, array, f, struct

REQUEST = struct("SaslHandshakeRequest", [
    f("Mechanism", STRING, "0+"),
])

RESPONSE = struct("SaslHandshakeResponse", [
    f("ErrorCode", INT16, "0+"),
    f("Mechanisms", array(STRING), "0+"),
])

API = Api(
    key=17,
    name="SaslHandshake",
    versions=Versions.parse("0-1"),
    flexible=Versions.parse("none"),
    request=REQUEST,
    response=RESPONSE,
)
