"""The Prometheus endpoint: the ``kafka.raft`` metrics of ``RaftNode.metrics`` via prometheus_client.

A custom collector reads the ``NodeView`` the driver last published, so a scrape never touches
the core and never waits for a poll. Names follow Kafka's ``raft-metrics`` group with the
``kafka_raft_`` prefix and underscores (``current-epoch`` -> ``kafka_raft_current_epoch``); every
sample carries a ``node_id`` label. ``current-state`` is a labelled gauge: one sample per state, 1
for the current one. docs/metrics.md lists them all.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from kraft.server.driver import NodeView

STATES = ("leader", "candidate", "prospective", "voted", "follower", "observer", "unattached", "resigned")

# metric field -> (exported name, help)
GAUGES: dict[str, tuple[str, str]] = {
    "current_leader": ("kafka_raft_current_leader", "The current quorum leader's id; -1 if unknown"),
    "current_vote": (
        "kafka_raft_current_vote",
        "The id this node voted for in the current epoch; -1 if none",
    ),
    "current_epoch": ("kafka_raft_current_epoch", "The current quorum epoch"),
    "high_watermark": ("kafka_raft_high_watermark", "The high watermark; -1 if unknown"),
    "log_end_offset": ("kafka_raft_log_end_offset", "The log end offset"),
    "log_end_epoch": ("kafka_raft_log_end_epoch", "The epoch of the last log entry"),
    "election_latency_avg": ("kafka_raft_election_latency_avg", "Average ms to elect a leader (windowed)"),
    "election_latency_max": ("kafka_raft_election_latency_max", "Maximum ms to elect a leader (windowed)"),
    "commit_latency_avg": ("kafka_raft_commit_latency_avg", "Average ms from append to commit (windowed)"),
    "commit_latency_max": ("kafka_raft_commit_latency_max", "Maximum ms from append to commit (windowed)"),
    "append_records_rate": ("kafka_raft_append_records_rate", "Records appended per second as leader"),
    "fetch_records_rate": ("kafka_raft_fetch_records_rate", "Records fetched per second as follower"),
    "poll_idle_ratio_avg": (
        "kafka_raft_poll_idle_ratio_avg",
        "Fraction of the raft thread's time spent idle",
    ),
    "number_unknown_voter_connections": (
        "kafka_raft_number_unknown_voter_connections",
        "Voters this node has no connection information for",
    ),
}


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    return None


class RaftCollector(Collector):
    """Exposes the latest ``NodeView``'s metrics."""

    def __init__(self, view: Callable[[], NodeView], node_id: int) -> None:
        self._view = view
        self._node_id = str(node_id)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        view = self._view()
        metrics = view.metrics
        state = str(metrics.get("current_state", view.role)).lower()
        family = GaugeMetricFamily(
            "kafka_raft_current_state",
            "The node's raft state (1 for the current one)",
            labels=["node_id", "state"],
        )
        for name in (*STATES, *(() if state in STATES else (state,))):
            family.add_metric([self._node_id, name], 1.0 if name == state else 0.0)
        yield family
        fallback = {
            "current_leader": -1
            if view.leader_and_epoch.leader_id is None
            else view.leader_and_epoch.leader_id,
            "current_epoch": view.leader_and_epoch.epoch,
            "high_watermark": -1 if view.high_watermark is None else view.high_watermark,
        }
        for field_name, (name, help_text) in GAUGES.items():
            value = _number(metrics.get(field_name, fallback.get(field_name)))
            if value is None:
                continue
            gauge = GaugeMetricFamily(name, help_text, labels=["node_id"])
            gauge.add_metric([self._node_id], value)
            yield gauge


def controller_metric_name(type_name: str, name: str) -> str:
    """``kafka.controller:type=KafkaController,name=ActiveControllerCount`` ->
    ``kafka_controller_kafkacontroller_activecontrollercount`` (the JMX exporter's lower-case form)."""
    return f"kafka_controller_{type_name.lower()}_{name.lower()}"


