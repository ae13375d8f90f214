"""Controller metrics reach the Prometheus endpoint under Kafka's MBean names."""

from __future__ import annotations

from prometheus_client import generate_latest

from kraft.controller.metrics import PROMETHEUS_NAMES, ControllerMetrics
from kraft.server.driver import NodeView
from kraft.server.metrics import build_registry, controller_metric_name


def test_every_controller_metric_is_exported_with_its_kafka_name() -> None:
    metrics = ControllerMetrics(
        active=True, fenced_broker_count=2, global_partition_count=7, elections_from_elr=3
    )
    view = NodeView(controller_metrics=metrics.as_dict())
    text = generate_latest(build_registry(lambda: view, 1)).decode()
    assert 'kafka_controller_kafkacontroller_activecontrollercount{node_id="1"} 1.0' in text
    assert 'kafka_controller_kafkacontroller_fencedbrokercount{node_id="1"} 2.0' in text
    assert 'kafka_controller_kafkacontroller_globalpartitioncount{node_id="1"} 7.0' in text
    assert (
        'kafka_controller_controllerstats_electionfromeligibleleaderreplicaspersec{node_id="1"} 3.0' in text
    )
    for type_name, name in PROMETHEUS_NAMES.values():
        assert controller_metric_name(type_name, name) in text


def test_a_node_without_a_controller_exports_no_controller_metrics() -> None:
    text = generate_latest(build_registry(lambda: NodeView(), 1)).decode()
    assert "kafka_controller_" not in text
