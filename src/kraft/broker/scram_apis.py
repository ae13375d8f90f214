"""The broker's side of KIP-554: DescribeUserScramCredentials answered from the image, and when a
forwarded AlterUserScramCredentials has become visible in it.

Pure functions over a ``MetadataImage``; ``kraft.broker.client_apis`` calls them. A describe answer
holds mechanisms and iteration counts only, never a salt or key (as Kafka's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kraft.metadata.image import MetadataImage
from kraft.metadata.scram import ScramMechanism
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import describe_user_scram_credentials

if TYPE_CHECKING:
    from kraft.protocol.messages.alter_user_scram_credentials import (
        AlterUserScramCredentialsRequest,
        AlterUserScramCredentialsResponse,
    )
    from kraft.protocol.messages.describe_user_scram_credentials import (
        DescribeUserScramCredentialsRequest,
        DescribeUserScramCredentialsResponse,
    )


def handle_describe_user_scram_credentials(
    image: MetadataImage, body: object, version: int
) -> DescribeUserScramCredentialsResponse:
    """Kafka's ``KRaftMetadataCache.describeScramCredentials`` (``ScramImage.describe``)."""
    request: DescribeUserScramCredentialsRequest = body  # type: ignore[assignment]
    cls: Any = describe_user_scram_credentials.RESPONSE.cls
    users = None if request.users is None else [u.name for u in request.users]
    results = [
        cls.DescribeUserScramCredentialsResult(
            user=row.user,
            error_code=row.error_code,
            error_message=row.error_message,
            credential_infos=[
                cls.DescribeUserScramCredentialsResult.CredentialInfo(mechanism=int(m), iterations=i)
                for m, i in row.credentials
            ],
        )
        for row in image.scram.describe(users)
    ]
    response: DescribeUserScramCredentialsResponse = cls(
        throttle_time_ms=0, error_code=0, error_message=None, results=results
    )
    return response


def alter_visible(
    request: AlterUserScramCredentialsRequest, response: AlterUserScramCredentialsResponse
) -> Callable[[MetadataImage], bool] | None:
    """A predicate true once an image shows every change the controller accepted (deleted
    credentials gone, upserted ones present with the request's salt), or None: nothing to wait for."""
    accepted = {r.user for r in response.results if r.error_code == ErrorCode.NONE}
    gone = [(ScramMechanism.from_type(d.mechanism), d.name) for d in request.deletions if d.name in accepted]
    present = [
        (ScramMechanism.from_type(u.mechanism), u.name, bytes(u.salt))
        for u in request.upsertions
        if u.name in accepted
    ]
    if not gone and not present:
        return None

    def check(image: MetadataImage) -> bool:
        if any(image.scram.get(m, user) is not None for m, user in gone):
            return False
        for m, user, salt in present:
            credential = image.scram.get(m, user)
            if credential is None or credential.salt != salt:
                return False
        return True

    return check
