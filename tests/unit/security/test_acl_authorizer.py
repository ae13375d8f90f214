"""The StandardAuthorizer rules as tables, plus a property test against a naive reference."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kraft.common.errors import KraftError
from kraft.common.principal import KafkaPrincipal
from kraft.security.acls import (
    AccessControlEntry,
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePattern,
    ResourceType,
    new_acl_problem,
)
from kraft.security.authorizer import (
    STANDARD_AUTHORIZER,
    Authorizer,
    AuthorizerConfig,
    Rule,
    authorize,
)

Op = AclOperation
T = ResourceType
ALICE = KafkaPrincipal("User", "alice")
BOB = KafkaPrincipal("User", "bob")
NO_DEFAULT = AuthorizerConfig()


def acl(
    name: str,
    op: AclOperation,
    *,
    principal: str = "User:alice",
    allow: bool = True,
    rt: ResourceType = T.TOPIC,
    prefixed: bool = False,
    host: str = "*",
) -> AclBinding:
    return AclBinding(
        ResourcePattern(rt, name, PatternType.PREFIXED if prefixed else PatternType.LITERAL),
        AccessControlEntry(principal, host, op, AclPermissionType.ALLOW if allow else AclPermissionType.DENY),
    )


# (ACLs, principal, host, operation, resource type, resource name, allowed)
TABLE = [
    pytest.param([], ALICE, "1.2.3.4", Op.READ, T.TOPIC, "a", False, id="no-acls-default-deny"),
    pytest.param([acl("a", Op.READ)], ALICE, "h", Op.READ, T.TOPIC, "a", True, id="literal-allow"),
    pytest.param([acl("a", Op.READ)], ALICE, "h", Op.READ, T.TOPIC, "b", False, id="literal-other-topic"),
    pytest.param([acl("a", Op.READ)], ALICE, "h", Op.READ, T.TOPIC, "ab", False, id="literal-is-not-prefix"),
    pytest.param([acl("a", Op.READ)], BOB, "h", Op.READ, T.TOPIC, "a", False, id="other-principal"),
    pytest.param([acl("a", Op.READ)], ALICE, "h", Op.WRITE, T.TOPIC, "a", False, id="other-operation"),
    pytest.param([acl("a", Op.READ)], ALICE, "h", Op.READ, T.GROUP, "a", False, id="other-resource-type"),
    pytest.param([acl("*", Op.READ)], ALICE, "h", Op.READ, T.TOPIC, "anything", True, id="wildcard-name"),
    pytest.param(
        [acl("a", Op.READ, principal="User:*")],
        BOB,
        "h",
        Op.READ,
        T.TOPIC,
        "a",
        True,
        id="wildcard-principal",
    ),
    pytest.param(
        [acl("pay", Op.READ, prefixed=True)], ALICE, "h", Op.READ, T.TOPIC, "payments", True, id="prefix"
    ),
    pytest.param(
        [acl("pay", Op.READ, prefixed=True)], ALICE, "h", Op.READ, T.TOPIC, "pa", False, id="short-name"
    ),
    pytest.param(
        [acl("pay", Op.READ, prefixed=True)], ALICE, "h", Op.READ, T.TOPIC, "xpay", False, id="infix"
    ),
    pytest.param(
        [acl("a", Op.READ), acl("a", Op.READ, allow=False)],
        ALICE,
        "h",
        Op.READ,
        T.TOPIC,
        "a",
        False,
        id="deny-beats-allow",
    ),
    pytest.param(
        [acl("a", Op.READ), acl("*", Op.READ, allow=False)],
        ALICE,
        "h",
        Op.READ,
        T.TOPIC,
        "a",
        False,
        id="wildcard-deny-beats-literal-allow",
    ),
    pytest.param(
        [acl("a", Op.READ), acl("", Op.ALL, allow=False, prefixed=True)],
        ALICE,
        "h",
        Op.READ,
        T.TOPIC,
        "a",
        False,
        id="prefixed-deny-all",
    ),
    pytest.param(
        [acl("a", Op.READ)], ALICE, "h", Op.DESCRIBE, T.TOPIC, "a", True, id="read-implies-describe"
    ),
    pytest.param(
        [acl("a", Op.WRITE)], ALICE, "h", Op.DESCRIBE, T.TOPIC, "a", True, id="write-implies-describe"
    ),
    pytest.param(
        [acl("a", Op.DELETE)], ALICE, "h", Op.DESCRIBE, T.TOPIC, "a", True, id="delete-implies-describe"
    ),
    pytest.param(
        [acl("a", Op.ALTER)], ALICE, "h", Op.DESCRIBE, T.TOPIC, "a", True, id="alter-implies-describe"
    ),
    pytest.param(
        [acl("a", Op.CREATE)], ALICE, "h", Op.DESCRIBE, T.TOPIC, "a", False, id="create-no-describe"
    ),
    pytest.param(
        [acl("a", Op.ALTER_CONFIGS)],
        ALICE,
        "h",
        Op.DESCRIBE_CONFIGS,
        T.TOPIC,
        "a",
        True,
        id="alter-configs-implies-describe-configs",
    ),
    pytest.param(
        [acl("a", Op.DESCRIBE_CONFIGS)],
        ALICE,
        "h",
        Op.ALTER_CONFIGS,
        T.TOPIC,
        "a",
        False,
        id="describe-configs-not-alter",
    ),
    pytest.param([acl("a", Op.DESCRIBE)], ALICE, "h", Op.READ, T.TOPIC, "a", False, id="describe-not-read"),
    pytest.param(
        [acl("a", Op.DESCRIBE), acl("a", Op.READ, allow=False)],
        ALICE,
        "h",
        Op.DESCRIBE,
        T.TOPIC,
        "a",
        True,
        id="deny-read-does-not-deny-describe",
    ),
    pytest.param(
        [acl("a", Op.ALL)], ALICE, "h", Op.ALTER_CONFIGS, T.TOPIC, "a", True, id="all-allows-everything"
    ),
    pytest.param(
        [acl("a", Op.READ), acl("a", Op.ALL, allow=False)],
        ALICE,
        "h",
        Op.READ,
        T.TOPIC,
        "a",
        False,
        id="deny-all-denies-read",
    ),
    pytest.param(
        [acl("a", Op.READ, host="10.0.0.1")], ALICE, "10.0.0.1", Op.READ, T.TOPIC, "a", True, id="host"
    ),
    pytest.param(
        [acl("a", Op.READ, host="10.0.0.1")], ALICE, "10.0.0.2", Op.READ, T.TOPIC, "a", False, id="other-host"
    ),
    pytest.param(
        [acl("kafka-cluster", Op.CLUSTER_ACTION, rt=T.CLUSTER)],
        ALICE,
        "h",
        Op.CLUSTER_ACTION,
        T.CLUSTER,
        "kafka-cluster",
        True,
        id="cluster",
    ),
]


@pytest.mark.parametrize(("acls", "principal", "host", "op", "rt", "name", "allowed"), TABLE)
def test_decision_table(
    acls: list[AclBinding],
    principal: KafkaPrincipal,
    host: str,
    op: AclOperation,
    rt: ResourceType,
    name: str,
    allowed: bool,
) -> None:
    assert authorize(principal, host, op, rt, name, acls, NO_DEFAULT) is allowed


def test_super_user_is_allowed_even_against_a_deny() -> None:
    config = AuthorizerConfig(super_users=frozenset({"User:admin"}))
    admin = KafkaPrincipal("User", "admin")
    denies = [acl("a", Op.ALL, principal="User:admin", allow=False)]
    decision = Authorizer.build(config, denies).decide(admin, "h", Op.WRITE, T.TOPIC, "a")
    assert decision.allowed and decision.rule is Rule.SUPER_USER
    assert not authorize(ALICE, "h", Op.WRITE, T.TOPIC, "a", denies, config)


def test_allow_everyone_if_no_acl_found_applies_only_to_resources_without_any_acl() -> None:
    config = AuthorizerConfig(allow_everyone_if_no_acl_found=True)
    acls = [acl("a", Op.READ, principal="User:bob")]
    assert authorize(ALICE, "h", Op.READ, T.TOPIC, "b", acls, config)  # no ACL for b at all
    decision = Authorizer.build(config, acls).decide(ALICE, "h", Op.READ, T.TOPIC, "a")
    assert not decision.allowed and decision.rule is Rule.DEFAULT_DENY  # a has ACLs, none for alice


def test_config_from_properties() -> None:
    assert AuthorizerConfig.from_properties({}) is None
    config = AuthorizerConfig.from_properties(
        {
            "authorizer.class.name": STANDARD_AUTHORIZER,
            "super.users": "User:admin; User:broker",
            "allow.everyone.if.no.acl.found": "true",
        }
    )
    assert config == AuthorizerConfig(frozenset({"User:admin", "User:broker"}), True)
    with pytest.raises(KraftError):
        AuthorizerConfig.from_properties({"authorizer.class.name": "com.example.Mine"})


def test_decision_names_the_matching_acl_as_kafkas_audit_log_does() -> None:
    decision = Authorizer.build(NO_DEFAULT, [acl("a", Op.READ, allow=False)]).decide(
        ALICE, "h", Op.READ, T.TOPIC, "a"
    )
    assert decision.describe_rule() == (
        "MatchingAcl(acl=StandardAcl(resourceType=TOPIC, resourceName=a, patternType=LITERAL, "
        "principal=User:alice, host=*, operation=READ, permissionType=DENY))"
    )


# -- filters and validation ---------------------------------------------------------------------------


def test_filter_match_selects_literal_wildcard_and_prefixes_of_a_name() -> None:
    bindings = [
        acl("payments", Op.READ),
        acl("*", Op.READ),
        acl("pay", Op.READ, prefixed=True),
        acl("pays", Op.READ, prefixed=True),
        acl("other", Op.READ),
    ]
    f = AclBindingFilter(ResourceType.TOPIC, "payments", PatternType.MATCH)
    assert [b.pattern.name for b in bindings if f.matches(b)] == ["payments", "*", "pay"]
    literal_only = AclBindingFilter(ResourceType.TOPIC, "payments", PatternType.LITERAL)
    assert [b.pattern.name for b in bindings if literal_only.matches(b)] == ["payments"]
    any_pattern = AclBindingFilter(ResourceType.TOPIC, "pay", PatternType.ANY)
    assert [b.pattern.name for b in bindings if any_pattern.matches(b)] == ["pay"]
    by_principal = AclBindingFilter(principal="User:bob")
    assert not any(by_principal.matches(b) for b in bindings)


@pytest.mark.parametrize(
    ("binding", "problem"),
    [
        (acl("a", Op.READ, rt=T.ANY), "Invalid resourceType ANY"),
        (
            AclBinding(ResourcePattern(T.TOPIC, "a", PatternType.MATCH), acl("a", Op.READ).entry),
            "Invalid patternType MATCH",
        ),
        (acl("a", Op.ANY), "Invalid operation ANY"),
        (acl("", Op.READ), "Resource name should not be empty"),
        (acl("a", Op.READ, principal="alice"), "Could not parse principal from `alice`"),
    ],
)
def test_new_acl_validation(binding: AclBinding, problem: str) -> None:
    found = new_acl_problem(binding)
    assert found is not None and found.startswith(problem)


def test_a_valid_acl_has_no_problem() -> None:
    assert new_acl_problem(acl("a", Op.READ, prefixed=True)) is None


# -- property: the index decides as a naive scan does ------------------------------------------------

_NAMES = st.sampled_from(["", "a", "ab", "abc", "b", "ba", "*"])
_OPS = st.sampled_from(
    [Op.ALL, Op.READ, Op.WRITE, Op.DESCRIBE, Op.ALTER_CONFIGS, Op.DESCRIBE_CONFIGS, Op.CREATE]
)
_PRINCIPALS = st.sampled_from(["User:alice", "User:bob", "User:*"])
_HOSTS = st.sampled_from(["*", "h1", "h2"])
_BINDINGS = st.builds(
    lambda rt, name, pt, principal, host, op, perm: AclBinding(
        ResourcePattern(rt, name, pt), AccessControlEntry(principal, host, op, perm)
    ),
    st.sampled_from([T.TOPIC, T.GROUP]),
    _NAMES.filter(bool),
    st.sampled_from([PatternType.LITERAL, PatternType.PREFIXED]),
    _PRINCIPALS,
    _HOSTS,
    _OPS,
    st.sampled_from([AclPermissionType.ALLOW, AclPermissionType.DENY]),
)

_IMPLIED = {
    Op.DESCRIBE: {Op.DESCRIBE, Op.READ, Op.WRITE, Op.DELETE, Op.ALTER},
    Op.DESCRIBE_CONFIGS: {Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS},
}


def _naive(
    acls: list[AclBinding],
    config: AuthorizerConfig,
    who: str,
    host: str,
    op: AclOperation,
    rt: ResourceType,
    name: str,
) -> bool:
    """The rules written as plainly as possible, scanning every binding."""
    if who in config.super_users:
        return True

    def applies(b: AclBinding) -> bool:
        p = b.pattern
        if p.resource_type != rt:
            return False
        if p.pattern_type == PatternType.LITERAL:
            return p.name in (name, "*")
        return name.startswith(p.name)

    def grants(b: AclBinding) -> bool:
        e = b.entry
        if e.principal not in (who, "User:*") or e.host not in ("*", host):
            return False
        if e.operation == Op.ALL or e.operation == op:
            return True
        return e.permission_type == AclPermissionType.ALLOW and e.operation in _IMPLIED.get(op, set())

    relevant = [b for b in acls if applies(b)]
    matching = [b for b in relevant if grants(b)]
    if any(b.entry.permission_type == AclPermissionType.DENY for b in matching):
        return False
    if matching:
        return True
    return not relevant and config.allow_everyone_if_no_acl_found


@settings(max_examples=300, deadline=None)
@given(
    acls=st.lists(_BINDINGS, max_size=8),
    who=st.sampled_from(["User:alice", "User:bob", "User:admin"]),
    host=st.sampled_from(["h1", "h2"]),
    op=_OPS.filter(lambda o: o != Op.ALL),
    rt=st.sampled_from([T.TOPIC, T.GROUP]),
    name=_NAMES.filter(bool),
    allow_default=st.booleans(),
)
def test_index_agrees_with_a_naive_scan(
    acls: list[AclBinding],
    who: str,
    host: str,
    op: AclOperation,
    rt: ResourceType,
    name: str,
    allow_default: bool,
) -> None:
    config = AuthorizerConfig(frozenset({"User:admin"}), allow_default)
    principal = KafkaPrincipal.parse(who)
    expected = _naive(acls, config, who, host, op, rt, name)
    assert Authorizer.build(config, acls).authorize(principal, host, op, rt, name) is expected
