"""Vote (API key 52), versions 0-2, all flexible. v2 adds PreVote (KIP-996)."""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT16, INT32, INT64, STRING, UINT16, UUID, array, f, struct, Versions

REQUEST = struct("VoteRequest", [
    f("ClusterId", STRING, "0+", nullable="0+", default=None),
    f("VoterId", INT32, "1+", default=-1, ignorable=True),
    f("Topics", array(struct("TopicData", [
        f("TopicName", STRING, "0+"),
        f("Partitions", array(struct("PartitionData", [
            f("PartitionIndex", INT32, "0+"),
            f("ReplicaEpoch", INT32, "0+"),
            f("ReplicaId", INT32, "0+"),
            f("ReplicaDirectoryId", UUID, "1+", ignorable=True),
            f("VoterDirectoryId", UUID, "1+", ignorable=True),
            f("LastOffsetEpoch", INT32, "0+"),
            f("LastOffset", INT64, "0+"),
            f("PreVote", BOOL, "2+", default=False, ignorable=True),
        ])), "0+"),
    ])), "0+"),
])

RESPONSE = struct("VoteResponse", [
    f("ErrorCode", INT16, "0+"),
    f("Topics", array(struct("TopicData", [
        f("TopicName", STRING, "0+"),
        f("Partitions", array(struct("PartitionData", [
            f("PartitionIndex", INT32, "0+"),
            f("ErrorCode", INT16, "0+"),
            f("LeaderId", INT32, "0+"),
            f("LeaderEpoch", INT32, "0+"),
            f("VoteGranted", BOOL, "0+"),
        ])), "0+"),
    ])), "0+"),
    f("NodeEndpoints", array(struct("NodeEndpoint", [
        f("NodeId", INT32, "1+"),
        f("Host", STRING, "1+"),
        f("Port", UINT16, "1+"),
    ])), "1+", tag=0, tagged="1+", ignorable=True),
])

API = Api(key=52, name="Vote", versions=Versions.parse("0-2"), flexible=Versions.parse("0+"),
          request=REQUEST, response=RESPONSE)
