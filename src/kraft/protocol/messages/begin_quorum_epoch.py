"""BeginQuorumEpoch (API key 53), versions 0-1."""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT16, INT32, STRING, UINT16, UUID, Versions, array, f, struct

REQUEST = struct("BeginQuorumEpochRequest", [
    f("ClusterId", STRING, "0+", nullable="0+", default=None),
    f("VoterId", INT32, "1+", default=-1, ignorable=True),
    f("Topics", array(struct("TopicData", [
        f("TopicName", STRING, "0+"),
        f("Partitions", array(struct("PartitionData", [
            f("PartitionIndex", INT32, "0+"),
            f("VoterDirectoryId", UUID, "1+", ignorable=True),
            f("LeaderId", INT32, "0+"),
            f("LeaderEpoch", INT32, "0+"),
        ])), "0+"),
    ])), "0+"),
    f("LeaderEndpoints", array(struct("LeaderEndpoint", [
        f("Name", STRING, "1+"),
        f("Host", STRING, "1+"),
        f("Port", UINT16, "1+"),
    ])), "1+", ignorable=True),
])

RESPONSE = struct("BeginQuorumEpochResponse", [
    f("ErrorCode", INT16, "0+"),
    f("Topics", array(struct("TopicData", [
        f("TopicName", STRING, "0+"),
        f("Partitions", array(struct("PartitionData", [
            f("PartitionIndex", INT32, "0+"),
            f("ErrorCode", INT16, "0+"),
            f("LeaderId", INT32, "0+"),
            f("LeaderEpoch", INT32, "0+"),
        ])), "0+"),
    ])), "0+"),
    f("NodeEndpoints", array(struct("NodeEndpoint", [
        f("NodeId", INT32, "1+"),
        f("Host", STRING, "1+"),
        f("Port", UINT16, "1+"),
    ])), "1+", tag=0, tagged="1+"),
])

API = Api(
    key=53,
    name="BeginQuorumEpoch",
    versions=Versions.parse("0-1"),
    flexible=Versions.parse("1+"),
    request=REQUEST,
    response=RESPONSE,
)
