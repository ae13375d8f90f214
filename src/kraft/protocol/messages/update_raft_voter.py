"""UpdateRaftVoter (API key 82), versions 0."""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT16, INT32, STRING, UINT16, UUID, Versions, array, f, struct

REQUEST = struct("UpdateRaftVoterRequest", [
    f("ClusterId", STRING, "0+", nullable="0+"),
    f("CurrentLeaderEpoch", INT32, "0+"),
    f("VoterId", INT32, "0+"),
    f("VoterDirectoryId", UUID, "0+"),
    f("Listeners", array(struct("Listener", [
        f("Name", STRING, "0+"),
        f("Host", STRING, "0+"),
        f("Port", UINT16, "0+"),
    ])), "0+"),
    f("KRaftVersionFeature", struct("KRaftVersionFeature", [
        f("MinSupportedVersion", INT16, "0+"),
        f("MaxSupportedVersion", INT16, "0+"),
    ]), "0+"),
])

RESPONSE = struct("UpdateRaftVoterResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("CurrentLeader", struct("CurrentLeader", [
        f("LeaderId", INT32, "0+", default=-1),
        f("LeaderEpoch", INT32, "0+", default=-1),
        f("Host", STRING, "0+"),
        f("Port", INT32, "0+"),
    ]), "0+", tag=0, tagged="0+"),
])

API = Api(
    key=82,
    name="UpdateRaftVoter",
    versions=Versions.parse("0"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
