"""AlterUserScramCredentials on the controller (Kafka's ScramControlManager) and SCRAM bootstrap records."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest
from clusters import ControllerCluster

from kraft.controller.scram_control import alter_credentials
from kraft.metadata.image import MetadataDelta, MetadataImage, MetadataProvenance
from kraft.metadata.records import MetadataRecordType, MetadataVersion, make_record
from kraft.metadata.scram import ScramCredential, ScramImage, ScramMechanism
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import alter_user_scram_credentials
from kraft.security.scram import credential_from_password, salted_password

REQ: Any = alter_user_scram_credentials.REQUEST.cls
SHA256 = ScramMechanism.SCRAM_SHA_256
SHA512 = ScramMechanism.SCRAM_SHA_512
SALT = b"0123456789abcdef"


def upsertion(name: str, mechanism: int = 1, iterations: int = 4096, password: str = "pw") -> Any:
    m = ScramMechanism.from_type(mechanism)
    salted = salted_password(m, password, SALT, iterations) if m is not ScramMechanism.UNKNOWN else b"x" * 32
    return REQ.ScramCredentialUpsertion(
        name=name, mechanism=mechanism, iterations=iterations, salt=SALT, salted_password=salted
    )


def deletion(name: str, mechanism: int = 1) -> Any:
    return REQ.ScramCredentialDeletion(name=name, mechanism=mechanism)


def image_with(mv: int = int(MetadataVersion.IBP_4_0_IV3), **users: ScramMechanism) -> MetadataImage:
    credential = ScramCredential(salt=b"s", stored_key=b"k", server_key=b"v", iterations=4096)
    by_mechanism: dict[ScramMechanism, dict[str, ScramCredential]] = {}
    for user, m in users.items():
        by_mechanism.setdefault(m, {})[user] = credential
    return MetadataImage(features={"metadata.version": mv}, scram=ScramImage(by_mechanism))


def outcome(image: MetadataImage, deletions: list[Any] = (), upsertions: list[Any] = ()) -> dict[str, Any]:  # type: ignore[assignment]
    result = alter_credentials(image, REQ(deletions=list(deletions), upsertions=list(upsertions)), 0)
    return {
        "records": result.records,
        "codes": {r.user: r.error_code for r in result.response.results},
        "messages": {r.user: r.error_message for r in result.response.results},
        "result": result,
    }


def test_upsertion_writes_the_derived_keys_and_never_the_salted_password() -> None:
    request = upsertion("alice", 2, 8192, "alice-secret")
    got = outcome(image_with(), upsertions=[request])
    assert got["codes"] == {"alice": 0}
    (record,) = got["records"]
    expected = credential_from_password(
        SHA512, "alice-secret", random_bytes=bytes, iterations=8192, salt=SALT
    )
    assert record.type is MetadataRecordType.USER_SCRAM_CREDENTIAL
    assert (record.data.name, record.data.mechanism, record.data.iterations) == ("alice", 2, 8192)
    assert (record.data.salt, record.data.stored_key, record.data.server_key) == (
        SALT,
        expected.stored_key,
        expected.server_key,
    )
    assert request.salted_password not in (record.data.stored_key, record.data.server_key, record.data.salt)


@pytest.mark.parametrize(
    ("make", "code", "message"),
    [
        (lambda: upsertion("a", iterations=4095), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
        (lambda: upsertion("a", iterations=16385), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
        (
            lambda: upsertion("a", mechanism=0),
            ErrorCode.UNSUPPORTED_SASL_MECHANISM,
            "Unknown SCRAM mechanism",
        ),
        (
            lambda: upsertion("a", mechanism=7),
            ErrorCode.UNSUPPORTED_SASL_MECHANISM,
            "Unknown SCRAM mechanism",
        ),
        (lambda: upsertion(""), ErrorCode.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
    ],
)
def test_refused_upsertions_write_nothing(make: Any, code: ErrorCode, message: str) -> None:
    request = make()
    got = outcome(image_with(), upsertions=[request])
    assert got["records"] == ()
    assert got["codes"] == {request.name: code} and got["messages"][request.name] == message


def test_malformed_salt_or_salted_password_are_refused_beyond_kafka() -> None:
    short = REQ.ScramCredentialUpsertion(
        name="a", mechanism=1, iterations=4096, salt=SALT, salted_password=b"x"
    )
    no_salt = REQ.ScramCredentialUpsertion(
        name="b", mechanism=2, iterations=4096, salt=b"", salted_password=hashlib.sha512(b"").digest()
    )
    got = outcome(image_with(), upsertions=[short, no_salt])
    assert got["records"] == ()
    assert got["codes"] == {"a": ErrorCode.UNACCEPTABLE_CREDENTIAL, "b": ErrorCode.UNACCEPTABLE_CREDENTIAL}


def test_deleting_a_missing_credential_is_resource_not_found() -> None:
    image = image_with(alice=SHA256)
    got = outcome(image, deletions=[deletion("alice", 2), deletion("bob")])
    assert got["records"] == ()
    assert got["codes"] == {"alice": ErrorCode.RESOURCE_NOT_FOUND, "bob": ErrorCode.RESOURCE_NOT_FOUND}
    assert got["messages"]["bob"] == "Attempt to delete a user credential that does not exist"
    got = outcome(image, deletions=[deletion("alice", 1)])
    assert got["codes"] == {"alice": 0}
    assert [(r.type, r.data.name, r.data.mechanism) for r in got["records"]] == [
        (MetadataRecordType.REMOVE_USER_SCRAM_CREDENTIAL, "alice", 1)
    ]


def test_a_user_altered_twice_in_one_request_is_a_duplicate_and_nothing_is_written_for_it() -> None:
    image = image_with(alice=SHA256, carol=SHA256)
    got = outcome(
        image,
        deletions=[deletion("alice"), deletion("carol")],
        upsertions=[upsertion("alice", 2), upsertion("bob", 1), upsertion("bob", 2), upsertion("bob", 1)],
    )
    assert got["codes"] == {
        "carol": 0,
        "alice": ErrorCode.DUPLICATE_RESOURCE,
        "bob": ErrorCode.DUPLICATE_RESOURCE,
    }
    assert [r.data.name for r in got["records"]] == ["carol"]
    assert [r.user for r in got["result"].response.results] == ["carol", "alice", "bob"]  # accepted first


def test_a_user_refused_once_is_reported_once() -> None:
    got = outcome(image_with(), upsertions=[upsertion("a", iterations=1), upsertion("a")])
    assert [r.user for r in got["result"].response.results] == ["a"]
    assert got["codes"] == {"a": ErrorCode.UNACCEPTABLE_CREDENTIAL}


def test_below_metadata_version_3_5_iv2_scram_is_unsupported() -> None:
    image = image_with(mv=int(MetadataVersion.IBP_3_5_IV1))
    got = outcome(image, deletions=[deletion("x")], upsertions=[upsertion("y")])
    assert got["records"] == ()
    assert got["codes"] == {"x": ErrorCode.UNSUPPORTED_VERSION, "y": ErrorCode.UNSUPPORTED_VERSION}


def test_the_records_replay_into_the_image_they_were_computed_on() -> None:
    image = image_with(alice=SHA256)
    got = outcome(image, deletions=[deletion("alice")], upsertions=[upsertion("bob", 2)])
    delta = MetadataDelta(image)
    for i, r in enumerate(got["records"]):
        delta.replay(r, i)
    after = delta.apply(MetadataProvenance(last_offset=1, last_epoch=1, last_append_ms=0))
    assert after.scram.users() == ["bob"]


# ---------------------------------------------------------------------------------------------------
# Through the quorum


def test_alter_commits_replicates_and_survives_a_failover() -> None:
    c = ControllerCluster(3)
    first = c.wait_active()
    answer = c.call(
        alter_user_scram_credentials, 0, deletions=[], upsertions=[upsertion("alice", 2, 4096, "s")]
    )
    assert [(r.user, r.error_code) for r in answer.results] == [("alice", 0)]
    c.run_for(300)
    for n in (1, 2, 3):
        credential = c.controller(n).image.scram.get(SHA512, "alice")
        assert credential is not None and credential.iterations == 4096
    c.crash(first.node_id)
    c.run_until(lambda: c.active() is not None and c.active() is not first)
    again = c.call(alter_user_scram_credentials, 0, deletions=[deletion("alice", 2)], upsertions=[])
    assert [(r.user, r.error_code) for r in again.results] == [("alice", 0)]
    assert c.active().latest_image.scram.is_empty


def test_a_standby_answers_not_controller_for_every_user() -> None:
    c = ControllerCluster(3)
    active = c.wait_active()
    standby = next(n for n in (1, 2, 3) if n != active.node_id)
    answer = c.call(
        alter_user_scram_credentials, 0, to=standby, deletions=[deletion("a")], upsertions=[upsertion("b")]
    )
    assert [(r.user, r.error_code) for r in answer.results] == [
        ("a", ErrorCode.NOT_CONTROLLER),
        ("b", ErrorCode.NOT_CONTROLLER),
    ]


def test_bootstrap_scram_records_are_written_with_the_features_in_the_bootstrap_transaction() -> None:
    c = ControllerCluster(1)
    credential = credential_from_password(SHA256, "admin-secret", random_bytes=lambda n: b"\x05" * n)
    c.controller(1).bootstrap_records = (
        make_record(
            MetadataRecordType.USER_SCRAM_CREDENTIAL,
            name="admin",
            mechanism=1,
            salt=credential.salt,
            stored_key=credential.stored_key,
            server_key=credential.server_key,
            iterations=credential.iterations,
        ),
    )
    ctl = c.wait_active()
    c.run_until(lambda: not ctl.image.scram.is_empty)
    assert ctl.image.scram.get(SHA256, "admin") == credential


def test_an_upsertions_repr_never_shows_the_salted_password() -> None:
    request = upsertion("alice", 2, 4096, "alice-secret")
    text = repr(REQ(deletions=[], upsertions=[request]))
    assert "alice" in text and "[hidden]" in text
    assert repr(request.salted_password) not in text and repr(SALT) not in text
