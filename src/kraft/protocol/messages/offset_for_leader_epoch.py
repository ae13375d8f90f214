"""OffsetForLeaderEpoch (API key 23), versions 0-4.

Field for field Kafka's ``OffsetForLeaderEpochRequest.json``/``Response.json``. The schema keeps the
field versions of v0-1 (the response's ``LeaderEpoch`` is v1+), so all of 0-4 is described; served
2-4, as Kafka 4.0 does (KIP-896 removed v0-1). v2 adds ``CurrentLeaderEpoch`` (KIP-320 fencing) and
the throttle time, v3 ``ReplicaId`` (default -2, the "debug" consumer that may see past the high
watermark), v4 is the first flexible version.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT16, INT32, INT64, STRING, Versions, array, f, struct

REQUEST = struct("OffsetForLeaderEpochRequest", [
    f("ReplicaId", INT32, "3+", default=-2, ignorable=True),
    f("Topics", array(struct("OffsetForLeaderTopic", [
        f("Topic", STRING, "0+"),
        f("Partitions", array(struct("OffsetForLeaderPartition", [
            f("Partition", INT32, "0+"),
            f("CurrentLeaderEpoch", INT32, "2+", default=-1, ignorable=True),
            f("LeaderEpoch", INT32, "0+"),
        ])), "0+"),
    ])), "0+"),
])

RESPONSE = struct("OffsetForLeaderEpochResponse", [
    f("ThrottleTimeMs", INT32, "2+", ignorable=True),
    f("Topics", array(struct("OffsetForLeaderTopicResult", [
        f("Topic", STRING, "0+"),
        f("Partitions", array(struct("EpochEndOffset", [
            f("ErrorCode", INT16, "0+"),
            f("Partition", INT32, "0+"),
            f("LeaderEpoch", INT32, "1+", default=-1, ignorable=True),
            f("EndOffset", INT64, "0+", default=-1),
        ])), "0+"),
    ])), "0+"),
])

# The versions this node accepts and advertises; the schema above describes all of 0-4.
SERVED_VERSIONS = Versions.parse("2-4")

API = Api(
    key=23,
    name="OffsetForLeaderEpoch",
    versions=Versions.parse("0-4"),
    flexible=Versions.parse("4+"),
    request=REQUEST,
    response=RESPONSE,
    served_versions=SERVED_VERSIONS,
)
