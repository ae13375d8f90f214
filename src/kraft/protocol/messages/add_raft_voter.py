"""AddRaftVoter (API key 80), versions 0."""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT16, INT32, STRING, UINT16, UUID, Versions, array, f, struct

REQUEST = struct("AddRaftVoterRequest", [
    f("ClusterId", STRING, "0+", nullable="0+"),
    f("TimeoutMs", INT32, "0+"),
    f("VoterId", INT32, "0+"),
    f("VoterDirectoryId", UUID, "0+"),
    f("Listeners", array(struct("Listener", [
        f("Name", STRING, "0+"),
        f("Host", STRING, "0+"),
        f("Port", UINT16, "0+"),
    ])), "0+"),
])

RESPONSE = struct("AddRaftVoterResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("ErrorMessage", STRING, "0+", nullable="0+", ignorable=True),
])

API = Api(
    key=80,
    name="AddRaftVoter",
    versions=Versions.parse("0"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
