"""The ACL APIs' pure parts, shared by the controller and the brokers (Kafka's ``AclApis`` and
``AclControlManager`` halves that need no state).

What it owns: converting between wire rows, image entries (``kraft.metadata.acls.StandardAcl``) and
``AclBinding``s; the DescribeAcls answer over an image's ACLs (grouped by resource pattern, as
Kafka's ``DescribeAclsResponse.aclsResources``); the whole-request answers of the three APIs
(``SECURITY_DISABLED`` without an authorizer, authorisation failures); and an ``Authorizer`` cache
keyed by the image's ACL map, so a broker rebuilds its index only when the ACLs change.

What it must not do: write records (the controller's ``AclControl`` does), keep state beyond the
cache, or do I/O.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from kraft.metadata.acls import StandardAcl
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import create_acls, delete_acls, describe_acls
from kraft.security.acls import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    PatternType,
    ResourcePattern,
    operation_of,
    pattern_type_of,
    permission_type_of,
    resource_type_of,
)
from kraft.security.authorizer import Authorizer, AuthorizerConfig

NO_AUTHORIZER_MESSAGE = "No Authorizer is configured."  # Kafka's SECURITY_DISABLED answer


def binding_of(acl: StandardAcl) -> AclBinding:
    """The ``AclBinding`` an image entry stands for."""
    return AclBinding(
        ResourcePattern(
            resource_type_of(acl.resource_type), acl.resource_name, pattern_type_of(acl.pattern_type)
        ),
        AccessControlEntry(
            acl.principal, acl.host, operation_of(acl.operation), permission_type_of(acl.permission_type)
        ),
    )


def standard_acl_of(binding: AclBinding) -> StandardAcl:
    """The image entry (and record fields) of a validated binding."""
    p, e = binding.pattern, binding.entry
    return StandardAcl(
        int(p.resource_type),
        p.name,
        int(p.pattern_type),
        e.principal,
        e.host,
        int(e.operation),
        int(e.permission_type),
    )


def creation_binding(row: Any, version: int) -> AclBinding:
    """The binding a CreateAcls ``AclCreation`` row asks for (v0 had no pattern type: LITERAL)."""
    pattern_type = pattern_type_of(row.resource_pattern_type) if version >= 1 else PatternType.LITERAL
    return AclBinding(
        ResourcePattern(resource_type_of(row.resource_type), row.resource_name, pattern_type),
        AccessControlEntry(
            row.principal, row.host, operation_of(row.operation), permission_type_of(row.permission_type)
        ),
    )


def filter_of(row: Any) -> AclBindingFilter:
    """The ``AclBindingFilter`` of a DescribeAcls request or a DeleteAcls ``DeleteAclsFilter`` row."""
    return AclBindingFilter(
        resource_type=resource_type_of(row.resource_type_filter),
        name=row.resource_name_filter,
        pattern_type=pattern_type_of(row.pattern_type_filter),
        principal=row.principal_filter,
        host=row.host_filter,
        operation=operation_of(row.operation),
        permission_type=permission_type_of(row.permission_type),
    )


def matching(
    acls: Mapping[uuid.UUID, StandardAcl], acl_filter: AclBindingFilter
) -> list[tuple[uuid.UUID, AclBinding]]:
    """The (id, binding) pairs ``acl_filter`` selects, sorted by binding then id (stable answers)."""
    found = [(acl_id, binding_of(acl)) for acl_id, acl in acls.items()]
    return sorted(((i, b) for i, b in found if acl_filter.matches(b)), key=lambda ib: (ib[1], ib[0]))


# -- DescribeAcls -------------------------------------------------------------------------------------


def describe_acls_response(acls: Mapping[uuid.UUID, StandardAcl], body: Any, version: int) -> Any:
    """DescribeAcls over ``acls`` (the caller has checked DESCRIBE on the cluster)."""
    cls: Any = describe_acls.RESPONSE.cls
    acl_filter = filter_of(body)
    if acl_filter.is_unknown:
        # Kafka's DescribeAclsRequest.validate refuses a filter with UNKNOWN codes.
        return describe_acls_error(ErrorCode.INVALID_REQUEST, "DescribeAclsRequest contains UNKNOWN elements")
    grouped: dict[ResourcePattern, list[AccessControlEntry]] = {}
    for _, binding in matching(acls, acl_filter):
        grouped.setdefault(binding.pattern, []).append(binding.entry)
    resources = [
        cls.DescribeAclsResource(
            resource_type=int(pattern.resource_type),
            resource_name=pattern.name,
            pattern_type=int(pattern.pattern_type),
            acls=[
                cls.DescribeAclsResource.AclDescription(
                    principal=e.principal,
                    host=e.host,
                    operation=int(e.operation),
                    permission_type=int(e.permission_type),
                )
                for e in entries
            ],
        )
        for pattern, entries in grouped.items()
    ]
    return cls(throttle_time_ms=0, error_code=0, error_message=None, resources=resources)


def describe_acls_error(code: ErrorCode, message: str | None) -> Any:
    return describe_acls.RESPONSE.cls(
        throttle_time_ms=0, error_code=int(code), error_message=message, resources=[]
    )


# -- whole-request errors -----------------------------------------------------------------------------


def create_acls_error(body: Any, code: ErrorCode, message: str | None) -> Any:
    """Every creation of the request answered ``code`` (no authorizer, not authorised)."""
    cls: Any = create_acls.RESPONSE.cls
    return cls(
        throttle_time_ms=0,
        results=[cls.AclCreationResult(error_code=int(code), error_message=message) for _ in body.creations],
    )


def delete_acls_error(body: Any, code: ErrorCode, message: str | None) -> Any:
    """Every filter of the request answered ``code``."""
    cls: Any = delete_acls.RESPONSE.cls
    return cls(
        throttle_time_ms=0,
        filter_results=[
            cls.DeleteAclsFilterResult(error_code=int(code), error_message=message, matching_acls=[])
            for _ in body.filters
        ],
    )


def acl_api_error(key: int, body: Any, code: ErrorCode, message: str | None) -> Any:
    """The whole-request error answer of CreateAcls, DescribeAcls or DeleteAcls."""
    if key == create_acls.API.key:
        return create_acls_error(body, code, message)
    if key == delete_acls.API.key:
        return delete_acls_error(body, code, message)
    if key == describe_acls.API.key:
        return describe_acls_error(code, message)
    raise ValueError(f"API {key} is not an ACL API")


ACL_API_KEYS = frozenset({create_acls.API.key, describe_acls.API.key, delete_acls.API.key})


def deleted_row(cls: Any, binding: AclBinding) -> Any:
    """One ``DeleteAclsMatchingAcl`` of a DeleteAcls answer."""
    p, e = binding.pattern, binding.entry
    return cls.DeleteAclsFilterResult.DeleteAclsMatchingAcl(
        error_code=0,
        error_message=None,
        resource_type=int(p.resource_type),
        resource_name=p.name,
        pattern_type=int(p.pattern_type),
        principal=e.principal,
        host=e.host,
        operation=int(e.operation),
        permission_type=int(e.permission_type),
    )


# -- the authorizer over an image -----------------------------------------------------------------------


class AuthorizerCache:
    """The ``Authorizer`` for the latest ACL map seen: rebuilt only when the map object changes (an
    image shares its ACL map with the next one unless a delta touched ACLs)."""

    def __init__(self, config: AuthorizerConfig) -> None:
        self.config = config
        self._acls: Mapping[uuid.UUID, StandardAcl] | None = None
        self._authorizer = Authorizer.build(config, ())

    def get(self, acls: Mapping[uuid.UUID, StandardAcl]) -> Authorizer:
        if acls is not self._acls:
            self._acls = acls
            self._authorizer = Authorizer.build(self.config, (binding_of(a) for a in acls.values()))
        return self._authorizer


def bindings(acls: Iterable[StandardAcl]) -> list[AclBinding]:
    return [binding_of(a) for a in acls]
