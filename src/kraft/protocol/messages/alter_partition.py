"""AlterPartition (API key 56), versions 0-3."""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT8, INT16, INT32, INT64, STRING, UUID, Versions, array, f, struct

REQUEST = struct("AlterPartitionRequest", [
    f("BrokerId", INT32, "0+"),
    f("BrokerEpoch", INT64, "0+", default=-1),
    f("Topics", array(struct("TopicData", [
        f("TopicName", STRING, "0-1", ignorable=True),
        f("TopicId", UUID, "2+", ignorable=True),
        f("Partitions", array(struct("PartitionData", [
            f("PartitionIndex", INT32, "0+"),
            f("LeaderEpoch", INT32, "0+"),
            f("NewIsr", array(INT32), "0-2"),
            f("NewIsrWithEpochs", array(struct("BrokerState", [
                f("BrokerId", INT32, "3+"),
                f("BrokerEpoch", INT64, "3+", default=-1),
            ])), "3+"),
            f("LeaderRecoveryState", INT8, "1+", default=0),
            f("PartitionEpoch", INT32, "0+"),
        ])), "0+"),
    ])), "0+"),
])

RESPONSE = struct("AlterPartitionResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("Topics", array(struct("TopicData", [
        f("TopicName", STRING, "0-1", ignorable=True),
        f("TopicId", UUID, "2+", ignorable=True),
        f("Partitions", array(struct("PartitionData", [
            f("PartitionIndex", INT32, "0+"),
            f("ErrorCode", INT16, "0+"),
            f("LeaderId", INT32, "0+"),
            f("LeaderEpoch", INT32, "0+"),
            f("Isr", array(INT32), "0+"),
            f("LeaderRecoveryState", INT8, "1+", default=0, ignorable=True),
            f("PartitionEpoch", INT32, "0+"),
        ])), "0+"),
    ])), "0+"),
])

API = Api(
    key=56,
    name="AlterPartition",
    versions=Versions.parse("0-3"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
