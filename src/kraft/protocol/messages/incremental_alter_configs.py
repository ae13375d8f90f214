"""IncrementalAlterConfigs (API key 44), versions 0-1."""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT8, INT16, INT32, STRING, Versions, array, f, struct

REQUEST = struct("IncrementalAlterConfigsRequest", [
    f("Resources", array(struct("AlterConfigsResource", [
        f("ResourceType", INT8, "0+"),
        f("ResourceName", STRING, "0+"),
        f("Configs", array(struct("AlterableConfig", [
            f("Name", STRING, "0+"),
            f("ConfigOperation", INT8, "0+"),
            f("Value", STRING, "0+", nullable="0+"),
        ])), "0+"),
    ])), "0+"),
    f("ValidateOnly", BOOL, "0+"),
])

RESPONSE = struct("IncrementalAlterConfigsResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("Responses", array(struct("AlterConfigsResourceResponse", [
        f("ErrorCode", INT16, "0+"),
        f("ErrorMessage", STRING, "0+", nullable="0+"),
        f("ResourceType", INT8, "0+"),
        f("ResourceName", STRING, "0+"),
    ])), "0+"),
])

API = Api(
    key=44,
    name="IncrementalAlterConfigs",
    versions=Versions.parse("0-1"),
    flexible=Versions.parse("1+"),
    request=REQUEST,
    response=RESPONSE,
)
