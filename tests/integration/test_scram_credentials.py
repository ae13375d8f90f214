"""SCRAM credentials on a real combined node: ``kraft storage format --add-scram`` bootstraps the
first admin; ``kraft configs --entity-type users`` and kafka-python's admin client alter and describe
credentials through the broker listener (Alter forwarded to the controller, Describe from the
broker's image), and the credentials stored let kafka-python's SCRAM client log in."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from local_cluster import LocalCluster

from kraft.cli import cluster as cluster_cli
from kraft.cli import configs, storage
from kraft.metadata.image import MetadataDelta, MetadataImage, MetadataProvenance
from kraft.metadata.records import PAYLOAD_WITHHELD_RECORD_TYPES, decode_record
from kraft.metadata.scram import ScramMechanism
from kraft.security.scram import ScramSaslServer

kafka_admin = pytest.importorskip("kafka.admin")
kafka_users = pytest.importorskip("kafka.admin._users")
kafka_scram = pytest.importorskip("kafka.net.sasl.scram")

pytestmark = pytest.mark.slow


def configs_tool(cluster: LocalCluster, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = configs.main(["--bootstrap-server", cluster.bootstrap_servers(), *argv], out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_scram_credentials_from_format_to_kafka_python(local_cluster: Callable[..., LocalCluster]) -> None:
    cluster = local_cluster(1, combined=True)
    (node_id,) = cluster.ids
    node = cluster.node(node_id)
    Path(node.node_dir).mkdir(parents=True, exist_ok=True)
    node.config_path.write_text(cluster_cli.node_properties(cluster.spec, node))
    out, err = io.StringIO(), io.StringIO()
    code = storage.main(
        [
            "format",
            "--cluster-id",
            cluster.spec.cluster_id,
            "--config",
            str(node.config_path),
            *cluster_cli.format_flags(cluster.spec, node),
            "--add-scram",
            "SCRAM-SHA-512=[name=admin,iterations=8192,password=admin-secret]",
        ],
        out=out,
        err=err,
    )
    assert code == 0, err.getvalue()
    cluster.start_all()
    cluster.wait_for_leader()
    cluster.wait_for_brokers()

    code, text, err_text = configs_tool(cluster, "--describe", "--entity-type", "users")
    assert (code, err_text) == (0, "")
    assert text == "SCRAM credential configs for user-principal 'admin' are SCRAM-SHA-512=iterations=8192\n"

    code, text, err_text = configs_tool(
        cluster,
        "--alter",
        "--entity-type",
        "users",
        "--entity-name",
        "alice",
        "--add-config",
        "SCRAM-SHA-256=[iterations=4096,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]",
    )
    assert (code, text, err_text) == (0, "Completed updating config for user alice.\n", "")
    code, text, _ = configs_tool(cluster, "--describe", "--entity-type", "users", "--entity-name", "alice")
    assert text == (
        "SCRAM credential configs for user-principal 'alice' are "
        "SCRAM-SHA-256=iterations=4096, SCRAM-SHA-512=iterations=4096\n"
    )
    code, text, err_text = configs_tool(
        cluster,
        "--alter",
        "--entity-type",
        "users",
        "--entity-name",
        "alice",
        "--delete-config",
        "SCRAM-SHA-512",
    )
    assert code == 0, err_text
    code, text, err_text = configs_tool(
        cluster,
        "--alter",
        "--entity-type",
        "users",
        "--entity-name",
        "alice",
        "--delete-config",
        "SCRAM-SHA-512",
    )
    assert code == 1 and "RESOURCE_NOT_FOUND" in err_text

    admin = kafka_admin.KafkaAdminClient(
        bootstrap_servers=cluster.bootstrap_servers(), request_timeout_ms=20_000
    )
    try:
        errors = admin.alter_user_scram_credentials(  # type: ignore[attr-defined]
            [
                kafka_users.UserScramCredentialUpsertion(
                    "carol", "SCRAM-SHA-256", "carol-secret", iterations=8192
                )
            ]
        )
        assert errors == {"carol": None}
        described = admin.describe_user_scram_credentials()  # type: ignore[attr-defined]
        assert {
            u: [(int(c["mechanism"]), c["iterations"]) for c in d["credential_infos"]]
            for u, d in described.items()
        } == {
            "admin": [(2, 8192)],
            "alice": [(1, 4096)],
            "carol": [(1, 8192)],
        }
        refused = admin.alter_user_scram_credentials(  # type: ignore[attr-defined]
            [kafka_users.UserScramCredentialUpsertion("dave", "SCRAM-SHA-256", "x", iterations=100)]
        )
        assert refused == {"dave": "Too few iterations"}
    finally:
        admin.close()  # type: ignore[attr-defined]

    # The credentials in the node's metadata log (read from its segment files) log in.
    delta = MetadataDelta(MetadataImage.EMPTY)
    for offset, _, value in cluster.records(node_id, below_offset=1 << 62):
        if value and value[1] in PAYLOAD_WITHHELD_RECORD_TYPES:
            delta.replay(decode_record(value), offset)
        assert b"alice-secret" not in value and b"carol-secret" not in value
    image = delta.apply(MetadataProvenance(last_offset=0, last_epoch=0, last_append_ms=0))
    assert image.scram.users() == ["admin", "alice", "carol"]
    for user, password, mechanism in (
        ("admin", "admin-secret", ScramMechanism.SCRAM_SHA_512),
        ("alice", "alice-secret", ScramMechanism.SCRAM_SHA_256),
        ("carol", "carol-secret", ScramMechanism.SCRAM_SHA_256),
    ):
        server = ScramSaslServer(
            mechanism.mechanism_name, lambda u, m=mechanism: image.scram.get(m, u), lambda: "servernonce"
        )
        client = kafka_scram.ScramClient(user, password, mechanism.mechanism_name)
        client.process_server_first_message(server.evaluate(client.first_message()))
        client.process_server_final_message(server.evaluate(client.final_message()))
        assert server.complete
