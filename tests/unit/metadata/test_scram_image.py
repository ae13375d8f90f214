"""SCRAM credentials in the metadata log: records, replay into the image, snapshots, tools' views."""

from __future__ import annotations

import json

import pytest

from kraft.metadata.image import MetadataDelta, MetadataImage, MetadataLoader, MetadataProvenance, ReplayError
from kraft.metadata.image_snapshot import image_to_records, snapshot_records_bytes
from kraft.metadata.metadata_tree import SCRAM_CREDENTIAL_TEXT, image_node
from kraft.metadata.records import (
    ApiMessageAndVersion,
    MetadataRecordType,
    MetadataVersion,
    decode_record,
    encode_record,
    make_record,
    record_to_json,
)
from kraft.metadata.scram import ScramCredential, ScramImage, ScramMechanism

T = MetadataRecordType
SHA256 = ScramMechanism.SCRAM_SHA_256
SHA512 = ScramMechanism.SCRAM_SHA_512
SECRET_SALT = b"\x11salt-secret\x11"
SECRET_STORED = b"\x22stored-secret\x22"
SECRET_SERVER = b"\x33server-secret\x33"


def upsert(user: str, mechanism: ScramMechanism = SHA256, iterations: int = 4096) -> ApiMessageAndVersion:
    return make_record(
        T.USER_SCRAM_CREDENTIAL,
        name=user,
        mechanism=int(mechanism),
        salt=SECRET_SALT,
        stored_key=SECRET_STORED,
        server_key=SECRET_SERVER,
        iterations=iterations,
    )


def remove(user: str, mechanism: ScramMechanism = SHA256) -> ApiMessageAndVersion:
    return make_record(T.REMOVE_USER_SCRAM_CREDENTIAL, name=user, mechanism=int(mechanism))


def replay(image: MetadataImage, *records: ApiMessageAndVersion) -> MetadataImage:
    delta = MetadataDelta(image)
    for i, r in enumerate(records):
        delta.replay(r, image.provenance.last_offset + 1 + i)
    return delta.apply(MetadataProvenance(last_offset=len(records), last_epoch=1, last_append_ms=0))


def with_mv(mv: int = int(MetadataVersion.IBP_4_0_IV3)) -> MetadataImage:
    return replay(
        MetadataImage.EMPTY, make_record(T.FEATURE_LEVEL, name="metadata.version", feature_level=mv)
    )


def test_records_encode_as_kafkas_json_declares_them() -> None:
    # UserScramCredentialRecord v0: frame 1, type 11, version 0 | Name "al" | Mechanism 1 |
    # Salt (compact bytes) | StoredKey | ServerKey | Iterations int32 | no tags.
    record = make_record(
        T.USER_SCRAM_CREDENTIAL,
        name="al",
        mechanism=1,
        salt=b"s",
        stored_key=b"k",
        server_key=b"v",
        iterations=4096,
    )
    assert encode_record(record).hex(" ") == "01 0b 00 03 61 6c 01 02 73 02 6b 02 76 00 00 10 00 00"
    assert encode_record(remove("al")).hex(" ") == "01 16 00 03 61 6c 01 00"
    assert decode_record(encode_record(record)) == record


def test_replay_keeps_one_credential_per_mechanism_per_user() -> None:
    image = replay(with_mv(), upsert("alice"), upsert("alice", SHA512, 8192), upsert("bob"))
    assert image.scram.users() == ["alice", "bob"]
    assert image.scram.get(SHA512, "alice") == ScramCredential(
        salt=SECRET_SALT, stored_key=SECRET_STORED, server_key=SECRET_SERVER, iterations=8192
    )
    image = replay(image, upsert("alice", SHA512, 16384), remove("bob"))
    credential = image.scram.get(SHA512, "alice")
    assert credential is not None and credential.iterations == 16384
    assert image.scram.get(SHA256, "bob") is None
    assert list(image.scram.mechanisms) == [SHA256, SHA512]
    image = replay(image, remove("alice"))
    assert list(image.scram.mechanisms) == [SHA512]  # an emptied mechanism is dropped


def test_a_delta_without_scram_records_shares_the_scram_image() -> None:
    image = replay(with_mv(), upsert("alice"))
    after = replay(image, make_record(T.NO_OP))
    assert after.scram is image.scram


