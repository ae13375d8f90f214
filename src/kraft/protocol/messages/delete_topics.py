"""DeleteTopics (API key 20), versions 0-6."""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT16, INT32, STRING, UUID, Versions, array, f, struct

REQUEST = struct("DeleteTopicsRequest", [
    f("Topics", array(struct("DeleteTopicState", [
        f("Name", STRING, "6+", nullable="6+", default=None),
        f("TopicId", UUID, "6+"),
    ])), "6+"),
    f("TopicNames", array(STRING), "0-5", ignorable=True),
    f("TimeoutMs", INT32, "0+"),
])

RESPONSE = struct("DeleteTopicsResponse", [
    f("ThrottleTimeMs", INT32, "1+", ignorable=True),
    f("Responses", array(struct("DeletableTopicResult", [
        f("Name", STRING, "0+", nullable="6+"),
        f("TopicId", UUID, "6+", ignorable=True),
        f("ErrorCode", INT16, "0+"),
        f("ErrorMessage", STRING, "5+", nullable="5+", default=None, ignorable=True),
    ])), "0+"),
])

API = Api(
    key=20,
    name="DeleteTopics",
    versions=Versions.parse("0-6"),
    flexible=Versions.parse("4+"),
    request=REQUEST,
    response=RESPONSE,
)
