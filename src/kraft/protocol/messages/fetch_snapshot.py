"""FetchSnapshot (API key 59), versions 0-1."""

from kraft.protocol.api import Api
from kraft.protocol.schema import (
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UINT16,
    UUID,
    Versions,
    array,
    f,
    struct,
)

REQUEST = struct("FetchSnapshotRequest", [
    f("ClusterId", STRING, "0+", nullable="0+", tag=0, tagged="0+", default=None),
    f("ReplicaId", INT32, "0+", default=-1),
    f("MaxBytes", INT32, "0+", default=2147483647),
    f("Topics", array(struct("TopicSnapshot", [
        f("Name", STRING, "0+"),
        f("Partitions", array(struct("PartitionSnapshot", [
            f("Partition", INT32, "0+"),
            f("CurrentLeaderEpoch", INT32, "0+"),
            f("SnapshotId", struct("SnapshotId", [
                f("EndOffset", INT64, "0+"),
                f("Epoch", INT32, "0+"),
            ]), "0+"),
            f("Position", INT64, "0+"),
            f("ReplicaDirectoryId", UUID, "1+", tag=0, tagged="1+", ignorable=True),
        ])), "0+"),
    ])), "0+"),
])

RESPONSE = struct("FetchSnapshotResponse", [
    f("ThrottleTimeMs", INT32, "0+", ignorable=True),
    f("ErrorCode", INT16, "0+"),
    f("Topics", array(struct("TopicSnapshot", [
        f("Name", STRING, "0+"),
        f("Partitions", array(struct("PartitionSnapshot", [
            f("Index", INT32, "0+"),
            f("ErrorCode", INT16, "0+"),
            f("SnapshotId", struct("SnapshotId", [
                f("EndOffset", INT64, "0+"),
                f("Epoch", INT32, "0+"),
            ]), "0+"),
            f("CurrentLeader", struct("LeaderIdAndEpoch", [
                f("LeaderId", INT32, "0+"),
                f("LeaderEpoch", INT32, "0+"),
            ]), "0+", tag=0, tagged="0+"),
            f("Size", INT64, "0+"),
            f("Position", INT64, "0+"),
            f("UnalignedRecords", RECORDS, "0+"),
        ])), "0+"),
    ])), "0+"),
    f("NodeEndpoints", array(struct("NodeEndpoint", [
        f("NodeId", INT32, "1+"),
        f("Host", STRING, "1+"),
        f("Port", UINT16, "1+"),
    ])), "1+", tag=0, tagged="1+"),
])

API = Api(
    key=59,
    name="FetchSnapshot",
    versions=Versions.parse("0-1"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
