"""AllocateProducerIds (API key 67), version 0: a broker asks the active controller for a block of
producer ids (the controller records it as a ``ProducerIdsRecord``) to hand out in InitProducerId.

Field for field Kafka's ``AllocateProducerIdsRequest.json``/``Response.json``; flexible from v0.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT16, INT32, INT64, Versions, f, struct

REQUEST = struct("AllocateProducerIdsRequest", [
    f("BrokerId", INT32, "0+"),
    f("BrokerEpoch", INT64, "0+", default=-1),
])

RESPONSE = struct("AllocateProducerIdsResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("ProducerIdStart", INT64, "0+"),
    f("ProducerIdLen", INT32, "0+"),
])

API = Api(
    key=67,
    name="AllocateProducerIds",
    versions=Versions.parse("0"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
