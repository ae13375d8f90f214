"""Produce (API key 0), versions 3-13.

Field for field Kafka 4.1+'s ``ProduceRequest.json``/``ProduceResponse.json``, whose validVersions
are 3-13: Kafka 4.0 removed v0-2, the old message formats (KIP-896, KAFKA-18659), so only
RecordBatch magic 2 arrives here. Version 9 is the first flexible one; v10 adds the tagged
``CurrentLeader`` (per partition) and ``NodeEndpoints`` (per response) of KIP-951, sent with
NOT_LEADER_OR_FOLLOWER; v11 and v12 change nothing on the wire (KIP-890's TRANSACTION_ABORTABLE and
transactions v2); v13 names topics by id instead of by name (KIP-516; UNKNOWN_TOPIC_ID).

Every described version is served. Kafka 4.0 itself serves 3-12 (v13 arrived in 4.1) and, for
librdkafka before 2.11.1 (which turns compression off when a Produce range does not start at 0),
advertises 0-12 in ApiVersions while refusing v0-2: that advertising choice belongs to whoever
wires the listener, not to this schema.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT16, INT32, INT64, RECORDS, STRING, UUID, Versions, array, f, struct

REQUEST = struct("ProduceRequest", [
    f("TransactionalId", STRING, "3+", nullable="3+", default=None),
    f("Acks", INT16, "0+"),
    f("TimeoutMs", INT32, "0+"),
    f("TopicData", array(struct("TopicProduceData", [
        f("Name", STRING, "0-12", ignorable=True),
        f("TopicId", UUID, "13+", ignorable=True),
        f("PartitionData", array(struct("PartitionProduceData", [
            f("Index", INT32, "0+"),
            f("Records", RECORDS, "0+", nullable="0+"),
        ])), "0+"),
    ])), "0+"),
])

RESPONSE = struct("ProduceResponse", [
    f("Responses", array(struct("TopicProduceResponse", [
        f("Name", STRING, "0-12", ignorable=True),
        f("TopicId", UUID, "13+", ignorable=True),
        f("PartitionResponses", array(struct("PartitionProduceResponse", [
            f("Index", INT32, "0+"),
            f("ErrorCode", INT16, "0+"),
            f("BaseOffset", INT64, "0+"),
            f("LogAppendTimeMs", INT64, "2+", default=-1, ignorable=True),
            f("LogStartOffset", INT64, "5+", default=-1, ignorable=True),
            f("RecordErrors", array(struct("BatchIndexAndErrorMessage", [
                f("BatchIndex", INT32, "8+"),
                f("BatchIndexErrorMessage", STRING, "8+", nullable="8+", default=None),
            ])), "8+", ignorable=True),
            f("ErrorMessage", STRING, "8+", nullable="8+", default=None, ignorable=True),
            f("CurrentLeader", struct("LeaderIdAndEpoch", [
                f("LeaderId", INT32, "10+", default=-1),
                f("LeaderEpoch", INT32, "10+", default=-1),
            ]), "10+", tag=0, tagged="10+"),
        ])), "0+"),
    ])), "0+"),
    f("ThrottleTimeMs", INT32, "1+", default=0, ignorable=True),
    f("NodeEndpoints", array(struct("NodeEndpoint", [
        f("NodeId", INT32, "10+"),
        f("Host", STRING, "10+"),
        f("Port", INT32, "10+"),
        f("Rack", STRING, "10+", nullable="10+", default=None),
    ])), "10+", tag=0, tagged="10+"),
])

API = Api(
    key=0,
    name="Produce",
    versions=Versions.parse("3-13"),
    flexible=Versions.parse("9+"),
    request=REQUEST,
    response=RESPONSE,
)
