"""DescribeUserScramCredentials (API key 50), version 0 (KIP-554).

As Kafka's ``DescribeUserScramCredentialsRequest.json``/``Response.json``: flexible from v0; a null
or empty ``Users`` asks for every user with a credential. A broker answers it from its image.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import INT8, INT16, INT32, STRING, Versions, array, f, struct

REQUEST = struct("DescribeUserScramCredentialsRequest", [
    f("Users", array(struct("UserName", [
        f("Name", STRING, "0+"),
    ])), "0+", nullable="0+"),
])

RESPONSE = struct("DescribeUserScramCredentialsResponse", [
    f("ThrottleTimeMs", INT32, "0+"),
    f("ErrorCode", INT16, "0+"),
    f("ErrorMessage", STRING, "0+", nullable="0+"),
    f("Results", array(struct("DescribeUserScramCredentialsResult", [
        f("User", STRING, "0+"),
        f("ErrorCode", INT16, "0+"),
        f("ErrorMessage", STRING, "0+", nullable="0+"),
        f("CredentialInfos", array(struct("CredentialInfo", [
            f("Mechanism", INT8, "0+"),
            f("Iterations", INT32, "0+"),
        ])), "0+"),
    ])), "0+"),
])

API = Api(
    key=50,
    name="DescribeUserScramCredentials",
    versions=Versions.parse("0"),
    flexible=Versions.parse("0+"),
    request=REQUEST,
    response=RESPONSE,
)
