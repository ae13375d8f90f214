"""ACLs as values: Kafka's resource types, operations, pattern and permission types, bindings and
binding filters (``org.apache.kafka.common.acl`` and ``common.resource``).

What it owns: the enums with Kafka's wire codes (the same numbers travel in CreateAcls,
DescribeAcls, DeleteAcls and in ``AccessControlEntryRecord``), ``AclBinding`` (a resource pattern and
an access control entry), ``AclBindingFilter`` with Kafka's matching rules, and the validation the
controller applies to a new ACL (``AclControlManager.validateNewAcl``). No decisions about requests
here: that is ``kraft.security.authorizer``.

Invariant: a binding that passed ``new_acl_problem`` has a concrete resource type, LITERAL or
PREFIXED pattern, a concrete operation, ALLOW or DENY, a non-empty name and a ``TYPE:NAME`` principal;
only such bindings reach the metadata log.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

WILDCARD = "*"  # ResourcePattern.WILDCARD_RESOURCE and AccessControlEntry's any-host
WILDCARD_PRINCIPAL = "User:*"  # KafkaPrincipal.WILDCARD_PRINCIPAL
CLUSTER_NAME = "kafka-cluster"  # the one CLUSTER resource (Resource.CLUSTER_NAME)


class ResourceType(enum.IntEnum):
    """Kafka's ``ResourceType`` codes (ANY only in filters)."""

    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class AclOperation(enum.IntEnum):
    """Kafka's ``AclOperation`` codes (ANY only in filters, ALL matches every operation)."""

    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14

    @property
    def display(self) -> str:
        """``Read``, ``ClusterAction``, ``IdempotentWrite`` (kafka-acls.sh's spelling)."""
        return "".join(part.capitalize() for part in self.name.split("_"))


class PatternType(enum.IntEnum):
    """Kafka's ``PatternType`` codes (ANY and MATCH only in filters)."""

    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclPermissionType(enum.IntEnum):
    """Kafka's ``AclPermissionType`` codes (ANY only in filters)."""

    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3

    @property
    def display(self) -> str:
        return self.name.capitalize()


def _enum_display(value: enum.IntEnum) -> str:
    return "".join(part.capitalize() for part in value.name.split("_"))


def resource_type_display(resource_type: ResourceType) -> str:
    """Kafka's ``SecurityUtils.resourceTypeName``: ``Topic``, ``Group``, ``TransactionalId``, ..."""
    return {
        ResourceType.TRANSACTIONAL_ID: "TransactionalId",
        ResourceType.DELEGATION_TOKEN: "DelegationToken",
    }.get(resource_type, _enum_display(resource_type))


@dataclass(frozen=True, slots=True, order=True)
class ResourcePattern:
    """A resource type, a name and how the name matches (``LITERAL``, ``PREFIXED``)."""

    resource_type: ResourceType
    name: str
    pattern_type: PatternType

    def __str__(self) -> str:
        return (
            f"ResourcePattern(resourceType={self.resource_type.name}, name={self.name}, "
            f"patternType={self.pattern_type.name})"
        )


@dataclass(frozen=True, slots=True, order=True)
class AccessControlEntry:
    """Who (``User:alice``), from where (a host, or ``*``), what operation, allowed or denied."""

    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def __str__(self) -> str:
        return (
            f"(principal={self.principal}, host={self.host}, operation={self.operation.name}, "
            f"permissionType={self.permission_type.name})"
        )