def test_removing_a_missing_credential_or_an_unknown_mechanism_does_not_replay() -> None:
    image = replay(with_mv(), upsert("alice"))
    with pytest.raises(ReplayError, match="no SCRAM-SHA-512 credential"):
        replay(image, remove("alice", SHA512))
    with pytest.raises(ReplayError, match="unknown SCRAM mechanism 9"):
        replay(image, make_record(T.REMOVE_USER_SCRAM_CREDENTIAL, name="alice", mechanism=9))
    # Removed earlier in the same delta: gone for the rest of it.
    with pytest.raises(ReplayError):
        replay(image, remove("alice"), remove("alice"))


def test_snapshot_round_trip_keeps_every_credential() -> None:
    image = replay(with_mv(), upsert("bob", SHA512, 5000), upsert("alice"), upsert("alice", SHA512))
    records = image_to_records(image)
    scram = [r for r in records if r.type is T.USER_SCRAM_CREDENTIAL]
    assert [(r.data.mechanism, r.data.name) for r in scram] == [(1, "alice"), (2, "alice"), (2, "bob")]
    loader = MetadataLoader()
    loaded = loader.load_snapshot(100, 3, 0, snapshot_records_bytes(image))
    assert loaded.scram == image.scram
    assert not loaded.is_empty


def test_snapshot_below_scram_metadata_version_reports_the_loss() -> None:
    image = replay(with_mv(int(MetadataVersion.IBP_3_5_IV1)), upsert("alice"))
    losses: list[str] = []
    records = image_to_records(image, losses=losses)
    assert not any(r.type is T.USER_SCRAM_CREDENTIAL for r in records)
    assert losses and "alice" in losses[0]


def test_images_differing_only_in_credentials_are_not_equal() -> None:
    a = replay(with_mv(), upsert("alice"))
    b = replay(with_mv(), upsert("alice", iterations=8192))
    assert a != b
    assert a == replay(with_mv(), upsert("alice"))


def test_no_tool_view_shows_a_salt_or_key() -> None:
    record = upsert("alice")
    text = json.dumps(record_to_json(record))
    assert json.loads(text)["data"] == {
        "name": "alice",
        "mechanism": 1,
        "salt": "[hidden]",
        "storedKey": "[hidden]",
        "serverKey": "[hidden]",
        "iterations": 4096,
    }
    image = replay(with_mv(), record)
    node = image_node(image).child("scram")
    assert node is not None and node.is_directory
    assert node.child_names() == ["SCRAM-SHA-256", "SCRAM-SHA-512"]
    users = node.child("SCRAM-SHA-256")
    assert users is not None and users.child_names() == ["alice"]
    leaf = users.child("alice")
    assert leaf is not None and leaf.text == SCRAM_CREDENTIAL_TEXT
    for shown in (repr(image.scram), repr(image.scram.get(SHA256, "alice")), leaf.text, text):
        for secret in (SECRET_SALT, SECRET_STORED, SECRET_SERVER):
            assert secret.decode("latin-1").strip("\x11\x22\x33") not in shown


def test_describe_follows_kafkas_scram_image_rules() -> None:
    image = ScramImage(
        {
            SHA256: {"alice": ScramCredential(salt=b"", stored_key=b"", server_key=b"", iterations=4096)},
            SHA512: {
                "alice": ScramCredential(salt=b"", stored_key=b"", server_key=b"", iterations=8192),
                "bob": ScramCredential(salt=b"", stored_key=b"", server_key=b"", iterations=4096),
            },
        }
    )
    rows = {r.user: r for r in image.describe(None)}
    assert rows["alice"].credentials == ((SHA256, 4096), (SHA512, 8192))
    assert [r.user for r in image.describe([])] == ["alice", "bob"]
    dup, missing, bob = image.describe(["alice", "carol", "bob", "alice"])
    assert (dup.user, dup.error_code) == ("alice", 92) and dup.error_message is not None
    assert (missing.user, missing.error_code, missing.credentials) == ("carol", 91, ())
    assert missing.error_message == "Attempt to describe a user credential that does not exist: carol"
    assert (bob.error_code, bob.credentials) == (0, ((SHA512, 4096),))


def test_a_scram_records_repr_hides_its_secrets() -> None:
    text = repr(upsert("alice"))
    assert "alice" in text and "[hidden]" in text
    assert "salt-secret" not in text and "stored-secret" not in text and "server-secret" not in text
