"""``kraft storage format --add-scram`` (Kafka's StorageTool and ScramParser)."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from kafka.net.sasl.scram import ScramClient

from kraft.cli.storage import main
from kraft.metadata.bootstrap import BootstrapMetadata
from kraft.metadata.image import MetadataDelta, MetadataImage, MetadataProvenance
from kraft.metadata.records import MetadataRecordType
from kraft.metadata.scram import ScramMechanism
from kraft.security.scram import ScramSaslServer, salted_password
from kraft.security.scram_arguments import ScramArgumentError, parse_scram_argument
from kraft.storage.bootstrap_file import read_bootstrap_checkpoint

CLUSTER = "MkU3OEVBNTcwNTJENDM2Qg"


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def write_config(tmp_path: Path) -> Path:
    config = tmp_path / "server.properties"
    config.write_text(
        "process.roles=broker,controller\nnode.id=1\ncontroller.quorum.voters=1@localhost:9093\n"
        "controller.listener.names=CONTROLLER\n"
        f"log.dirs={tmp_path / 'a'}\nmetadata.log.dir={tmp_path / 'meta'}\n"
    )
    return config


def test_format_writes_scram_credentials_into_the_bootstrap_metadata_and_never_the_password(
    tmp_path: Path,
) -> None:
    code, _, err = run(
        "format",
        "-c",
        str(write_config(tmp_path)),
        "-t",
        CLUSTER,
        "--add-scram",
        "SCRAM-SHA-256=[name=alice,password=alice-secret]",
        "-S",
        'SCRAM-SHA-512=[name=admin,iterations=8192,password="admin-secret"]',
    )
    assert (code, err) == (0, "")
    for d in ("a", "meta"):
        assert b"alice-secret" not in (tmp_path / d / "bootstrap.checkpoint").read_bytes()
    bootstrap = read_bootstrap_checkpoint(tmp_path / "meta")
    assert bootstrap is not None
    assert [(r.data.name, r.data.mechanism, r.data.iterations) for r in bootstrap.scram_records] == [
        ("alice", 1, 4096),
        ("admin", 2, 8192),
    ]
    assert read_bootstrap_checkpoint(tmp_path / "a") == bootstrap  # the same salts everywhere
    # Replayed, the credential lets alice log in with her password (and only with it).
    delta = MetadataDelta(MetadataImage.EMPTY)
    for i, record in enumerate(bootstrap.records()):
        delta.replay(record, i)
    image = delta.apply(MetadataProvenance(last_offset=3, last_epoch=0, last_append_ms=0))
    server = ScramSaslServer(
        "SCRAM-SHA-256", lambda u: image.scram.get(ScramMechanism.SCRAM_SHA_256, u), lambda: "n0nce"
    )
    client = ScramClient("alice", "alice-secret", "SCRAM-SHA-256")
    client.process_server_first_message(server.evaluate(client.first_message()))
    client.process_server_final_message(server.evaluate(client.final_message()))
    assert server.complete


def test_a_given_salt_and_salted_password_are_used_as_they_are() -> None:
    salt = b"NaCl-salt"
    salted = salted_password(ScramMechanism.SCRAM_SHA_256, "pw", salt, 4096)
    argument = parse_scram_argument(
        f'SCRAM-SHA-256=[name=bob,salt="{base64.b64encode(salt).decode()}",'
        f'saltedpassword="{base64.b64encode(salted).decode()}"]'
    )
    record = argument.to_record(lambda n: pytest.fail("no random salt was needed"))
    expected = parse_scram_argument(
        f"SCRAM-SHA-256=[name=bob,password=pw,salt={base64.b64encode(salt).decode()}]"
    )
    assert record == expected.to_record(lambda n: b"")
    assert record.type is MetadataRecordType.USER_SCRAM_CREDENTIAL and record.data.salt == salt
    assert "pw" not in repr(argument)


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        ("SCRAM-SHA-256", "Failed to find equals sign in SCRAM argument 'SCRAM-SHA-256'"),
        ("SCRAM-SHA-1=[name=a,password=b]", "The add-scram mechanism SCRAM-SHA-1 is not supported."),
        ("SCRAM-SHA-256=name=a,password=b]", "Expected configuration string to start with ["),
        ("SCRAM-SHA-256=[name=a,password=b", "Expected configuration string to end with ]"),
        ("SCRAM-SHA-256=[name=a,password]", "No equals sign found in SCRAM component: password"),
        ("SCRAM-SHA-256=[password=b]", "You must supply 'name' to add-scram"),
        ("SCRAM-SHA-256=[name=a]", "You must supply one of 'password' or 'saltedpassword' to add-scram"),
        ("SCRAM-SHA-256=[name=a,saltedpassword=YQ==]", "You must supply 'salt' with 'saltedpassword'"),
        ("SCRAM-SHA-256=[name=a,password=b,salt=%%%]", "Failed to decode given salt: %%%"),
        ("SCRAM-SHA-256=[name=a,password=b,iterations=x]", "Failed to parse iterations count: x"),
        ("SCRAM-SHA-256=[name=a,password=b,colour=red,age=3]", "Unknown SCRAM configurations: age, colour"),
    ],
)
def test_malformed_arguments_are_refused_with_kafkas_messages(argument: str, message: str) -> None:
    with pytest.raises(ScramArgumentError) as e:
        parse_scram_argument(argument)
    assert message in str(e.value)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["-S", "SCRAM-SHA-256=[name=a,password=b,iterations=4095]"], "must be >= 4096"),
        (["-S", "SCRAM-SHA-512=[name=a,password=b,iterations=16385]"], "must be <= 16384"),
        (["-r", "3.5-IV1", "-S", "SCRAM-SHA-256=[name=a,password=b]"], "SCRAM is only supported in"),
        (["-S", "SCRAM-SHA-256=[password=b]"], "You must supply 'name'"),
    ],
)
def test_format_refuses_bad_scram_and_writes_nothing(tmp_path: Path, flags: list[str], message: str) -> None:
    code, _, err = run("format", "-c", str(write_config(tmp_path)), "-t", CLUSTER, *flags)
    assert code != 0 and message in err
    assert not (tmp_path / "meta").exists() or not any((tmp_path / "meta").iterdir())


def test_bootstrap_metadata_holds_scram_records_only_from_metadata_version_3_5_iv2() -> None:
    record = parse_scram_argument("SCRAM-SHA-256=[name=a,password=b]").to_record(lambda n: b"s" * n)
    with pytest.raises(ValueError, match=r"SCRAM credentials need metadata\.version"):
        BootstrapMetadata({"metadata.version": 10}, (record,))
    bootstrap = BootstrapMetadata({"metadata.version": 11}, (record,))
    assert bootstrap.records()[-1] is record
    assert BootstrapMetadata.from_records(bootstrap.records()) == bootstrap
    assert "stored_key=b" not in repr(bootstrap)
