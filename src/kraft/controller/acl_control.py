"""CreateAcls and DeleteAcls on the controller (Kafka's ``AclControlManager``). Pure: records and
answers out, nothing mutated; the ACLs change when the records are replayed into the image.

Rules, as Kafka's:

* CreateAcls: each binding is validated (``kraft.security.acls.new_acl_problem``: INVALID_REQUEST
  with Kafka's message); a valid one gets an ``AccessControlEntryRecord`` with a fresh id from the
  controller's seeded generator, unless the same ACL already exists or was created earlier in the
  same request (then it succeeds without a record: creating an ACL is idempotent).
* DeleteAcls: a filter with an UNKNOWN code is refused (INVALID_REQUEST); otherwise every ACL it
  matches gets one ``RemoveAccessControlEntryRecord`` (once, however many filters match it) and is
  listed under each matching filter. At most ``MAX_RECORDS_PER_USER_OP`` records per request.

Both answer only after their records commit (the quorum controller's write path), so a client that
sees success will find the change in the next image of any node.
"""

from __future__ import annotations

import random
import uuid
from typing import Any, Final

from kraft.common.uuids import random_uuid
from kraft.controller.result import ControllerResult, result
from kraft.metadata.image import MetadataImage
from kraft.metadata.records import ApiMessageAndVersion, MetadataRecordType, make_record
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import create_acls, delete_acls
from kraft.security.acl_apis import creation_binding, deleted_row, filter_of, matching, standard_acl_of
from kraft.security.acls import new_acl_problem

# Kafka's QuorumController.MAX_RECORDS_PER_USER_OP: one request may not write more.
MAX_RECORDS_PER_USER_OP: Final = 10_000


class AclControl:
    """ACL writes over the image; ``rng`` (the controller's, seeded) picks ACL ids."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def create_acls(self, image: MetadataImage, body: Any, version: int) -> ControllerResult[Any]:
        cls: Any = create_acls.RESPONSE.cls
        existing = set(image.acls.values())
        records: list[ApiMessageAndVersion] = []
        results: list[Any] = []
        for row in body.creations:
            binding = creation_binding(row, version)
            problem = new_acl_problem(binding)
            if problem is not None:
                results.append(
                    cls.AclCreationResult(error_code=int(ErrorCode.INVALID_REQUEST), error_message=problem)
                )
                continue
            acl = standard_acl_of(binding)
            if acl not in existing:
                existing.add(acl)
                records.append(
                    make_record(
                        MetadataRecordType.ACCESS_CONTROL_ENTRY,
                        0,
                        id=self._new_id(image),
                        resource_type=acl.resource_type,
                        resource_name=acl.resource_name,
                        pattern_type=acl.pattern_type,
                        principal=acl.principal,
                        host=acl.host,
                        operation=acl.operation,
                        permission_type=acl.permission_type,
                    )
                )
            results.append(cls.AclCreationResult(error_code=0, error_message=None))
        if len(records) > MAX_RECORDS_PER_USER_OP:
            message = f"Cannot create more than {MAX_RECORDS_PER_USER_OP} ACLs in a single request."
            code = int(ErrorCode.POLICY_VIOLATION)
            return result(
                [],
                cls(
                    throttle_time_ms=0,
                    results=[
                        cls.AclCreationResult(error_code=code, error_message=message) for _ in body.creations
                    ],
                ),
            )
        return result(records, cls(throttle_time_ms=0, results=results))

    def delete_acls(self, image: MetadataImage, body: Any, version: int) -> ControllerResult[Any]:
        cls: Any = delete_acls.RESPONSE.cls
        removed: dict[uuid.UUID, None] = {}
        filter_results: list[Any] = []
        for row in body.filters:
            acl_filter = filter_of(row)
            if acl_filter.is_unknown:
                what = (
                    "patternFilter"
                    if acl_filter.resource_type == 0 or acl_filter.pattern_type == 0
                    else "entryFilter"
                )
                filter_results.append(
                    cls.DeleteAclsFilterResult(
                        error_code=int(ErrorCode.INVALID_REQUEST),
                        error_message=f"Unknown {what}.",
                        matching_acls=[],
                    )
                )
                continue
            found = matching(image.acls, acl_filter)
            for acl_id, _ in found:
                removed[acl_id] = None
            filter_results.append(
                cls.DeleteAclsFilterResult(
                    error_code=0, error_message=None, matching_acls=[deleted_row(cls, b) for _, b in found]
                )
            )
        if len(removed) > MAX_RECORDS_PER_USER_OP:
            message = f"Cannot remove more than {MAX_RECORDS_PER_USER_OP} ACLs in a single request."
            code = int(ErrorCode.POLICY_VIOLATION)
            return result(
                [],
                cls(
                    throttle_time_ms=0,
                    filter_results=[
                        cls.DeleteAclsFilterResult(error_code=code, error_message=message, matching_acls=[])
                        for _ in body.filters
                    ],
                ),
            )
        records = [make_record(MetadataRecordType.REMOVE_ACCESS_CONTROL_ENTRY, 0, id=i) for i in removed]
        return result(records, cls(throttle_time_ms=0, filter_results=filter_results))

    def _new_id(self, image: MetadataImage) -> uuid.UUID:
        while True:
            acl_id = random_uuid(self.rng)
            if acl_id not in image.acls:
                return acl_id
