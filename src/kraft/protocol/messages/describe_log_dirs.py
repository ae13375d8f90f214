"""DescribeLogDirs (API key 35), versions 1-5 (Kafka 4.x's schema; v0 went with KIP-896).

A broker's answer about its own log directories: which partitions each holds and their sizes, and
(v4+) the volume's total and usable bytes. kafka-python's ``describe_log_dirs`` and
``kafka-log-dirs.sh`` send it to every broker. v5 adds ``IsCordoned`` (KIP-1066), always false here.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT16, INT32, INT64, STRING, Versions, array, f, struct

REQUEST = struct("DescribeLogDirsRequest", [
    # null: every topic and partition the broker holds.
    f("Topics", array(struct("DescribableLogDirTopic", [
        f("Topic", STRING, "0+"),
        f("Partitions", array(INT32), "0+"),
    ])), "0+", nullable="0+", default=None),
])

RESPONSE = struct("DescribeLogDirsResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "3+", ignorable=True),
    f("Results", array(struct("DescribeLogDirsResult", [
        f("ErrorCode", INT16, "0+"),
        f("LogDir", STRING, "0+"),
        f("Topics", array(struct("DescribeLogDirsTopic", [
            f("Name", STRING, "0+"),
            f("Partitions", array(struct("DescribeLogDirsPartition", [
                f("PartitionIndex", INT32, "0+"),
                f("PartitionSize", INT64, "0+"),
                f("OffsetLag", INT64, "0+"),
                f("IsFutureKey", BOOL, "0+"),
            ])), "0+"),
        ])), "0+"),
        f("TotalBytes", INT64, "4+", ignorable=True, default=-1),
        f("UsableBytes", INT64, "4+", ignorable=True, default=-1),
        f("IsCordoned", BOOL, "5+", ignorable=True, default=False),
    ])), "0+"),
])

API = Api(
    key=35,
    name="DescribeLogDirs",
    versions=Versions.parse("1-5"),
    flexible=Versions.parse("2+"),
    request=REQUEST,
    response=RESPONSE,
)
