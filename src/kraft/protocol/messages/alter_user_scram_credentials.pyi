"""Typed view of ``kraft.protocol.messages.alter_user_scram_credentials`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""

from kraft.protocol.api import Api
from kraft.protocol.schema import StructType, StructValue

class AlterUserScramCredentialsRequest(StructValue):
    class ScramCredentialDeletion(StructValue): name: str = ...; mechanism: int = ...
    class ScramCredentialUpsertion(StructValue): name: str = ...; mechanism: int = ...; iterations: int = ...; salt: bytes = ...; salted_password: bytes = ...
    deletions: list[ScramCredentialDeletion] = ...; upsertions: list[ScramCredentialUpsertion] = ...
class AlterUserScramCredentialsResponse(StructValue):
    class AlterUserScramCredentialsResult(StructValue): user: str = ...; error_code: int = ...; error_message: str | None = ...
    throttle_time_ms: int = ...; results: list[AlterUserScramCredentialsResult] = ...

REQUEST: StructType[AlterUserScramCredentialsRequest]
RESPONSE: StructType[AlterUserScramCredentialsResponse]
API: Api
