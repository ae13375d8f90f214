"""CreateTopics (API key 19), versions 0-7."""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT8, INT16, INT32, STRING, UUID, Versions, array, f, struct

REQUEST = struct("CreateTopicsRequest", [
    f("Topics", array(struct("CreatableTopic", [
        f("Name", STRING, "0+"),
        f("NumPartitions", INT32, "0+"),
        f("ReplicationFactor", INT16, "0+"),
        f("Assignments", array(struct("CreatableReplicaAssignment", [
            f("PartitionIndex", INT32, "0+"),
            f("BrokerIds", array(INT32), "0+"),
        ])), "0+"),
        f("Configs", array(struct("CreatableTopicConfig", [
            f("Name", STRING, "0+"),
            f("Value", STRING, "0+", nullable="0+"),
        ])), "0+"),
    ])), "0+"),
    f("timeoutMs", INT32, "0+", default=60000),
    f("validateOnly", BOOL, "1+", default=False),
])

RESPONSE = struct("CreateTopicsResponse", [
    f("ThrottleTimeMs", INT32, "2+", ignorable=True),
    f("Topics", array(struct("CreatableTopicResult", [
        f("Name", STRING, "0+"),
        f("TopicId", UUID, "7+", ignorable=True),
        f("ErrorCode", INT16, "0+"),
        f("ErrorMessage", STRING, "1+", nullable="0+", ignorable=True),
        f("TopicConfigErrorCode", INT16, "5+", tag=0, tagged="5+", ignorable=True),
        f("NumPartitions", INT32, "5+", default=-1, ignorable=True),
        f("ReplicationFactor", INT16, "5+", default=-1, ignorable=True),
        f("Configs", array(struct("CreatableTopicConfigs", [
            f("Name", STRING, "5+"),
            f("Value", STRING, "5+", nullable="5+"),
            f("ReadOnly", BOOL, "5+"),
            f("ConfigSource", INT8, "5+", default=-1, ignorable=True),
            f("IsSensitive", BOOL, "5+"),
        ])), "5+", nullable="5+", ignorable=True),
    ])), "0+"),
])

API = Api(
    key=19,
    name="CreateTopics",
    versions=Versions.parse("0-7"),
    flexible=Versions.parse("5+"),
    request=REQUEST,
    response=RESPONSE,
)
