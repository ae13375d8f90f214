"""Controller metrics reach the Prometheus endpoint under Kafka's MBean names."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from kraft.controller.metrics import PROMETHEUS_NAMES, ControllerMetrics
from kraft.server.driver import NodeView
from kraft.server.metrics import ControllerCollector, build_registry, controller_metric_name


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


def test_queue_time_is_a_histogram_and_the_applied_lag_comes_from_the_wall_clock() -> None:
    metrics = ControllerMetrics(last_applied_timestamp_ms=10_000)
    for ms in (0, 3, 3, 40, 20_000):
        metrics.record_queue_time(ms)
    histogram = metrics.queue_time_histogram()
    view = NodeView(controller_metrics=metrics.as_dict(), controller_queue_time=histogram)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(ControllerCollector(lambda: view, 1, wall_ms=lambda: 12_500.0))
    text = generate_latest(registry).decode()
    name = "kafka_controller_controllereventmanager_eventqueuetimems"
    assert f'{name}_bucket{{le="1",node_id="1"}} 1.0' in text
    assert f'{name}_bucket{{le="5",node_id="1"}} 3.0' in text
    assert f'{name}_bucket{{le="50",node_id="1"}} 4.0' in text
    assert f'{name}_bucket{{le="10000",node_id="1"}} 4.0' in text
    assert f'{name}_bucket{{le="+Inf",node_id="1"}} 5.0' in text
    assert f'{name}_count{{node_id="1"}} 5.0' in text
    assert f'{name}_sum{{node_id="1"}} 20046.0' in text
    assert 'kafka_controller_kafkacontroller_lastappliedrecordlagms{node_id="1"} 2500.0' in text


def test_a_node_without_a_controller_exports_no_controller_metrics() -> None:
    text = generate_latest(build_registry(lambda: NodeView(), 1)).decode()
    assert "kafka_controller_" not in text


def test_broker_metrics_are_exported_with_kafka_names() -> None:
    from kraft.broker.metrics import PROMETHEUS_NAMES as BROKER_NAMES
    from kraft.server.metrics import broker_metric_name

    values = {field: float(i) for i, field in enumerate(BROKER_NAMES)}
    text = generate_latest(build_registry(lambda: NodeView(broker_metrics=values), 7)).decode()
    state = values["broker_state"]
    assert f'kafka_server_kafkaserver_brokerstate{{node_id="7"}} {state}' in text
    offset = values["last_applied_offset"]
    assert f'kafka_server_broker_metadata_metrics_last_applied_record_offset{{node_id="7"}} {offset}' in text
    for type_name, name in BROKER_NAMES.values():
        assert broker_metric_name(type_name, name) in text
