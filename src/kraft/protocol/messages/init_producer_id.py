"""InitProducerId (API key 22), versions 0-6.

Field for field Kafka 4.x's ``InitProducerIdRequest.json``/``Response.json``. v2 is the first
flexible version; v3 adds the request's ``ProducerId``/``ProducerEpoch`` (a producer resuming after
INVALID_PRODUCER_EPOCH); v4 and v5 change only error codes (PRODUCER_FENCED; KIP-890's
TRANSACTION_ABORTABLE). v6 (KIP-939, two-phase commit) adds ``Enable2Pc``/``KeepPreparedTxn`` and the
response's ongoing-transaction producer id and epoch; Kafka marks it ``latestVersionUnstable``, so a
4.x broker does not advertise it: served 0-5, as Kafka 4.0 does. None of these fields is
ignorable: writing a v3+ producer id at v2, say, is refused rather than silently dropped.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Versions, f, struct

REQUEST = struct("InitProducerIdRequest", [
    # Nullable, but Kafka's declared default is "" (no "default": "null" in the JSON).
    f("TransactionalId", STRING, "0+", nullable="0+"),
    f("TransactionTimeoutMs", INT32, "0+"),
    f("ProducerId", INT64, "3+", default=-1),
    f("ProducerEpoch", INT16, "3+", default=-1),
    f("Enable2Pc", BOOL, "6+", default=False),
    f("KeepPreparedTxn", BOOL, "6+", default=False),
])

RESPONSE = struct("InitProducerIdResponse", [
    f("ThrottleTimeMs", INT32, "0+", ignorable=True),
    f("ErrorCode", INT16, "0+"),
    f("ProducerId", INT64, "0+", default=-1),
    f("ProducerEpoch", INT16, "0+"),
    f("OngoingTxnProducerId", INT64, "6+", default=-1),
    f("OngoingTxnProducerEpoch", INT16, "6+", default=-1),
])

# The versions this node accepts and advertises; the schema above describes all of 0-6.
SERVED_VERSIONS = Versions.parse("0-5")

API = Api(
    key=22,
    name="InitProducerId",
    versions=Versions.parse("0-6"),
    flexible=Versions.parse("2+"),
    request=REQUEST,
    response=RESPONSE,
    served_versions=SERVED_VERSIONS,
)
