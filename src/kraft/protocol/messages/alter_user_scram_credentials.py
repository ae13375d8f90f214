"""AlterUserScramCredentials (API key 51), version 0 (KIP-554).

As Kafka's ``AlterUserScramCredentialsRequest.json``/``Response.json``: flexible from v0. The
client sends the salted password (never the password); the controller keeps only the stored and
server keys derived from it. A broker forwards it to the active controller. An upsertion's repr
hides its salt and salted password.
"""

from typing import Any

from kraft.protocol.api import Api
from kraft.protocol.schema import BYTES, INT8, INT16, INT32, STRING, Versions, array, f, struct

REQUEST = struct("AlterUserScramCredentialsRequest", [
    f("Deletions", array(struct("ScramCredentialDeletion", [
        f("Name", STRING, "0+"),
        f("Mechanism", INT8, "0+"),
    ])), "0+"),
    f("Upsertions", array(struct("ScramCredentialUpsertion", [
        f("Name", STRING, "0+"),
        f("Mechanism", INT8, "0+"),
        f("Iterations", INT32, "0+"),
        f("Salt", BYTES, "0+"),
        f("SaltedPassword", BYTES, "0+"),
    ])), "0+"),
])



def _upsertion_repr(self: Any) -> str:
    # The salted password logs a client in as the user (it yields the ClientKey): never print it.
    return (
        f"ScramCredentialUpsertion(name={self.name!r}, mechanism={self.mechanism!r}, "
        f"iterations={self.iterations!r}, salt=[hidden], salted_password=[hidden])"
    )


REQUEST.cls.ScramCredentialUpsertion.__repr__ = _upsertion_repr  # type: ignore[attr-defined]

RESPONSE = struct("AlterUserScramCredentialsResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("Results", array(struct("AlterUserScramCredentialsResult", [
        f("User", STRING, "0+"),
        f("ErrorCode", INT16, "0+"),
        f("ErrorMessage", STRING, "0+", nullable="0+"),
    ])), "0+"),
])

API = Api(
    key=51,
    name="AlterUserScramCredentials",
    versions=Versions.parse("0"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
