"""Vote (API key 52), versions 0-2, all flexible.

v0-1 follow Kafka's VoteRequest/VoteResponse JSON (KIP-853 added the directory ids in v1). v2 is
KIP-996 Pre-Vote, newer than our Kafka snapshot: PreVote follows LastOffset in the partition, and
the Candidate* fields carry their post-KIP-996 Replica* names (names do not reach the wire).
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT16, INT32, INT64, STRING, UINT16, UUID, Versions, array, f, struct

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
            # KIP-996. Not ignorable: a pre-vote must never be sent to a peer that would read it as
            # a real vote, so encoding PreVote=true below v2 fails (spec raft.md 3.4).
            f("PreVote", BOOL, "2+", default=False),
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
    ])), "1+", tag=0, tagged="1+"),
])

API = Api(key=52, name="Vote", versions=Versions.parse("0-2"), flexible=Versions.parse("0+"),
          request=REQUEST, response=RESPONSE)
