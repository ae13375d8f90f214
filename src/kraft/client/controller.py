"""A blocking client of the controller APIs over the real wire: finds the active controller,
retries NOT_CONTROLLER and lost connections within a deadline, and speaks as a broker would
(BrokerRegistration, BrokerHeartbeat, AlterPartition) or as an admin client (CreateTopics,
DeleteTopics, IncrementalAlterConfigs, ElectLeaders, UpdateFeatures, DescribeConfigs).

Used by the process-level tests (a *scripted broker*), the benchmarks and the tools. It is not a
broker: it keeps no metadata of its own. The connection and its version negotiation are
``kraft.client.connection``'s.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from typing import Any

from kraft.client.connection import Address, AdminError, Connection, RetriableError
from kraft.protocol.api import Api
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    alter_partition,
    broker_heartbeat,
    broker_registration,
    create_topics,
    delete_topics,
    describe_configs,
    elect_leaders,
    incremental_alter_configs,
)

# Top-level or per-row error codes that mean "ask the active controller instead".
_NOT_CONTROLLER = int(ErrorCode.NOT_CONTROLLER)


def _not_controller(response: Any) -> bool:
    if getattr(response, "error_code", 0) == _NOT_CONTROLLER:
        return True
    for rows in ("topics", "responses", "results"):
        for row in getattr(response, rows, None) or ():
            if getattr(row, "error_code", 0) == _NOT_CONTROLLER:
                return True
    return False


class ControllerClient:
    """Sends controller requests to whichever of ``controllers`` is active (see ``call``); one
    connection at a time, kept until it fails or answers NOT_CONTROLLER. Use as a context manager,
    or call ``close``."""

    def __init__(
        self, controllers: Sequence[Address], *, timeout_s: float = 10.0, client_id: str = "kraft-ctl"
    ) -> None:
        self.controllers = list(controllers)
        self.timeout_s = timeout_s
        self.client_id = client_id
        self._conn: Connection | None = None
        self._index = 0

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> ControllerClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, api: Api, body: Any, *, version: int | None = None, timeout_s: float | None = None) -> Any:
        """Send ``body`` to the active controller (trying each in turn), at the highest version both
        sides speak (or ``version``); returns the response body.

        Raises:
            AdminError: no controller answered without NOT_CONTROLLER before the deadline.
        """
        deadline = time.monotonic() + (timeout_s if timeout_s is not None else self.timeout_s)
        last = "no attempt"
        while time.monotonic() < deadline:
            conn = self._connection(deadline)
            if conn is None:
                last = "no controller accepts connections"
                time.sleep(0.05)
                continue
            v = version if version is not None else conn.version_or_raise(api)
            try:
                response = conn.send(api, v, body)
            except RetriableError as e:
                last = f"{conn.address}: {e}"
                self.close()
                self._index += 1
                continue
            if _not_controller(response):
                last = f"{conn.address} is not the active controller"
                self.close()
                self._index += 1
                time.sleep(0.02)
                continue
            return response
        raise AdminError(f"{api.name}: no active controller answered within the deadline ({last})")

    def _connection(self, deadline: float) -> Connection | None:
        if self._conn is not None:
            return self._conn
        for _ in range(len(self.controllers)):
            address = self.controllers[self._index % len(self.controllers)]
            try:
                self._conn = Connection(
                    address, max(0.1, min(2.0, deadline - time.monotonic())), self.client_id
                )
                return self._conn
            except (RetriableError, AdminError):
                self._index += 1
        return None

    # ------------------------------------------------------------------------------ broker side

    def register_broker(
        self,
        broker_id: int,
        cluster_id: str,
        *,
        incarnation_id: uuid.UUID,
        log_dir: uuid.UUID,
        port: int = 9092,
        rack: str | None = None,
        previous_broker_epoch: int = -1,
    ) -> Any:
        cls: Any = broker_registration.REQUEST.cls
        body = cls(
            broker_id=broker_id,
            cluster_id=cluster_id,
            incarnation_id=incarnation_id,
            listeners=[cls.Listener(name="PLAINTEXT", host="127.0.0.1", port=port, security_protocol=0)],
            features=[
                cls.Feature(name="metadata.version", min_supported_version=1, max_supported_version=25),
                cls.Feature(
                    name="eligible.leader.replicas.version", min_supported_version=0, max_supported_version=1
                ),
            ],
            rack=rack,
            log_dirs=[log_dir],
            previous_broker_epoch=previous_broker_epoch,
        )
        return self.call(broker_registration.API, body)

    def heartbeat(
        self,
        broker_id: int,
        epoch: int,
        offset: int,
        *,
        want_fence: bool = False,
        want_shut_down: bool = False,
    ) -> Any:
        body = broker_heartbeat.REQUEST.cls(
            broker_id=broker_id,
            broker_epoch=epoch,
            current_metadata_offset=offset,
            want_fence=want_fence,
            want_shut_down=want_shut_down,
        )
        return self.call(broker_heartbeat.API, body)

    def alter_partition(
        self,
        broker_id: int,
        epoch: int,
        topic_id: uuid.UUID,
        partition: int,
        new_isr: list[int],
        *,
        leader_epoch: int,
        partition_epoch: int,
    ) -> Any:
        cls: Any = alter_partition.REQUEST.cls
        p = cls.TopicData.PartitionData(
            partition_index=partition,
            leader_epoch=leader_epoch,
            partition_epoch=partition_epoch,
            new_isr_with_epochs=[
                cls.TopicData.PartitionData.BrokerState(broker_id=b, broker_epoch=-1) for b in new_isr
            ],
        )
        return self.call(
            alter_partition.API,
            cls(
                broker_id=broker_id,
                broker_epoch=epoch,
                topics=[cls.TopicData(topic_id=topic_id, partitions=[p])],
            ),
        )

    # ------------------------------------------------------------------------------ admin side

    def create_topics(
        self,
        topics: Sequence[tuple[str, int, int, dict[str, str]]],
        *,
        validate_only: bool = False,
        timeout_s: float | None = None,
    ) -> Any:
        cls: Any = create_topics.REQUEST.cls
        body = cls(
            topics=[
                cls.CreatableTopic(
                    name=n,
                    num_partitions=p,
                    replication_factor=rf,
                    assignments=[],
                    configs=[
                        cls.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()
                    ],
                )
                for n, p, rf, configs in topics
            ],
            timeout_ms=30_000,
            validate_only=validate_only,
        )
        return self.call(create_topics.API, body, timeout_s=timeout_s)

    def delete_topics(self, names: Sequence[str]) -> Any:
        body = delete_topics.REQUEST.cls(topic_names=list(names), timeout_ms=30_000)
        return self.call(delete_topics.API, body, version=5)

    def set_topic_config(self, topic: str, key: str, value: str | None) -> Any:
        cls: Any = incremental_alter_configs.REQUEST.cls
        body = cls(
            resources=[
                cls.AlterConfigsResource(
                    resource_type=2,
                    resource_name=topic,
                    configs=[
                        cls.AlterConfigsResource.AlterableConfig(
                            name=key, config_operation=0 if value is not None else 1, value=value
                        )
                    ],
                )
            ],
            validate_only=False,
        )
        return self.call(incremental_alter_configs.API, body)

    def elect_preferred(self, topic: str, partitions: list[int]) -> Any:
        cls: Any = elect_leaders.REQUEST.cls
        body = cls(
            election_type=0,
            topic_partitions=[cls.TopicPartitions(topic=topic, partitions=partitions)],
            timeout_ms=30_000,
        )
        return self.call(elect_leaders.API, body)

    def describe_topic_configs(self, topic: str) -> Any:
        cls: Any = describe_configs.REQUEST.cls
        body = cls(
            resources=[
                cls.DescribeConfigsResource(resource_type=2, resource_name=topic, configuration_keys=None)
            ]
        )
        return self.call(describe_configs.API, body)
