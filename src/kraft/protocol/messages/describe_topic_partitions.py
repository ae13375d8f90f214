"""DescribeTopicPartitions (API key 75), versions 0."""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT16, INT32, STRING, UUID, Versions, array, f, struct

REQUEST = struct("DescribeTopicPartitionsRequest", [
    f("Topics", array(struct("TopicRequest", [
        f("Name", STRING, "0+"),
    ])), "0+"),
    f("ResponsePartitionLimit", INT32, "0+", default=2000),
    f("Cursor", struct("Cursor", [
        f("TopicName", STRING, "0+"),
        f("PartitionIndex", INT32, "0+"),
    ]), "0+", nullable="0+", default=None),
])

RESPONSE = struct("DescribeTopicPartitionsResponse", [
    f("ThrottleTimeMs", INT32, "0+", ignorable=True),
    f("Topics", array(struct("DescribeTopicPartitionsResponseTopic", [
        f("ErrorCode", INT16, "0+"),
        f("Name", STRING, "0+", nullable="0+"),
        f("TopicId", UUID, "0+", ignorable=True),
        f("IsInternal", BOOL, "0+", default=False, ignorable=True),
        f("Partitions", array(struct("DescribeTopicPartitionsResponsePartition", [
            f("ErrorCode", INT16, "0+"),
            f("PartitionIndex", INT32, "0+"),
            f("LeaderId", INT32, "0+"),
            f("LeaderEpoch", INT32, "0+", default=-1, ignorable=True),
            f("ReplicaNodes", array(INT32), "0+"),
            f("IsrNodes", array(INT32), "0+"),
            f("EligibleLeaderReplicas", array(INT32), "0+", nullable="0+", default=None),
            f("LastKnownElr", array(INT32), "0+", nullable="0+", default=None),
            f("OfflineReplicas", array(INT32), "0+", ignorable=True),
        ])), "0+"),
        f("TopicAuthorizedOperations", INT32, "0+", default=-2147483648),
    ])), "0+"),
    f("NextCursor", struct("Cursor", [
        f("TopicName", STRING, "0+"),
        f("PartitionIndex", INT32, "0+"),
    ]), "0+", nullable="0+", default=None),
])

API = Api(
    key=75,
    name="DescribeTopicPartitions",
    versions=Versions.parse("0"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
