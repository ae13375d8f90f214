"""Typed view of ``kraft.protocol.messages.describe_user_scram_credentials`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class DescribeUserScramCredentialsRequest(StructValue):
    class UserName(StructValue): name: str = ...
    users: list[UserName] | None = ...
class DescribeUserScramCredentialsResponse(StructValue):
    class DescribeUserScramCredentialsResult(StructValue):
        class CredentialInfo(StructValue): mechanism: int = ...; iterations: int = ...
        user: str = ...; error_code: int = ...; error_message: str | None = ...; credential_infos: list[CredentialInfo] = ...
    throttle_time_ms: int = ...; error_code: int = ...; error_message: str | None = ...; results: list[DescribeUserScramCredentialsResult] = ...

REQUEST: StructType[DescribeUserScramCredentialsRequest]
RESPONSE: StructType[DescribeUserScramCredentialsResponse]
API: Api
