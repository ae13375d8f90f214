"""DescribeCluster (API key 60), versions 0-2."""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT8, INT16, INT32, STRING, Versions, array, f, struct

REQUEST = struct("DescribeClusterRequest", [
    f("IncludeClusterAuthorizedOperations", BOOL, "0+"),
    f("EndpointType", INT8, "1+", default=1),
    f("IncludeFencedBrokers", BOOL, "2+"),
])

RESPONSE = struct("DescribeClusterResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    f("EndpointType", INT8, "1+", default=1),
    f("ClusterId", STRING, "0+"),
    f("ControllerId", INT32, "0+", default=-1),
    f("Brokers", array(struct("DescribeClusterBroker", [
        f("BrokerId", INT32, "0+"),
        f("Host", STRING, "0+"),
        f("Port", INT32, "0+"),
        f("Rack", STRING, "0+", nullable="0+", default=None),
        f("IsFenced", BOOL, "2+"),
    ])), "0+"),
    f("ClusterAuthorizedOperations", INT32, "0+", default=-2147483648),
])

API = Api(
    key=60,
    name="DescribeCluster",
    versions=Versions.parse("0-2"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
