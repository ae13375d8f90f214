"""``kraft metadata-quorum --bootstrap-server`` against a real broker listener: a broker-only ``Node``
(``served_node``: ``KafkaServer`` -> gateway -> ``LoopDriver``) following leader 2, whose controller
requests are answered by a scripted leader. The tool reaches AddRaftVoter/RemoveRaftVoter through the
broker's ApiVersions, the broker forwards them to the leader it follows, and the leader's answer, or
the broker's REQUEST_TIMED_OUT, is what the tool prints. The tool talks to the broker only."""

from __future__ import annotations

import io
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from served_node import BROKER_LISTENER, CONTROLLER_LISTENER, ServedNode, directory

from kraft.broker.lifecycle import LifecycleConfig, Listener
from kraft.cli import metadata_quorum
from kraft.common.uuids import uuid_to_base64
from kraft.controller.features import SUPPORTED_FEATURES
from kraft.node.build import BrokerConfig, NodeConfig
from kraft.protocol.envelope import ApiRequest, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import add_raft_voter, remove_raft_voter
from kraft.raft.messages import AddRaftVoterResponse, RemoveRaftVoterResponse
from kraft.raft.node import QuorumConfig
from kraft.raft.store import ElectionState, MemoryElectionStore
from kraft.raft.types import Endpoint
from kraft.storage.meta_properties import MetaProperties, write_meta_properties

pytestmark = pytest.mark.timeout(60)

DIR = uuid.UUID(int=0xABCDEF)
DIR_TEXT = uuid_to_base64(DIR)


class Leader:
    """Plays the raft leader (node 2) with ``answer(api key, body)``: a response body, or None (the
    broker's call failed); records the voter changes that reached it. Other controller requests (the
    broker's registration) are never answered."""

    def __init__(self, answer: Callable[[int, Any], Any]) -> None:
        self.answer = answer
        self.received: list[tuple[int, int, Any]] = []

    def __call__(self, envelope: ControllerEnvelope) -> Any:
        request = envelope.body
        assert isinstance(request, ApiRequest)
        if request.api not in (add_raft_voter.API, remove_raft_voter.API):
            return None
        self.received.append((envelope.destination, request.api.key, request.body))
        return self.answer(request.api.key, request.body)


def broker_config(ports: dict[str, int], request_timeout_ms: int = 30_000) -> NodeConfig:
    lifecycle = LifecycleConfig(
        node_id=4,
        cluster_id="c",
        incarnation_id=uuid.UUID(int=4),
        listeners=(Listener(name=BROKER_LISTENER, host="127.0.0.1", port=ports[BROKER_LISTENER]),),
        supported_features=dict(SUPPORTED_FEATURES),
        rack=None,
        log_dirs=(directory(44),),
    )
    return NodeConfig(
        node_id=4,
        cluster_id="c",
        directory_id=directory(4),
        quorum=QuorumConfig(
            voters={n: (Endpoint(CONTROLLER_LISTENER, "127.0.0.1", 1000 + n),) for n in (1, 2, 3)},
            fetch_timeout_ms=600_000,  # it never hears from leader 2: keep following it
        ),
        raft_listener_name=CONTROLLER_LISTENER,
        broker=BrokerConfig(
            lifecycle=lifecycle, client_listeners=(BROKER_LISTENER,), request_timeout_ms=request_timeout_ms
        ),
    )


class Broker:
    """Broker 4 on 127.0.0.1, following leader 2 (epoch 7)."""

    def __init__(self, leader: Leader, request_timeout_ms: int = 30_000) -> None:
        self.served = ServedNode(
            lambda ports: broker_config(ports, request_timeout_ms),
            controller_listener=False,
            broker_listener=True,
            store=MemoryElectionStore(ElectionState(7, leader_id=2)),
            controller_peer=leader,
        )
        self.port = self.served.ports[BROKER_LISTENER]

    def close(self) -> None:
        self.served.close()


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
    return AddRaftVoterResponse() if key == add_raft_voter.API.key else RemoveRaftVoterResponse()


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
    assert (body.voter_key.id, body.voter_key.directory_id) == (5, DIR)
    assert [(x.name, x.host, x.port) for x in body.listeners] == [("CONTROLLER", "127.0.0.1", 9097)]


def test_remove_controller_through_a_broker_prints_the_leaders_refusal(brokers: list[Broker]) -> None:
    leader = Leader(
        lambda _key, body: RemoveRaftVoterResponse(
            error_code=ErrorCode.VOTER_NOT_FOUND, error_message=f"no voter {body.voter_key.id}"
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
    leader = Leader(lambda _key, _body: None)  # every call fails
    brokers.append(Broker(leader))
    config = controller_config(tmp_path)
    code, out, err = run(brokers[0], "add-controller", "--config", str(config), timeout_ms=1_000)
    assert (code, out) == (1, "")
    # The broker retried until AddRaftVoter's TimeoutMs, then answered as Kafka's broker does.
    assert "timed out after 1000 ms waiting for AddRaftVoter" in err
    assert f"127.0.0.1:{brokers[0].port}: REQUEST_TIMED_OUT: The request timed out. Broker 4" in err
    assert "the active controller, node 2, did not answer" in err
    assert len(leader.received) >= 2 and {d for d, _, _ in leader.received} == {2}
