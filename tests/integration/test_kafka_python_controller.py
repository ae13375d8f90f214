"""An unmodified kafka-python admin client creates, configures, describes and deletes topics on our
controllers (it sends controller-bound requests to Metadata.ControllerId, the active controller).
Brokers are registered first by a scripted broker, since topics need brokers to be placed on."""

from __future__ import annotations

import uuid
from collections.abc import Callable

import pytest
from local_cluster import LocalCluster

from kraft.client.controller import ControllerClient

kafka_admin = pytest.importorskip("kafka.admin")
kafka_errors = pytest.importorskip("kafka.errors")

pytestmark = pytest.mark.slow


def test_kafka_python_creates_configures_and_deletes_topics(
    local_cluster: Callable[..., LocalCluster],
) -> None:
    cluster = local_cluster(3)
    cluster.start_all()
    cluster.wait_for_leader()
    broker = ControllerClient(cluster.bootstrap(), timeout_s=20)
    epochs = {}
    for b in (101, 102, 103):
        r = broker.register_broker(
            b, cluster.spec.cluster_id, incarnation_id=uuid.uuid4(), log_dir=uuid.uuid4()
        )
        assert r.error_code == 0
        epochs[b] = r.broker_epoch
    for b, e in epochs.items():
        assert not broker.heartbeat(b, e, 1 << 40).is_fenced

    bootstrap = ",".join(f"{a.host}:{a.port}" for a in cluster.bootstrap())
    admin = kafka_admin.KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=15_000)
    try:
        admin.create_topics(
            [
                kafka_admin.NewTopic("payments", 3, 3, topic_configs={"min.insync.replicas": "2"}),
                kafka_admin.NewTopic("audit", 1, 2),
            ]
        )
        with pytest.raises(kafka_errors.TopicAlreadyExistsError):
            admin.create_topics([kafka_admin.NewTopic("payments", 1, 1)])
        with pytest.raises(kafka_errors.InvalidReplicationFactorError):
            admin.create_topics([kafka_admin.NewTopic("too-wide", 1, 4)])

        resource = kafka_admin.ConfigResource(kafka_admin.ConfigResourceType.TOPIC, "payments")
        described = admin.describe_configs([resource])
        entry = described["topic"]["payments"]["min.insync.replicas"]
        assert entry["value"] == "2" and entry["config_source"] == "DYNAMIC_TOPIC_CONFIG"

        admin.delete_topics(["audit"])

        # Features through ApiVersions v3+ and UpdateFeatures (KIP-584) on the active controller.
        features = admin.describe_features(send_request_to_controller=True)
        assert features["metadata.version"]["finalized"] == (25, 25)
        assert features["metadata.version"]["supported"] == (1, 25)
        assert features["eligible.leader.replicas.version"]["finalized"] == (1, 1)
        assert features["eligible.leader.replicas.version"]["supported"] == (0, 1)
        assert features["metadata.version"]["finalized_epoch"] > 0
        result = admin.update_features({"eligible.leader.replicas.version": ("SAFE_DOWNGRADE", 0)})
        assert result == {"eligible.leader.replicas.version": "OK"}
        after = admin.describe_features(send_request_to_controller=True)
        assert "finalized" not in after["eligible.leader.replicas.version"]
    finally:
        admin.close()
    # The scripted broker sees the result in the controller's own answers.
    r = broker.describe_topic_configs("payments")
    rows = {c.name: c.value for c in r.results[0].configs}
    assert rows["min.insync.replicas"] == "2"
    gone = broker.describe_topic_configs("audit")
    assert gone.results[0].error_code != 0
