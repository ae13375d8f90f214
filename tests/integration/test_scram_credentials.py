"""SCRAM credentials on a real combined node: ``kraft storage format --add-scram`` bootstraps the
first admin; ``kraft configs --entity-type users`` and kafka-python's admin client alter and describe
credentials through the broker listener (Alter forwarded to the controller, Describe from the
broker's image), and the credentials stored let kafka-python's SCRAM client log in."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import LocalCluster

from kraft.cli import cluster as cluster_cli
from kraft.cli import configs, storage

kafka_admin = pytest.importorskip("kafka.admin")
kafka_users = pytest.importorskip("kafka.admin._users")

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
