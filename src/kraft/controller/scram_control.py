"""AlterUserScramCredentials on the active controller (Kafka's ``ScramControlManager``, KIP-554).

Pure: validates a request against the latest image and returns the records and the response; it
mutates nothing (replay of the records into the image is ``kraft.metadata.image``'s job).

Rules, per user, as Kafka's ``alterCredentials``:

* A user named more than once in one request (in deletions, upsertions or both, whatever the
  mechanisms) gets DUPLICATE_RESOURCE and nothing is written for it; a user already refused for
  another reason is not reported twice.
* metadata.version below 3.5-IV2: UNSUPPORTED_VERSION (the log cannot hold SCRAM records yet).
* Empty name: UNACCEPTABLE_CREDENTIAL; unknown mechanism: UNSUPPORTED_SASL_MECHANISM.
* Deletion of a credential the image does not hold: RESOURCE_NOT_FOUND.
* Upsertion with iterations outside 4096..16384: UNACCEPTABLE_CREDENTIAL ("Too few/many iterations").
* Beyond Kafka: an upsertion whose salt is empty, or whose salted password is not the hash's size
  (what PBKDF2 gives every real client), is UNACCEPTABLE_CREDENTIAL: such a credential could never
  be used to log in, and storing it would only hide a client bug.

An accepted upsertion becomes a UserScramCredentialRecord carrying the salt, the stored key and
the server key derived from the salted password; the salted password itself is never written.
Results list the accepted deletions, then the accepted upsertions, then the refusals, each in
request order (Kafka's come from hash maps, in no fixed order).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from kraft.controller.result import ControllerResult, result
from kraft.metadata.image import MetadataImage
from kraft.metadata.records import ApiMessageAndVersion, MetadataRecordType, MetadataVersion, make_record
from kraft.metadata.scram import MAX_ITERATIONS, MIN_ITERATIONS, ScramMechanism
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import alter_user_scram_credentials
from kraft.security.scram import credential_from_salted_password

if TYPE_CHECKING:
    from kraft.protocol.messages.alter_user_scram_credentials import (
        AlterUserScramCredentialsRequest,
        AlterUserScramCredentialsResponse,
    )

_Error = tuple[ErrorCode, str]
DUPLICATE_MESSAGE = "A user credential cannot be altered twice in the same request"


def _validate_name_and_mechanism(name: str, mechanism: ScramMechanism) -> _Error | None:
    if not name:
        return (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
    if mechanism is ScramMechanism.UNKNOWN:
        return (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
    return None


def _validate_upsertion(u: Any) -> _Error | None:
    mechanism = ScramMechanism.from_type(u.mechanism)
    error = _validate_name_and_mechanism(u.name, mechanism)
    if error is not None:
        return error
    if u.iterations < MIN_ITERATIONS:
        return (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
    if u.iterations > MAX_ITERATIONS:
        return (ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
    if not u.salt:
        return (ErrorCode.UNACCEPTABLE_CREDENTIAL, "The salt must not be empty")
    size = hashlib.new(mechanism.hash_name).digest_size
    if len(u.salted_password) != size:
        return (
            ErrorCode.UNACCEPTABLE_CREDENTIAL,
            f"The salted password must be {size} bytes for {mechanism.mechanism_name}",
        )
    return None


def _validate_deletion(image: MetadataImage, d: Any) -> _Error | None:
    mechanism = ScramMechanism.from_type(d.mechanism)
    error = _validate_name_and_mechanism(d.name, mechanism)
    if error is not None:
        return error
    if image.scram.get(mechanism, d.name) is None:
        return (ErrorCode.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist")
    return None


def alter_credentials(
    image: MetadataImage, request: AlterUserScramCredentialsRequest, version: int
) -> ControllerResult[AlterUserScramCredentialsResponse]:
    """Records and response for one AlterUserScramCredentials request (module docstring)."""
    supported = image.metadata_version >= MetadataVersion.IBP_3_5_IV2
    deletions: dict[str, Any] = {}
    upsertions: dict[str, Any] = {}
    errors: dict[str, _Error] = {}

    def admit(name: str, item: Any, into: dict[str, Any], check: _Error | None) -> None:
        if name in errors:
            return
        if deletions.pop(name, None) is not None or upsertions.pop(name, None) is not None:
            errors[name] = (ErrorCode.DUPLICATE_RESOURCE, DUPLICATE_MESSAGE)
        elif not supported:
            errors[name] = (
                ErrorCode.UNSUPPORTED_VERSION,
                "The current metadata.version does not support SCRAM",
            )
        elif check is not None:
            errors[name] = check
        else:
            into[name] = item

    for d in request.deletions:
        admit(d.name, d, deletions, _validate_deletion(image, d) if supported else None)
    for u in request.upsertions:
        admit(u.name, u, upsertions, _validate_upsertion(u) if supported else None)

    cls: Any = alter_user_scram_credentials.RESPONSE.cls
    records: list[ApiMessageAndVersion] = []
    rows: list[Any] = []
    for name, d in deletions.items():
        records.append(
            make_record(MetadataRecordType.REMOVE_USER_SCRAM_CREDENTIAL, 0, name=name, mechanism=d.mechanism)
        )
        rows.append(cls.AlterUserScramCredentialsResult(user=name, error_code=0, error_message=None))
    for name, u in upsertions.items():
        mechanism = ScramMechanism.from_type(u.mechanism)
        credential = credential_from_salted_password(
            mechanism, bytes(u.salt), bytes(u.salted_password), u.iterations
        )
        records.append(
            make_record(
                MetadataRecordType.USER_SCRAM_CREDENTIAL,
                0,
                name=name,
                mechanism=int(mechanism),
                salt=credential.salt,
                stored_key=credential.stored_key,
                server_key=credential.server_key,
                iterations=credential.iterations,
            )
        )
        rows.append(cls.AlterUserScramCredentialsResult(user=name, error_code=0, error_message=None))
    for name, (code, message) in errors.items():
        rows.append(
            cls.AlterUserScramCredentialsResult(user=name, error_code=int(code), error_message=message)
        )
    return result(records, cls(throttle_time_ms=0, results=rows))
