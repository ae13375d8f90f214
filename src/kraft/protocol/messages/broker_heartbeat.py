"""BrokerHeartbeat (API key 63), versions 0-1.

``ReplicaLogInfo`` (tag 10000) is kraft's, not Kafka's: a broker lists there, for each partition it
hosts that waits leaderless with nobody eligible (``kraft.metadata.replica_log_info``), the partition
epoch it saw and its log's last written leader epoch and log end offset, which the active
controller's unclean recovery (``kraft.controller.unclean_recovery``) elects from. It takes the place
of KIP-966's GetReplicaLogInfo RPC (Kafka merged it in KAFKA-18681, then reverted it): in KRaft the
controller never connects to brokers, the brokers heartbeat to it. A tag far above Kafka's (it uses
0 here) stays clear of Kafka's future fields; a Kafka controller skips an unknown tag (KIP-482), and
a heartbeat without it has exactly Kafka's bytes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT16, INT32, INT64, UUID, Versions, array, f, struct

# kraft's tag for ReplicaLogInfo: far from Kafka's own tags, which count up from 0.
_REPLICA_LOG_INFO_TAG = 10_000

REQUEST = struct("BrokerHeartbeatRequest", [
    f("BrokerId", INT32, "0+"),
    f("BrokerEpoch", INT64, "0+", default=-1),
    f("CurrentMetadataOffset", INT64, "0+"),
    f("WantFence", BOOL, "0+"),
    f("WantShutDown", BOOL, "0+"),
    f("OfflineLogDirs", array(UUID), "1+", tag=0, tagged="1+"),
    f("ReplicaLogInfo", array(struct("TopicLogInfo", [
        f("TopicId", UUID, "0+"),
        f("Partitions", array(struct("PartitionLogInfo", [
            f("PartitionIndex", INT32, "0+"),
            f("PartitionEpoch", INT32, "0+"),
            f("LastWrittenLeaderEpoch", INT32, "0+", default=-1),
            f("LogEndOffset", INT64, "0+", default=-1),
        ])), "0+"),
    ])), "0+", tag=_REPLICA_LOG_INFO_TAG, tagged="0+", ignorable=True),
])

RESPONSE = struct("BrokerHeartbeatResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("IsCaughtUp", BOOL, "0+", default=False),
    f("IsFenced", BOOL, "0+", default=True),
    f("ShouldShutDown", BOOL, "0+"),
])

API = Api(
    key=63,
    name="BrokerHeartbeat",
    versions=Versions.parse("0-1"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
