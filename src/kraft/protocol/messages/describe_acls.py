"""DescribeAcls (API key 29), versions 1-3 (Kafka 4.0 removed v0, KIP-896)."""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT8, INT16, INT32, STRING, Versions, array, f, struct

REQUEST = struct("DescribeAclsRequest", [
    f("ResourceTypeFilter", INT8, "0+"),
    f("ResourceNameFilter", STRING, "0+", nullable="0+", default=None),
    f("PatternTypeFilter", INT8, "1+", default=3),
    f("PrincipalFilter", STRING, "0+", nullable="0+", default=None),
    f("HostFilter", STRING, "0+", nullable="0+", default=None),
    f("Operation", INT8, "0+"),
    f("PermissionType", INT8, "0+"),
])

RESPONSE = struct("DescribeAclsResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    f("Resources", array(struct("DescribeAclsResource", [
        f("ResourceType", INT8, "0+"),
        f("ResourceName", STRING, "0+"),
        f("PatternType", INT8, "1+", default=3),
        f("Acls", array(struct("AclDescription", [
            f("Principal", STRING, "0+"),
            f("Host", STRING, "0+"),
            f("Operation", INT8, "0+"),
            f("PermissionType", INT8, "0+"),
        ])), "0+"),
    ])), "0+"),
])

API = Api(
    key=29,
    name="DescribeAcls",
    versions=Versions.parse("1-3"),
    flexible=Versions.parse("2+"),
    request=REQUEST,
    response=RESPONSE,
)