class ControllerCollector(Collector):
    """Exposes the quorum controller's metrics (spec 9) under Kafka's MBean names."""

    def __init__(
        self, view: Callable[[], NodeView], node_id: int, wall_ms: Callable[[], float] | None = None
    ) -> None:
        self._view = view
        self._node_id = str(node_id)
        self._wall_ms = wall_ms if wall_ms is not None else lambda: time.time() * 1000

    def collect(self) -> Iterator[Metric]:
        from kraft.controller.metrics import LAG_NAME, PROMETHEUS_NAMES, QUEUE_TIME_NAME

        view = self._view()
        metrics = view.controller_metrics
        if not metrics:
            return
        applied_ms = metrics.get("last_applied_timestamp_ms", -1)
        if applied_ms >= 0:
            lag = GaugeMetricFamily(
                controller_metric_name(*LAG_NAME),
                "kafka.controller:type={},name={}".format(*LAG_NAME),
                labels=["node_id"],
            )
            lag.add_metric([self._node_id], max(0.0, self._wall_ms() - applied_ms))
            yield lag
        histogram = view.controller_queue_time
        if histogram is not None:
            family = HistogramMetricFamily(
                controller_metric_name(*QUEUE_TIME_NAME),
                "kafka.controller:type={},name={} (ms)".format(*QUEUE_TIME_NAME),
                labels=["node_id"],
            )
            cumulative, buckets = 0, []
            for bound, count in zip((*histogram.bounds, float("inf")), histogram.counts):
                cumulative += count
                buckets.append(("+Inf" if bound == float("inf") else str(bound), float(cumulative)))
            family.add_metric([self._node_id], buckets, float(histogram.total))
            yield family
        yield from _gauges(
            metrics, PROMETHEUS_NAMES, controller_metric_name, "kafka.controller", self._node_id
        )


def broker_metric_name(type_name: str, name: str) -> str:
    """``kafka.server:type=KafkaServer,name=BrokerState`` -> ``kafka_server_kafkaserver_brokerstate``
    (the JMX exporter's lower-case form; dashes become underscores)."""
    return f"kafka_server_{type_name.lower()}_{name.lower()}".replace("-", "_")


class BrokerCollector(Collector):
    """Exposes the broker's metrics under Kafka's MBean names (``kraft.broker.metrics``)."""

    def __init__(self, view: Callable[[], NodeView], node_id: int) -> None:
        self._view = view
        self._node_id = str(node_id)

    def collect(self) -> Iterator[Metric]:
        from kraft.broker.metrics import PROMETHEUS_NAMES

        metrics = self._view().broker_metrics
        yield from _gauges(metrics, PROMETHEUS_NAMES, broker_metric_name, "kafka.server", self._node_id)


def _gauges(
    metrics: Mapping[str, float],
    names: Mapping[str, tuple[str, str]],
    metric_name: Callable[[str, str], str],
    domain: str,
    node_id: str,
) -> Iterator[Metric]:
    """One gauge per field of ``metrics`` that ``names`` maps to an MBean ``(type, name)`` in
    ``domain``, named ``metric_name(type, name)``; a field without a value is left out."""
    for field_name, (type_name, name) in names.items():
        value = metrics.get(field_name)
        if value is None:
            continue
        gauge = GaugeMetricFamily(
            metric_name(type_name, name), f"{domain}:type={type_name},name={name}", labels=["node_id"]
        )
        gauge.add_metric([node_id], float(value))
        yield gauge


def build_registry(view: Callable[[], NodeView], node_id: int) -> CollectorRegistry:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RaftCollector(view, node_id))
    registry.register(ControllerCollector(view, node_id))
    registry.register(BrokerCollector(view, node_id))
    return registry


def start_metrics_server(view: Callable[[], NodeView], host: str, port: int, *, node_id: int) -> Any:
    """Serve ``/metrics`` on host:port in a daemon thread; returns the HTTP server (``shutdown()``)."""
    server, _thread = start_http_server(port, addr=host, registry=build_registry(view, node_id))
    return server
