"""``kraft configs --entity-type users``: argument rules and the SCRAM value parsing of Kafka's
ConfigCommand (the end-to-end run is tests/integration/test_scram_credentials.py)."""

from __future__ import annotations

import hashlib
import io

import pytest

from kraft.cli import configs
from kraft.metadata.scram import ScramMechanism
from kraft.security.scram import salted_password


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = configs.main(argv, out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            [
                "--alter",
                "--entity-type",
                "users",
                "--entity-default",
                "--add-config",
                "SCRAM-SHA-256=[password=x]",
            ],
            "The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials",
        ),
        (
            ["--alter", "--entity-type", "users", "--add-config", "SCRAM-SHA-256=[password=x]"],
            "An entity-name or default entity must be specified with --alter of users",
        ),
        (
            ["--alter", "--entity-type", "users", "--entity-name", "alice"],
            "At least one of --add-config or --delete-config must be specified with --alter",
        ),
        (["--describe", "--entity-type", "groups"], "Invalid entity type groups"),
    ],
)
def test_misuse_is_refused_before_connecting(argv: list[str], message: str) -> None:
    code, _, err = run(["--bootstrap-server", "127.0.0.1:1", *argv])
    assert code == 2 and message in err


def test_a_scram_value_is_salted_and_hashed_here_with_a_fresh_salt() -> None:
    one = configs.scram_upsertion("alice", ScramMechanism.SCRAM_SHA_512, "iterations=8192,password=a,b=c")
    two = configs.scram_upsertion("alice", ScramMechanism.SCRAM_SHA_512, "iterations=8192,password=a,b=c")
    assert (one.user, one.mechanism, one.iterations) == ("alice", 2, 8192)
    assert one.salt != two.salt and len(one.salt) == 32
    assert one.salted_password == salted_password(ScramMechanism.SCRAM_SHA_512, "a,b=c", one.salt, 8192)
    assert len(one.salted_password) == hashlib.sha512().digest_size
    assert "a,b=c" not in repr(one)
    default = configs.scram_upsertion("bob", ScramMechanism.SCRAM_SHA_256, "iterations=-1,password=pw")
    assert default.iterations == 4096


@pytest.mark.parametrize(
    ("value", "error", "message"),
    [
        ("password", "_CommandError", "Invalid credential property SCRAM-SHA-256=password"),
        ("iterations=4095,password=x", "_CommandError", "Iterations 4095 is less than the minimum 4096"),
        ("iterations=4096,password=", "_ServerError", "Password must not be empty"),
    ],
)
def test_bad_scram_values_are_refused(value: str, error: str, message: str) -> None:
    with pytest.raises(getattr(configs, error)) as e:
        configs.scram_upsertion("alice", ScramMechanism.SCRAM_SHA_256, value)
    assert message in str(e.value)


def test_describe_text_is_kafkas() -> None:
    assert configs.scram_description([(1, 8192), (2, 4096)]) == (
        "SCRAM-SHA-256=iterations=8192, SCRAM-SHA-512=iterations=4096"
    )
