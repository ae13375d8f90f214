"""DescribeQuorum (API key 55), versions 0-2."""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT16, INT32, INT64, STRING, UINT16, UUID, Versions, array, f, struct

REQUEST = struct("DescribeQuorumRequest", [
    f("Topics", array(struct("TopicData", [
        f("TopicName", STRING, "0+"),
        f("Partitions", array(struct("PartitionData", [
            f("PartitionIndex", INT32, "0+"),
        ])), "0+"),
    ])), "0+"),
])

_REPLICA_STATE = struct("ReplicaState", [
    f("ReplicaId", INT32, "0+"),
    f("ReplicaDirectoryId", UUID, "2+"),
    f("LogEndOffset", INT64, "0+"),
    f("LastFetchTimestamp", INT64, "1+", default=-1, ignorable=True),
    f("LastCaughtUpTimestamp", INT64, "1+", default=-1, ignorable=True),
])

RESPONSE = struct("DescribeQuorumResponse", [
    f("ErrorCode", INT16, "0+"),
    f("ErrorMessage", STRING, "2+", nullable="2+", ignorable=True),
    f("Topics", array(struct("TopicData", [
        f("TopicName", STRING, "0+"),
        f("Partitions", array(struct("PartitionData", [
            f("PartitionIndex", INT32, "0+"),
            f("ErrorCode", INT16, "0+"),
            f("ErrorMessage", STRING, "2+", nullable="2+", ignorable=True),
            f("LeaderId", INT32, "0+"),
            f("LeaderEpoch", INT32, "0+"),
            f("HighWatermark", INT64, "0+"),
            f("CurrentVoters", array(_REPLICA_STATE), "0+"),
            f("Observers", array(_REPLICA_STATE), "0+"),
        ])), "0+"),
    ])), "0+"),
    f("Nodes", array(struct("Node", [
        f("NodeId", INT32, "2+"),
        f("Listeners", array(struct("Listener", [
            f("Name", STRING, "2+"),
            f("Host", STRING, "2+"),
            f("Port", UINT16, "2+"),
        ])), "2+"),
    ])), "2+"),
])

API = Api(
    key=55,
    name="DescribeQuorum",
    versions=Versions.parse("0-2"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
