"""``kraft metadata-quorum --bootstrap-server`` against a real broker listener (``KafkaServer`` with
``BrokerApis``) whose forwarder is scripted: the tool reaches AddRaftVoter/RemoveRaftVoter through
the broker's ApiVersions, the broker forwards them to the leader it follows, and the leader's answer,
or the broker's REQUEST_TIMED_OUT, is what the tool prints. The tool talks to the broker only."""

from __future__ import annotations

import asyncio
import io
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from kraft.net.broker_apis import BrokerApis, broker_served_apis

from kraft.broker.apis import BrokerApiContext
from kraft.cli import metadata_quorum
from kraft.common.uuids import uuid_to_base64
from kraft.controller.quorum_controller import ControllerRequest, ControllerResponse
from kraft.metadata.image import MetadataImage
from kraft.net.channel import ChannelError
from kraft.net.server import InboundRequest, KafkaServer
from kraft.protocol.api import Api
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import add_raft_voter, remove_raft_voter
from kraft.raft.types import LeaderAndEpoch
from kraft.storage.meta_properties import MetaProperties, write_meta_properties

DIR = uuid.UUID(int=0xABCDEF)
DIR_TEXT = uuid_to_base64(DIR)


class Core:
    node_id = 4

    def __init__(self) -> None:
        self.leader = LeaderAndEpoch(2, 7)

    def image(self) -> MetadataImage:
        return MetadataImage.EMPTY

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return self.leader

    async def submit_controller(self, source: int, request: ControllerRequest) -> ControllerResponse:
        raise AssertionError("not a combined node")


class Leader:
    """The forwarder: plays the raft leader with ``answer(api key, body)`` (a response body or an
    exception), recording what reached it."""

    def __init__(self, answer: Callable[[int, Any], Any]) -> None:
        self.answer = answer
        self.received: list[tuple[int, int, Any]] = []

    async def call(
        self,
        destination: int,
        api: Api,
        build_body: Callable[[int], Any],
        *,
        version: int | None = None,
        timeout_ms: int | None = None,
    ) -> tuple[int, Any]:
        body = build_body(version or 0)
        self.received.append((destination, api.key, body))
        outcome = self.answer(api.key, body)
        if isinstance(outcome, Exception):
            raise outcome
        return version or 0, outcome


class Broker:
    """A broker listener on 127.0.0.1, served from a background event loop."""

    def __init__(self, leader: Leader, request_timeout_ms: int = 30_000) -> None:
        self.core = Core()
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

        async def describe_quorum(_request: InboundRequest) -> Any:
            raise AssertionError("unused")

        async def start() -> tuple[KafkaServer, int]:
            handler = BrokerApis(
                core=self.core,
                forwarder=leader,
                contexts={
                    "PLAINTEXT": BrokerApiContext(node_id=4, cluster_id="c", listener_name="PLAINTEXT")
                },
                describe_quorum=describe_quorum,
                colocated_controller=False,
                request_timeout_ms=request_timeout_ms,
            )
            server = KafkaServer(apis=broker_served_apis(), handler=handler, max_request_bytes=1 << 20)
            return server, await server.listen("PLAINTEXT", "127.0.0.1", 0)

        self.server, self.port = asyncio.run_coroutine_threadsafe(start(), self.loop).result(10)

    def close(self) -> None:
        async def stop() -> None:
            await self.server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


@pytest.fixture
def brokers() -> Iterator[list[Broker]]:
    started: list[Broker] = []
    yield started
    for b in started:
        b.close()


def run(broker: Broker, *args: str, timeout_ms: int = 5_000) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    argv = ["--bootstrap-server", f"127.0.0.1:{broker.port}", "--timeout-ms", str(timeout_ms)]
    argv += ["--request-timeout-ms", "2000", *args]
    code = metadata_quorum.main(argv, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def controller_config(tmp_path: Path) -> Path:
    (tmp_path / "meta").mkdir()
    write_meta_properties(tmp_path / "meta", MetaProperties(cluster_id="c", node_id=5, directory_id=DIR))
    path = tmp_path / "controller.properties"
    path.write_text(
        "process.roles=controller\nnode.id=5\nlisteners=CONTROLLER://127.0.0.1:9097\n"
        f"controller.listener.names=CONTROLLER\nmetadata.log.dir={tmp_path / 'meta'}\n"
    )
    return path


def ok(key: int, _body: Any) -> Any:
    module = add_raft_voter if key == add_raft_voter.API.key else remove_raft_voter
    return module.RESPONSE(error_code=0)


def test_add_controller_through_a_broker_reaches_the_leader_it_follows(
    brokers: list[Broker], tmp_path: Path
) -> None:
    leader = Leader(ok)
    brokers.append(Broker(leader))
    code, out, err = run(brokers[0], "add-controller", "--config", str(controller_config(tmp_path)))
    assert code == 0, err
    assert (
        out == f"Added controller 5 with directory id {DIR_TEXT} and endpoints: CONTROLLER://127.0.0.1:9097\n"
    )
    ((destination, key, body),) = leader.received
    assert (destination, key) == (2, add_raft_voter.API.key)
    assert (body.voter_id, body.voter_directory_id) == (5, DIR)
    assert [(x.name, x.host, x.port) for x in body.listeners] == [("CONTROLLER", "127.0.0.1", 9097)]


def test_remove_controller_through_a_broker_prints_the_leaders_refusal(brokers: list[Broker]) -> None:
    leader = Leader(
        lambda _key, body: remove_raft_voter.RESPONSE(
            error_code=ErrorCode.VOTER_NOT_FOUND, error_message=f"no voter {body.voter_id}"
        )
    )
    brokers.append(Broker(leader))
    code, out, err = run(
        brokers[0], "remove-controller", "--controller-id", "9", "--controller-directory-id", DIR_TEXT
    )
    assert (code, out) == (1, "")
    assert err == "kraft metadata-quorum: RemoveRaftVoter failed: VOTER_NOT_FOUND: no voter 9\n"
    assert [(d, k) for d, k, _ in leader.received] == [(2, remove_raft_voter.API.key)]


def test_an_unreachable_leader_is_the_brokers_request_timed_out(
    brokers: list[Broker], tmp_path: Path
) -> None:
    leader = Leader(lambda _key, _body: ChannelError("connection refused"))
    brokers.append(Broker(leader))
    config = controller_config(tmp_path)
    code, out, err = run(brokers[0], "add-controller", "--config", str(config), timeout_ms=1_000)
    assert (code, out) == (1, "")
    # The broker retried until AddRaftVoter's TimeoutMs, then answered as Kafka's broker does.
    assert "timed out after 1000 ms waiting for AddRaftVoter" in err
    assert f"127.0.0.1:{brokers[0].port}: REQUEST_TIMED_OUT: The request timed out. Broker 4" in err
    assert "node 2, did not answer: connection refused" in err
    assert len(leader.received) >= 2 and {d for d, _, _ in leader.received} == {2}