@dataclass(frozen=True, slots=True, order=True)
class AclBinding:
    """One ACL: a resource pattern and an access control entry (Kafka's ``AclBinding``)."""

    pattern: ResourcePattern
    entry: AccessControlEntry


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    """Kafka's ``AclBindingFilter``: ``None`` strings and ANY enums match anything.

    ``pattern_type`` MATCH (only in a filter) selects every pattern that would apply to the named
    resource: the literal name, the ``*`` wildcard and every prefix of it.
    """

    resource_type: ResourceType = ResourceType.ANY
    name: str | None = None
    pattern_type: PatternType = PatternType.ANY
    principal: str | None = None
    host: str | None = None
    operation: AclOperation = AclOperation.ANY
    permission_type: AclPermissionType = AclPermissionType.ANY

    def matches_pattern(self, pattern: ResourcePattern) -> bool:
        """Kafka's ``ResourcePatternFilter.matches``."""
        if self.resource_type != ResourceType.ANY and self.resource_type != pattern.resource_type:
            return False
        if (
            self.pattern_type not in (PatternType.ANY, PatternType.MATCH)
            and self.pattern_type != pattern.pattern_type
        ):
            return False
        if self.name is None:
            return True
        if self.pattern_type in (PatternType.ANY, pattern.pattern_type):
            return self.name == pattern.name
        # MATCH: every pattern that applies to a resource called ``name``.
        if pattern.pattern_type == PatternType.LITERAL:
            return self.name == pattern.name or pattern.name == WILDCARD
        if pattern.pattern_type == PatternType.PREFIXED:
            return self.name.startswith(pattern.name)
        return False

    def matches_entry(self, entry: AccessControlEntry) -> bool:
        """Kafka's ``AccessControlEntryFilter.matches``."""
        if self.principal is not None and self.principal != entry.principal:
            return False
        if self.host is not None and self.host != entry.host:
            return False
        if self.operation != AclOperation.ANY and self.operation != entry.operation:
            return False
        return self.permission_type in (AclPermissionType.ANY, entry.permission_type)

    def matches(self, binding: AclBinding) -> bool:
        return self.matches_pattern(binding.pattern) and self.matches_entry(binding.entry)

    @property
    def is_unknown(self) -> bool:
        """A filter with an UNKNOWN field (a code this version does not know) matches nothing safely:
        Kafka refuses it (``AclControlManager.validateFilter``)."""
        return (
            self.resource_type == ResourceType.UNKNOWN
            or self.pattern_type == PatternType.UNKNOWN
            or self.operation == AclOperation.UNKNOWN
            or self.permission_type == AclPermissionType.UNKNOWN
        )


ANY_FILTER = AclBindingFilter()


def new_acl_problem(binding: AclBinding) -> str | None:
    """Why the controller refuses to store ``binding`` (INVALID_REQUEST), or None.

    Kafka's ``AclControlManager.validateNewAcl``, message for message.
    """
    pattern, entry = binding.pattern, binding.entry
    if pattern.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return f"Invalid resourceType {pattern.resource_type.name}"
    if pattern.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return f"Invalid patternType {pattern.pattern_type.name}"
    if entry.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        return f"Invalid operation {entry.operation.name}"
    if entry.permission_type not in (AclPermissionType.DENY, AclPermissionType.ALLOW):
        return f"Invalid permissionType {entry.permission_type.name}"
    if not pattern.name:
        return "Resource name should not be empty"
    if ":" not in entry.principal:
        return (
            f"Could not parse principal from `{entry.principal}` "
            "(no colon is present separating the principal type from the principal name)"
        )
    return None


def enum_or_unknown(cls: type[enum.IntEnum], code: int) -> enum.IntEnum:
    """The member of ``cls`` for a wire code; UNKNOWN (0) for a code this version does not know."""
    try:
        return cls(code)
    except ValueError:
        return cls(0)


def resource_type_of(code: int) -> ResourceType:
    member = enum_or_unknown(ResourceType, code)
    assert isinstance(member, ResourceType)
    return member


def operation_of(code: int) -> AclOperation:
    member = enum_or_unknown(AclOperation, code)
    assert isinstance(member, AclOperation)
    return member


def pattern_type_of(code: int) -> PatternType:
    member = enum_or_unknown(PatternType, code)
    assert isinstance(member, PatternType)
    return member


def permission_type_of(code: int) -> AclPermissionType:
    member = enum_or_unknown(AclPermissionType, code)
    assert isinstance(member, AclPermissionType)
    return member
