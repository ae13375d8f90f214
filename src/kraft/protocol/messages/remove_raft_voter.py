"""RemoveRaftVoter (API key 81), versions 0."""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT16, INT32, STRING, UUID, Versions, f, struct

REQUEST = struct("RemoveRaftVoterRequest", [
    f("ClusterId", STRING, "0+", nullable="0+"),
    f("VoterId", INT32, "0+"),
    f("VoterDirectoryId", UUID, "0+"),
])

RESPONSE = struct("RemoveRaftVoterResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("ErrorMessage", STRING, "0+", nullable="0+", ignorable=True),
])

API = Api(
    key=81,
    name="RemoveRaftVoter",
    versions=Versions.parse("0"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
