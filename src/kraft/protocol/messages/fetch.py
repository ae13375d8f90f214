"""Fetch (API key 1), versions 0-17, with two served ranges: ``API`` for controller listeners
(raft, 13-17) and ``CLIENT_API`` for broker listeners (consumers and follower replicas, 4-17).

Checked field for field against Kafka 4.x's ``FetchRequest.json``/``FetchResponse.json`` for v4-17
(names, versions, defaults, nullability, tags, ignorable). Kafka 4.0 serves 4-17 (KIP-896 removed
v0-3); v4 is the first that carries RecordBatch v2. Kafka 4.1 added v18 (KIP-1166: a tagged
``HighWatermark`` in the request's partition, default Long.MAX_VALUE); it is not described here.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT8, INT16, INT32, INT64, RECORDS, STRING, UUID, Versions, array, f, struct

REQUEST = struct("FetchRequest", [
    f("ClusterId", STRING, "12+", nullable="12+", tag=0, tagged="12+", default=None, ignorable=True),
    f("ReplicaId", INT32, "0-14", default=-1),
    f("ReplicaState", struct("ReplicaState", [
        f("ReplicaId", INT32, "15+", default=-1),
        f("ReplicaEpoch", INT64, "15+", default=-1),
    ]), "15+", tag=1, tagged="15+"),
    f("MaxWaitMs", INT32, "0+"),
    f("MinBytes", INT32, "0+"),
    f("MaxBytes", INT32, "3+", default=2147483647, ignorable=True),
    f("IsolationLevel", INT8, "4+", default=0, ignorable=True),
    f("SessionId", INT32, "7+", default=0, ignorable=True),
    f("SessionEpoch", INT32, "7+", default=-1, ignorable=True),
    f("Topics", array(struct("FetchTopic", [
        f("Topic", STRING, "0-12", ignorable=True),
        f("TopicId", UUID, "13+", ignorable=True),
        f("Partitions", array(struct("FetchPartition", [
            f("Partition", INT32, "0+"),
            f("CurrentLeaderEpoch", INT32, "9+", default=-1, ignorable=True),
            f("FetchOffset", INT64, "0+"),
            f("LastFetchedEpoch", INT32, "12+", default=-1),
            f("LogStartOffset", INT64, "5+", default=-1, ignorable=True),
            f("PartitionMaxBytes", INT32, "0+"),
            f("ReplicaDirectoryId", UUID, "17+", tag=0, tagged="17+", ignorable=True),
        ])), "0+"),
    ])), "0+"),
    f("ForgottenTopicsData", array(struct("ForgottenTopic", [
        f("Topic", STRING, "7-12", ignorable=True),
        f("TopicId", UUID, "13+", ignorable=True),
        f("Partitions", array(INT32), "7+"),
    ])), "7+"),
    f("RackId", STRING, "11+", default="", ignorable=True),
])

RESPONSE = struct("FetchResponse", [
    f("ThrottleTimeMs", INT32, "1+", ignorable=True),
    f("ErrorCode", INT16, "7+", ignorable=True),
    f("SessionId", INT32, "7+", default=0),
    f("Responses", array(struct("FetchableTopicResponse", [
        f("Topic", STRING, "0-12", ignorable=True),
        f("TopicId", UUID, "13+", ignorable=True),
        f("Partitions", array(struct("PartitionData", [
            f("PartitionIndex", INT32, "0+"),
            f("ErrorCode", INT16, "0+"),
            f("HighWatermark", INT64, "0+"),
            f("LastStableOffset", INT64, "4+", default=-1, ignorable=True),
            f("LogStartOffset", INT64, "5+", default=-1, ignorable=True),
            f("DivergingEpoch", struct("EpochEndOffset", [
                f("Epoch", INT32, "12+", default=-1),
                f("EndOffset", INT64, "12+", default=-1),
            ]), "12+", tag=0, tagged="12+"),
            f("CurrentLeader", struct("LeaderIdAndEpoch", [
                f("LeaderId", INT32, "12+", default=-1),
                f("LeaderEpoch", INT32, "12+", default=-1),
            ]), "12+", tag=1, tagged="12+"),
            f("SnapshotId", struct("SnapshotId", [
                f("EndOffset", INT64, "0+", default=-1),
                f("Epoch", INT32, "0+", default=-1),
            ]), "12+", tag=2, tagged="12+"),
            f("AbortedTransactions", array(struct("AbortedTransaction", [
                f("ProducerId", INT64, "4+"),
                f("FirstOffset", INT64, "4+"),
            ])), "4+", nullable="4+", ignorable=True),
            f("PreferredReadReplica", INT32, "11+", default=-1),
            f("Records", RECORDS, "0+", nullable="0+"),
        ])), "0+"),
    ])), "0+"),
    f("NodeEndpoints", array(struct("NodeEndpoint", [
        f("NodeId", INT32, "16+"),
        f("Host", STRING, "16+"),
        f("Port", INT32, "16+"),
        f("Rack", STRING, "16+", nullable="16+", default=None),
    ])), "16+", tag=0, tagged="16+"),
])

# The versions a controller listener accepts and advertises (KRaft's fetch names topics by id);
# the schema above describes all of 0-17.
SERVED_VERSIONS = Versions.parse("13-17")

# The versions a broker listener accepts and advertises: what Kafka 4.0 serves to consumers and
# followers (clients such as kafka-python and librdkafka still send v4-12, topics by name).
CLIENT_SERVED_VERSIONS = Versions.parse("4-17")

API = Api(
    key=1,
    name="Fetch",
    versions=Versions.parse("0-17"),
    flexible=Versions.parse("12+"),
    request=REQUEST,
    response=RESPONSE,
    served_versions=SERVED_VERSIONS,
)

# Same key, schemas and codec as API; only the served range differs. Not in REGISTRY (one Api per
# key there): a broker listener's table names it instead.
CLIENT_API = Api(
    key=API.key,
    name=API.name,
    versions=API.versions,
    flexible=API.flexible,
    request=REQUEST,
    response=RESPONSE,
    served_versions=CLIENT_SERVED_VERSIONS,
)
