"""DescribeConfigs (API key 32), versions 0-4."""

from kraft.protocol.api import Api
from kraft.protocol.schema import BOOL, INT8, INT16, INT32, STRING, Versions, array, f, struct

REQUEST = struct("DescribeConfigsRequest", [
    f("Resources", array(struct("DescribeConfigsResource", [
        f("ResourceType", INT8, "0+"),
        f("ResourceName", STRING, "0+"),
        f("ConfigurationKeys", array(STRING), "0+", nullable="0+"),
    ])), "0+"),
    f("IncludeSynonyms", BOOL, "1+", default=False),
    f("IncludeDocumentation", BOOL, "3+", default=False),
])

RESPONSE = struct("DescribeConfigsResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("Results", array(struct("DescribeConfigsResult", [
        f("ErrorCode", INT16, "0+"),
        f("ErrorMessage", STRING, "0+", nullable="0+"),
        f("ResourceType", INT8, "0+"),
        f("ResourceName", STRING, "0+"),
        f("Configs", array(struct("DescribeConfigsResourceResult", [
            f("Name", STRING, "0+"),
            f("Value", STRING, "0+", nullable="0+"),
            f("ReadOnly", BOOL, "0+"),
            f("IsDefault", BOOL, "0"),
            f("ConfigSource", INT8, "1+", default=-1, ignorable=True),
            f("IsSensitive", BOOL, "0+"),
            f("Synonyms", array(struct("DescribeConfigsSynonym", [
                f("Name", STRING, "1+"),
                f("Value", STRING, "1+", nullable="0+"),
                f("Source", INT8, "1+"),
            ])), "1+", ignorable=True),
            f("ConfigType", INT8, "3+", default=0, ignorable=True),
            f("Documentation", STRING, "3+", nullable="0+", ignorable=True),
        ])), "0+"),
    ])), "0+"),
])

API = Api(
    key=32,
    name="DescribeConfigs",
    versions=Versions.parse("0-4"),
    flexible=Versions.parse("4+"),
    request=REQUEST,
    response=RESPONSE,
)
