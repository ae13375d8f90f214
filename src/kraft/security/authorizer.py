"""Kafka's ``StandardAuthorizer`` as a pure function of (principal, host, operation, resource, ACLs).

What it owns: the configuration (``authorizer.class.name``, ``super.users``,
``allow.everyone.if.no.acl.found``), an immutable index over a set of ``AclBinding``s and the
decision, rule for rule as Kafka's ``StandardAuthorizerData``:

1. a super user (``super.users``, a semicolon list of ``TYPE:NAME``) is allowed everything;
2. the ACLs that apply to the resource are the LITERAL ones with its exact name, the LITERAL ``*``
   wildcard of its type and every PREFIXED one whose name is a prefix of it;
3. among those, an ACL matches the request when its principal is the caller's or ``User:*``, its
   host is the caller's or ``*``, and its operation is the requested one or ALL; an ALLOW ACL also
   matches DESCRIBE when it grants READ, WRITE, DELETE or ALTER, and DESCRIBE_CONFIGS when it grants
   ALTER_CONFIGS (a DENY ACL denies only its own operation);
4. any matching DENY wins; otherwise any matching ALLOW allows; otherwise, when no ACL at all applies
   to the resource (for anyone), ``allow.everyone.if.no.acl.found`` decides; otherwise denied.

What it must not do: I/O, clocks, logging. Callers log denials (``kraft.security.audit``).

Invariant: ``decide`` is a function of its arguments and the index's bindings only; two indexes over
equal sets of bindings decide every question alike (tested against a naive reference).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from kraft.common.errors import ConfigError
from kraft.common.principal import KafkaPrincipal
from kraft.security.acls import (
    WILDCARD,
    WILDCARD_PRINCIPAL,
    AccessControlEntry,
    AclBinding,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
)

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
# Kafka 3.x's ZooKeeper-era name: accepted as the same authorizer (ACLs live in the metadata log).
_ACCEPTED_CLASS_NAMES = frozenset({STANDARD_AUTHORIZER, "kafka.security.authorizer.AclAuthorizer"})

_IMPLIES_DESCRIBE = frozenset(
    {AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER}
)
_IMPLIES_DESCRIBE_CONFIGS = frozenset({AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS})


@dataclass(frozen=True, slots=True)
class AuthorizerConfig:
    """The authorizer's settings (Kafka property names).

    Attributes:
        super_users: ``super.users``: principals (``User:admin``) allowed everything.
        allow_everyone_if_no_acl_found: ``allow.everyone.if.no.acl.found`` (default false).
    """

    super_users: frozenset[str] = frozenset()
    allow_everyone_if_no_acl_found: bool = False

    @classmethod
    def from_properties(cls, props: Mapping[str, str]) -> AuthorizerConfig | None:
        """The configured authorizer, or None when ``authorizer.class.name`` is empty (no checks).

        Raises:
            ConfigError: an authorizer class kraft does not implement, or a bad boolean.
        """
        class_name = props.get("authorizer.class.name", "").strip()
        if not class_name:
            return None
        if class_name not in _ACCEPTED_CLASS_NAMES:
            raise ConfigError(
                f"authorizer.class.name={class_name}: kraft implements only {STANDARD_AUTHORIZER}"
            )
        supers = frozenset(s.strip() for s in props.get("super.users", "").split(";") if s.strip())
        raw = props.get("allow.everyone.if.no.acl.found", "false").strip().lower()
        if raw not in ("true", "false"):
            raise ConfigError(f"allow.everyone.if.no.acl.found must be true or false, not {raw!r}")
        return cls(super_users=supers, allow_everyone_if_no_acl_found=raw == "true")


class Rule(enum.Enum):
    """Which rule decided (Kafka's ``MatchingRule`` kinds, named as its audit log prints them)."""

    SUPER_USER = "SuperUser"
    MATCHING_ACL = "MatchingAcl"
    DEFAULT_ALLOW = "DefaultAllow"
    DEFAULT_DENY = "DefaultDeny"


@dataclass(frozen=True, slots=True)
class Decision:
    """An authorisation answer and why (``acl``: the deciding binding under MATCHING_ACL)."""

    allowed: bool
    rule: Rule
    acl: AclBinding | None = None

    def describe_rule(self) -> str:
        """The rule as Kafka's audit line ends: ``SuperUser``, ``MatchingAcl(acl=...)``, ``DefaultDeny``."""
        if self.rule is Rule.MATCHING_ACL and self.acl is not None:
            p, e = self.acl.pattern, self.acl.entry
            return (
                f"MatchingAcl(acl=StandardAcl(resourceType={p.resource_type.name}, resourceName={p.name}, "
                f"patternType={p.pattern_type.name}, principal={e.principal}, host={e.host}, "
                f"operation={e.operation.name}, permissionType={e.permission_type.name}))"
            )
        return self.rule.value


_Key = tuple[int, int, str]  # (resource type, pattern type, name)
_LITERAL: Final = int(PatternType.LITERAL)
_PREFIXED: Final = int(PatternType.PREFIXED)


@dataclass(frozen=True, slots=True)
class Authorizer:
    """An immutable index over ACL bindings plus the configuration; ``decide`` answers questions.

    Build one per set of ACLs (``Authorizer.build``); it never changes afterwards, so a broker swaps
    it by reference when its metadata image brings new ACLs. Keys are plain ints and the name (enum
    members hash in Python code); a question costs one dict lookup per candidate pattern: the exact
    name, the wildcard and each prefix length some PREFIXED ACL of that type has.
    """

    config: AuthorizerConfig
    _by_key: Mapping[_Key, tuple[AccessControlEntry, ...]] = field(default_factory=dict)
    # Prefix lengths present per resource type, so a lookup tries only lengths some ACL has.
    _prefix_lengths: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    @classmethod
    def build(cls, config: AuthorizerConfig, acls: Iterable[AclBinding]) -> Authorizer:
        grouped: dict[_Key, list[AccessControlEntry]] = {}
        lengths: dict[int, set[int]] = {}
        for binding in acls:
            p = binding.pattern
            grouped.setdefault((int(p.resource_type), int(p.pattern_type), p.name), []).append(binding.entry)
            if p.pattern_type == PatternType.PREFIXED:
                lengths.setdefault(int(p.resource_type), set()).add(len(p.name))
        return cls(
            config,
            {k: tuple(sorted(v)) for k, v in grouped.items()},
            {t: tuple(sorted(n)) for t, n in lengths.items()},
        )

    def _keys(self, resource_type: ResourceType, name: str) -> list[_Key]:
        rt = int(resource_type)
        keys: list[_Key] = [(rt, _LITERAL, name)]
        if name != WILDCARD:
            keys.append((rt, _LITERAL, WILDCARD))
        for n in self._prefix_lengths.get(rt, ()):
            if n > len(name):
                break
            keys.append((rt, _PREFIXED, name[:n]))
        return keys

    def applicable(self, resource_type: ResourceType, name: str) -> list[AclBinding]:
        """Every ACL that applies to the resource (any principal, host or operation)."""
        out: list[AclBinding] = []
        for key in self._keys(resource_type, name):
            entries = self._by_key.get(key)
            if entries:
                out.extend(AclBinding(_pattern(key), e) for e in entries)
        return out

    def decide(
        self,
        principal: KafkaPrincipal,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        resource_name: str,
    ) -> Decision:
        """Whether ``principal`` connecting from ``host`` may do ``operation`` on the resource."""
        who = str(principal)
        if who in self.config.super_users:
            return Decision(True, Rule.SUPER_USER)
        any_acl = False
        allow: tuple[_Key, AccessControlEntry] | None = None
        for key in self._keys(resource_type, resource_name):
            entries = self._by_key.get(key)
            if not entries:
                continue
            any_acl = True
            for entry in entries:
                verdict = _entry_verdict(entry, who, host, operation)
                if verdict is AclPermissionType.DENY:
                    return Decision(False, Rule.MATCHING_ACL, AclBinding(_pattern(key), entry))
                if verdict is AclPermissionType.ALLOW and allow is None:
                    allow = (key, entry)
        if allow is not None:
            return Decision(True, Rule.MATCHING_ACL, AclBinding(_pattern(allow[0]), allow[1]))
        if not any_acl and self.config.allow_everyone_if_no_acl_found:
            return Decision(True, Rule.DEFAULT_ALLOW)
        return Decision(False, Rule.DEFAULT_DENY)

    def allows_some_resource(
        self, principal: KafkaPrincipal, host: str, operation: AclOperation, resource_type: ResourceType
    ) -> bool:
        """Kafka's ``authorizeByResourceType``: whether some resource of the type would allow
        ``operation``: an ALLOW ACL for the caller that no DENY of the caller covers (a DENY on the
        ``*`` wildcard, on the same literal name, or on a prefix of the allowed name)."""
        who = str(principal)
        if who in self.config.super_users:
            return True
        allows: list[tuple[int, str]] = []
        denies: list[tuple[int, str]] = []
        for (rt, pattern_type, name), entries in self._by_key.items():
            if rt != resource_type:
                continue
            for entry in entries:
                verdict = _entry_verdict(entry, who, host, operation)
                if verdict is AclPermissionType.DENY:
                    denies.append((pattern_type, name))
                elif verdict is AclPermissionType.ALLOW:
                    allows.append((pattern_type, name))
        if (_LITERAL, WILDCARD) in denies:
            return False
        denied_prefixes = [n for t, n in denies if t == _PREFIXED]
        denied_literals = {n for t, n in denies if t == _LITERAL}
        for pattern_type, name in allows:
            if any(name.startswith(p) for p in denied_prefixes):
                continue
            if pattern_type == _LITERAL and name in denied_literals:
                continue
            return True
        return False

    def authorize(
        self,
        principal: KafkaPrincipal,
        host: str,
        operation: AclOperation,
        resource_type: ResourceType,
        resource_name: str,
    ) -> bool:
        return self.decide(principal, host, operation, resource_type, resource_name).allowed


def _pattern(key: _Key) -> ResourcePattern:
    return ResourcePattern(ResourceType(key[0]), key[2], PatternType(key[1]))


def _entry_verdict(
    entry: AccessControlEntry, principal: str, host: str, operation: AclOperation
) -> AclPermissionType | None:
    """ALLOW or DENY when ``entry`` matches the request (``principal`` as ``TYPE:NAME``), None when it
    does not apply to it."""
    if entry.principal != principal and entry.principal != WILDCARD_PRINCIPAL:
        return None
    if entry.host != WILDCARD and entry.host != host:
        return None
    if entry.operation != AclOperation.ALL:
        if entry.permission_type == AclPermissionType.ALLOW:
            # Only an ALLOW implies the weaker operation; a DENY READ leaves DESCRIBE alone.
            if operation == AclOperation.DESCRIBE:
                if entry.operation not in _IMPLIES_DESCRIBE:
                    return None
            elif operation == AclOperation.DESCRIBE_CONFIGS:
                if entry.operation not in _IMPLIES_DESCRIBE_CONFIGS:
                    return None
            elif operation != entry.operation:
                return None
        elif operation != entry.operation:
            return None
    return entry.permission_type


def authorize(
    principal: KafkaPrincipal,
    host: str,
    operation: AclOperation,
    resource_type: ResourceType,
    resource_name: str,
    acls: Iterable[AclBinding],
    config: AuthorizerConfig,
) -> bool:
    """One question, without keeping an index (tests, tools). Servers keep an ``Authorizer``."""
    return Authorizer.build(config, acls).authorize(principal, host, operation, resource_type, resource_name)
