"""ElectLeaders (API key 43), versions 0-2."""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT8, INT16, INT32, STRING, Versions, array, f, struct

REQUEST = struct("ElectLeadersRequest", [
    f("ElectionType", INT8, "1+"),
    f("TopicPartitions", array(struct("TopicPartitions", [
        f("Topic", STRING, "0+"),
        f("Partitions", array(INT32), "0+"),
    ])), "0+", nullable="0+"),
    f("TimeoutMs", INT32, "0+", default=60000),
])

RESPONSE = struct("ElectLeadersResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "1+"),
    f("ReplicaElectionResults", array(struct("ReplicaElectionResult", [
        f("Topic", STRING, "0+"),
        f("PartitionResult", array(struct("PartitionResult", [
            f("PartitionId", INT32, "0+"),
            f("ErrorCode", INT16, "0+"),
            f("ErrorMessage", STRING, "0+", nullable="0+"),
        ])), "0+"),
    ])), "0+"),
])

API = Api(
    key=43,
    name="ElectLeaders",
    versions=Versions.parse("0-2"),
    flexible=Versions.parse("2+"),
    request=REQUEST,
    response=RESPONSE,
)
