"""The broker listener's forwarding: retries inside the broker, timeouts, read-your-writes."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from broker_fakes import Core, Forwarder
from kraft.net.broker_apis import BrokerApis

from kraft.broker.apis import BrokerApiContext
from kraft.metadata.image import MetadataImage, TopicImage
from kraft.net.channel import ChannelError
from kraft.net.server import InboundRequest
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.headers import RequestHeader
from kraft.protocol.messages import create_topics, incremental_alter_configs
from kraft.raft.types import LeaderAndEpoch

CT: Any = create_topics.REQUEST.cls
CT_RESPONSE: Any = create_topics.RESPONSE.cls


def apis(core: Core, forwarder: Forwarder, timeout_ms: int = 30_000) -> BrokerApis:
    async def describe_quorum(_request: InboundRequest) -> Any:
        raise AssertionError("unused")

    return BrokerApis(
        core=core,
        forwarder=forwarder,
        contexts={"PLAINTEXT": BrokerApiContext(node_id=4, cluster_id="c", listener_name="PLAINTEXT")},
        describe_quorum=describe_quorum,
        colocated_controller=False,
        request_timeout_ms=timeout_ms,
    )


def request(api: Any, version: int, body: Any) -> InboundRequest:
    header = RequestHeader(api_key=api.API.key, api_version=version, correlation_id=1, client_id=None)
    return InboundRequest(
        header=header, api=api.API, body=body, connection_id=1, peer="127.0.0.1:1", listener="PLAINTEXT"
    )


def create(name: str, timeout_ms: int = 5_000) -> Any:
    return CT(
        topics=[CT.CreatableTopic(name=name, num_partitions=1, replication_factor=1)], timeout_ms=timeout_ms
    )


def created(name: str, code: int = 0) -> Any:
    return CT_RESPONSE(
        throttle_time_ms=0, topics=[CT_RESPONSE.CreatableTopicResult(name=name, error_code=code)]
    )


def with_topic(name: str) -> MetadataImage:
    return MetadataImage(topics=[TopicImage(name=name, id=uuid.UUID(int=7), partitions={})])


def test_not_controller_and_lost_connections_are_retried_at_the_clients_version() -> None:
    core = Core()
    core.current = with_topic("t")
    forwarder = Forwarder(
        [ChannelError("refused"), created("t", int(ErrorCode.NOT_CONTROLLER)), created("t")]
    )
    response = asyncio.run(apis(core, forwarder).handle(request(create_topics, 4, create("t"))))
    assert [t.error_code for t in response.topics] == [0]
    assert [(dest, version) for dest, _, version, _ in forwarder.calls] == [(1, 4), (1, 4), (1, 4)]


def test_no_answer_within_the_request_timeout_is_request_timed_out_per_topic() -> None:
    core = Core()
    core.leader = LeaderAndEpoch(None, 3)  # no leader known the whole time
    response = asyncio.run(apis(core, Forwarder([])).handle(request(create_topics, 7, create("t", 300))))
    assert [(t.name, t.error_code) for t in response.topics] == [("t", ErrorCode.REQUEST_TIMED_OUT)]


def test_a_created_topic_is_answered_only_once_this_brokers_image_has_it() -> None:
    core = Core()

    async def scenario() -> tuple[Any, bool]:
        handler = apis(core, Forwarder([created("t")]))
        task = asyncio.ensure_future(handler.handle(request(create_topics, 7, create("t"))))
        await asyncio.sleep(0.05)
        waited = not task.done()  # the controller answered, but this broker has not replayed it yet
        core.current = with_topic("t")
        return await task, waited

    response, waited = asyncio.run(scenario())
    assert waited and response.topics[0].error_code == 0


def test_a_config_change_is_answered_once_the_image_shows_the_value() -> None:
    core = Core()
    cls: Any = incremental_alter_configs.REQUEST.cls
    body = cls(
        resources=[
            cls.AlterConfigsResource(
                resource_type=2,
                resource_name="t",
                configs=[
                    cls.AlterConfigsResource.AlterableConfig(
                        name="min.insync.replicas", config_operation=0, value="2"
                    )
                ],
            )
        ],
        validate_only=False,
    )
    rcls: Any = incremental_alter_configs.RESPONSE.cls
    answer = rcls(
        throttle_time_ms=0,
        responses=[
            rcls.AlterConfigsResourceResponse(
                error_code=0, error_message=None, resource_type=2, resource_name="t"
            )
        ],
    )

    async def scenario() -> bool:
        task = asyncio.ensure_future(
            apis(core, Forwarder([answer])).handle(request(incremental_alter_configs, 1, body))
        )
        await asyncio.sleep(0.05)
        waited = not task.done()
        core.current = MetadataImage(configs={(2, "t"): {"min.insync.replicas": "2"}})
        await task
        return waited

    assert asyncio.run(scenario())
