"""ListOffsets (API key 2), versions 0-10.

Served 1-10, as Kafka 4.0 does (KIP-896 removed v0). Version 10 adds TimeoutMs (KIP-1075); v7 and
up accept the MAX_TIMESTAMP (-3) query, v8 EARLIEST_LOCAL (-4), v9 LATEST_TIERED (-5).
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT8, INT16, INT32, INT64, STRING, Versions, array, f, struct

REQUEST = struct("ListOffsetsRequest", [
    f("ReplicaId", INT32, "0+"),
    f("IsolationLevel", INT8, "2+"),
    f("Topics", array(struct("ListOffsetsTopic", [
        f("Name", STRING, "0+"),
        f("Partitions", array(struct("ListOffsetsPartition", [
            f("PartitionIndex", INT32, "0+"),
            f("CurrentLeaderEpoch", INT32, "4+", default=-1, ignorable=True),
            f("Timestamp", INT64, "0+"),
            f("MaxNumOffsets", INT32, "0", default=1),
        ])), "0+"),
    ])), "0+"),
    f("TimeoutMs", INT32, "10+", ignorable=True),
])

RESPONSE = struct("ListOffsetsResponse", [
    f("ThrottleTimeMs", INT32, "2+", ignorable=True),
    f("Topics", array(struct("ListOffsetsTopicResponse", [
        f("Name", STRING, "0+"),
        f("Partitions", array(struct("ListOffsetsPartitionResponse", [
            f("PartitionIndex", INT32, "0+"),
            f("ErrorCode", INT16, "0+"),
            f("OldStyleOffsets", array(INT64), "0"),
            f("Timestamp", INT64, "1+", default=-1),
            f("Offset", INT64, "1+", default=-1),
            f("LeaderEpoch", INT32, "4+", default=-1),
        ])), "0+"),
    ])), "0+"),
])

API = Api(
    key=2,
    name="ListOffsets",
    versions=Versions.parse("0-10"),
    flexible=Versions.parse("6+"),
    request=REQUEST,
    response=RESPONSE,
    served_versions=Versions.parse("1-10"),
)
