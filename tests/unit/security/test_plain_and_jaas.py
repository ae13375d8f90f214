"""SASL/PLAIN (RFC 4616) and the JAAS config parser, as tables."""

from __future__ import annotations

import pytest

from kraft.common.errors import ConfigError
from kraft.common.principal import KafkaPrincipal
from kraft.security.jaas import PLAIN_LOGIN_MODULE, parse_jaas_config, parse_jaas_entries
from kraft.security.plain import INVALID_CREDENTIALS, PlainServer, PlainUsers, client_token
from kraft.security.sasl import PLAIN, SaslAuthenticationError, mechanism_factory

JAAS = (
    f'{PLAIN_LOGIN_MODULE} required username="admin" password="admin-secret" '
    'user_admin="admin-secret" user_alice="al ice;\\"quoted\\"";'
)


def test_parses_kafka_style_plain_jaas_config() -> None:
    entry = parse_jaas_config(JAAS)
    assert entry.login_module == PLAIN_LOGIN_MODULE
    assert entry.control_flag == "required"
    users = PlainUsers.from_jaas(entry)
    assert users.users == {"admin": "admin-secret", "alice": 'al ice;"quoted"'}
    assert (users.username, users.password) == ("admin", "admin-secret")
    assert "admin-secret" not in repr(entry) and "admin-secret" not in repr(users)


def test_bare_word_values_and_several_entries() -> None:
    entries = parse_jaas_entries("a.B optional x=1 y=two; c.D Required;")
    assert [(e.login_module, e.control_flag, dict(e.options)) for e in entries] == [
        ("a.B", "optional", {"x": "1", "y": "two"}),
        ("c.D", "required", {}),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "exactly one login module, found 0"),
        ("a.B required x=1", "does not end with ';'"),
        ("a.B mandatory;", "is not a control flag"),
        ('a.B required x="open;', "not closed"),
        ("a.B required x;", "has no '=value'"),
        ("a.B required x=;", "has no value"),
        ("a.B required x=1 x=2;", "appears twice"),
        ("a.B required; c.D required;", "exactly one login module, found 2"),
        ('"a.B" required;', "expected a login module class name"),
    ],
)
def test_refuses_malformed_jaas_with_a_message_naming_the_property(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=r"^sasl\.jaas\.config: ") as info:
        parse_jaas_config(text)
    assert message in str(info.value)


def test_plain_users_need_the_plain_login_module() -> None:
    entry = parse_jaas_config(
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="a";'
    )
    with pytest.raises(ConfigError, match="PlainLoginModule"):
        PlainUsers.from_jaas(entry)


USERS = {"alice": "alice-secret", "bob": "b"}


def test_plain_accepts_a_known_user_and_names_the_principal() -> None:
    server = PlainServer(USERS)
    assert not server.complete
    assert server.evaluate(client_token("alice", "alice-secret")) == b""
    assert server.complete
    assert server.principal == KafkaPrincipal("User", "alice")


def test_plain_accepts_an_authorization_id_equal_to_the_user() -> None:
    server = PlainServer(USERS)
    server.evaluate(b"bob\x00bob\x00b")
    assert server.principal == KafkaPrincipal("User", "bob")


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (client_token("alice", "wrong"), INVALID_CREDENTIALS),
        (client_token("mallory", "alice-secret"), INVALID_CREDENTIALS),
        (client_token("alice", "alice-secret") + b"\x00", "expected 3 tokens, got 4"),
        (b"alice\x00alice-secret", "expected 3 tokens, got 2"),
        (b"", "expected 3 tokens, got 1"),
        (b"\x00\x00pw", "username not specified"),
        (b"\x00alice\x00", "password not specified"),
        (b"\x00alice\x00\xff\xfe", "not UTF-8"),
        (b"bob\x00alice\x00alice-secret", "authorization id that is different"),
    ],
)
def test_plain_refuses_bad_tokens(token: bytes, message: str) -> None:
    server = PlainServer(USERS)
    with pytest.raises(SaslAuthenticationError, match=message):
        server.evaluate(token)
    assert not server.complete
    with pytest.raises(SaslAuthenticationError):
        _ = server.principal


def test_plain_refuses_a_second_token() -> None:
    server = PlainServer(USERS)
    server.evaluate(client_token("alice", "alice-secret"))
    with pytest.raises(SaslAuthenticationError, match="already complete"):
        server.evaluate(client_token("alice", "alice-secret"))


def test_mechanism_factory_serves_only_enabled_mechanisms_with_a_maker() -> None:
    factory = mechanism_factory(["PLAIN", "SCRAM-SHA-256"], {PLAIN: lambda: PlainServer(USERS)})
    first, second = factory("PLAIN"), factory("PLAIN")
    assert isinstance(first, PlainServer) and first is not second  # fresh per exchange
    assert factory("SCRAM-SHA-256") is None  # enabled, but no maker yet
    assert factory("plain") is None  # names are case-sensitive, as Kafka's
    assert mechanism_factory([], {PLAIN: lambda: PlainServer(USERS)})("PLAIN") is None
