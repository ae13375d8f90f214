"""CreatePartitions (API key 37), versions 0-3."""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT16, INT32, STRING, Versions, array, f, struct

REQUEST = struct("CreatePartitionsRequest", [
    f("Topics", array(struct("CreatePartitionsTopic", [
        f("Name", STRING, "0+"),
        f("Count", INT32, "0+"),
        f("Assignments", array(struct("CreatePartitionsAssignment", [
            f("BrokerIds", array(INT32), "0+"),
        ])), "0+", nullable="0+"),
    ])), "0+"),
    f("TimeoutMs", INT32, "0+"),
    f("ValidateOnly", BOOL, "0+"),
])

RESPONSE = struct("CreatePartitionsResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("Results", array(struct("CreatePartitionsTopicResult", [
        f("Name", STRING, "0+"),
        f("ErrorCode", INT16, "0+"),
        f("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    ])), "0+"),
])

API = Api(
    key=37,
    name="CreatePartitions",
    versions=Versions.parse("0-3"),
    flexible=Versions.parse("2+"),
    request=REQUEST,
    response=RESPONSE,
)
