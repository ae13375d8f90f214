"""CreateAcls (API key 30), versions 1-3 (Kafka 4.0 removed v0, KIP-896)."""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT8, INT16, INT32, STRING, Versions, array, f, struct

REQUEST = struct("CreateAclsRequest", [
    f("Creations", array(struct("AclCreation", [
        f("ResourceType", INT8, "0+"),
        f("ResourceName", STRING, "0+"),
        f("ResourcePatternType", INT8, "1+", default=3),
        f("Principal", STRING, "0+"),
        f("Host", STRING, "0+"),
        f("Operation", INT8, "0+"),
        f("PermissionType", INT8, "0+"),
    ])), "0+"),
])

RESPONSE = struct("CreateAclsResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("Results", array(struct("AclCreationResult", [
        f("ErrorCode", INT16, "0+"),
        f("ErrorMessage", STRING, "0+", nullable="0+", default=None),
    ])), "0+"),
])

API = Api(
    key=30,
    name="CreateAcls",
    versions=Versions.parse("1-3"),
    flexible=Versions.parse("2+"),
    request=REQUEST,
    response=RESPONSE,
)
