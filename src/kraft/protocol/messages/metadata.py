"""Metadata (API key 3), versions 0-13."""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT16, INT32, STRING, UUID, Versions, array, f, struct

REQUEST = struct("MetadataRequest", [
    f("Topics", array(struct("MetadataRequestTopic", [
        f("TopicId", UUID, "10+", ignorable=True),
        f("Name", STRING, "0+", nullable="10+"),
    ])), "0+", nullable="1+"),
    f("AllowAutoTopicCreation", BOOL, "4+", default=True),
    f("IncludeClusterAuthorizedOperations", BOOL, "8-10"),
    f("IncludeTopicAuthorizedOperations", BOOL, "8+"),
])

RESPONSE = struct("MetadataResponse", [
    f("ThrottleTimeMs", INT32, "3+", ignorable=True),
    f("Brokers", array(struct("MetadataResponseBroker", [
        f("NodeId", INT32, "0+"),
        f("Host", STRING, "0+"),
        f("Port", INT32, "0+"),
        f("Rack", STRING, "1+", nullable="1+", default=None, ignorable=True),
    ])), "0+"),
    f("ClusterId", STRING, "2+", nullable="2+", default=None, ignorable=True),
    f("ControllerId", INT32, "1+", default=-1, ignorable=True),
    f("Topics", array(struct("MetadataResponseTopic", [
        f("ErrorCode", INT16, "0+"),
        f("Name", STRING, "0+", nullable="12+"),
        f("TopicId", UUID, "10+", ignorable=True),
        f("IsInternal", BOOL, "1+", default=False, ignorable=True),
        f("Partitions", array(struct("MetadataResponsePartition", [
            f("ErrorCode", INT16, "0+"),
            f("PartitionIndex", INT32, "0+"),
            f("LeaderId", INT32, "0+"),
            f("LeaderEpoch", INT32, "7+", default=-1, ignorable=True),
            f("ReplicaNodes", array(INT32), "0+"),
            f("IsrNodes", array(INT32), "0+"),
            f("OfflineReplicas", array(INT32), "5+", ignorable=True),
        ])), "0+"),
        f("TopicAuthorizedOperations", INT32, "8+", default=-2147483648),
    ])), "0+"),
    f("ClusterAuthorizedOperations", INT32, "8-10", default=-2147483648),
    f("ErrorCode", INT16, "13+", ignorable=True),
])

API = Api(
    key=3,
    name="Metadata",
    versions=Versions.parse("0-13"),
    flexible=Versions.parse("9+"),
    request=REQUEST,
    response=RESPONSE,
)
