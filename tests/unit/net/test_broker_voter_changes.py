"""KIP-853 through a broker: AddRaftVoter and RemoveRaftVoter forwarded to the raft leader (Kafka's
``KafkaApis``: ``forwardToControllerOrFail``), the timeout answer when no leader answers, and the
controllers a broker of a dynamic quorum lists in DescribeCluster."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from broker_fakes import Core, Forwarder
from kraft.net.broker_apis import BrokerApis, broker_served_apis

from kraft.broker.apis import BrokerApiContext
from kraft.common.errors import RemoteProtocolError
from kraft.net.channel import ChannelError
from kraft.net.server import InboundRequest
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.headers import RequestHeader
from kraft.protocol.messages import (
    add_raft_voter,
    describe_cluster,
    remove_raft_voter,
    update_raft_voter,
)
from kraft.raft.types import LeaderAndEpoch

ADD: Any = add_raft_voter.REQUEST.cls
ADD_RESPONSE: Any = add_raft_voter.RESPONSE.cls
REMOVE: Any = remove_raft_voter.REQUEST.cls
REMOVE_RESPONSE: Any = remove_raft_voter.RESPONSE.cls
DIR = uuid.UUID(int=0xD1)


def broker(
    core: Core,
    forwarder: Forwarder,
    *,
    timeout_ms: int = 30_000,
    colocated: bool = False,
    local_raft: Callable[[InboundRequest], Any] | None = None,
    controllers: tuple[tuple[int, str, int, str | None], ...] = (),
) -> BrokerApis:
    async def describe_quorum(_request: InboundRequest) -> Any:
        raise AssertionError("unused")

    return BrokerApis(
        core=core,
        forwarder=forwarder,
        contexts={
            "PLAINTEXT": BrokerApiContext(
                node_id=4, cluster_id="c", listener_name="PLAINTEXT", controllers=controllers
            )
        },
        describe_quorum=describe_quorum,
        colocated_controller=colocated,
        local_raft=local_raft,
        request_timeout_ms=timeout_ms,
    )


def request(module: Any, body: Any, version: int = 0) -> InboundRequest:
    header = RequestHeader(api_key=module.API.key, api_version=version, correlation_id=1, client_id=None)
    return InboundRequest(
        header=header, api=module.API, body=body, connection_id=1, peer="127.0.0.1:1", listener="PLAINTEXT"
    )


def add(timeout_ms: int = 5_000) -> Any:
    return ADD(
        cluster_id=None,
        timeout_ms=timeout_ms,
        voter_id=5,
        voter_directory_id=DIR,
        listeners=[ADD.Listener(name="CONTROLLER", host="127.0.0.1", port=9097)],
    )


def remove(voter_id: int = 3) -> Any:
    return REMOVE(cluster_id=None, voter_id=voter_id, voter_directory_id=DIR)


def answer(cls: Any, code: ErrorCode = ErrorCode.NONE, message: str | None = None) -> Any:
    return cls(throttle_time_ms=0, error_code=int(code), error_message=message)


# -----------------------------------------------------------------------------------------------
# What the broker listener serves


def test_a_broker_advertises_add_and_remove_raft_voter_but_not_update_raft_voter() -> None:
    # Kafka's message specs: AddRaftVoter and RemoveRaftVoter list "controller" and "broker";
    # UpdateRaftVoter only "controller" (a controller sends it about itself).
    served = broker_served_apis()
    assert served[80] is add_raft_voter.API and served[81] is remove_raft_voter.API
    assert update_raft_voter.API.key not in served


def test_update_raft_voter_is_not_served_on_a_broker_listener() -> None:
    body = update_raft_voter.REQUEST.cls(
        cluster_id=None, current_leader_epoch=3, voter_id=1, voter_directory_id=DIR, listeners=[]
    )
    forwarder = Forwarder([])
    with pytest.raises(RemoteProtocolError, match="not served"):
        asyncio.run(broker(Core(), forwarder).handle(request(update_raft_voter, body)))
    assert forwarder.calls == []


# -----------------------------------------------------------------------------------------------
# Forwarding


def test_add_raft_voter_goes_to_the_raft_leader_unchanged_and_its_answer_comes_back() -> None:
    forwarder = Forwarder([answer(ADD_RESPONSE)])
    body = add()
    response = asyncio.run(broker(Core(leader=2), forwarder).handle(request(add_raft_voter, body)))
    assert response.error_code == ErrorCode.NONE
    assert [(dest, key, version) for dest, key, version, _ in forwarder.calls] == [(2, 80, 0)]
    assert forwarder.calls[0][3] is body  # the client's request as it came, cluster id and all


def test_remove_raft_voter_goes_to_the_raft_leader() -> None:
    forwarder = Forwarder([answer(REMOVE_RESPONSE)])
    response = asyncio.run(broker(Core(leader=1), forwarder).handle(request(remove_raft_voter, remove())))
    assert response.error_code == ErrorCode.NONE
    assert [(dest, key) for dest, key, _, _ in forwarder.calls] == [(1, 81)]


def test_a_lost_connection_is_retried_until_the_leader_answers() -> None:
    forwarder = Forwarder([ChannelError("refused"), ChannelError("reset"), answer(REMOVE_RESPONSE)])
    response = asyncio.run(broker(Core(), forwarder).handle(request(remove_raft_voter, remove())))
    assert response.error_code == ErrorCode.NONE
    assert len(forwarder.calls) == 3


def test_a_leader_elected_while_waiting_gets_the_request() -> None:
    core = Core(leader=None)
    forwarder = Forwarder([answer(ADD_RESPONSE)])

    async def scenario() -> Any:
        task = asyncio.ensure_future(broker(core, forwarder).handle(request(add_raft_voter, add())))
        await asyncio.sleep(0.1)
        assert forwarder.calls == []  # nobody to send it to yet
        core.leader = LeaderAndEpoch(3, 4)
        return await task

    assert asyncio.run(scenario()).error_code == ErrorCode.NONE
    assert [dest for dest, *_ in forwarder.calls] == [3]


@pytest.mark.parametrize(
    ("module", "body", "code", "message"),
    [
        (remove_raft_voter, remove(9), ErrorCode.VOTER_NOT_FOUND, "cannot remove voter 9"),
        (add_raft_voter, add(), ErrorCode.DUPLICATE_VOTER, "voter 5 is already a voter"),
        (add_raft_voter, add(), ErrorCode.REQUEST_TIMED_OUT, "observer 5 has not caught up"),
        (add_raft_voter, add(), ErrorCode.INCONSISTENT_CLUSTER_ID, None),
        # A controller that has just lost the leadership: Kafka's broker relays it too (only
        # NOT_CONTROLLER is retried by its channel manager); the admin client finds the leader.
        (remove_raft_voter, remove(), ErrorCode.NOT_LEADER_OR_FOLLOWER, None),
    ],
)
def test_a_controller_refusal_is_relayed_unchanged_and_not_retried(
    module: Any, body: Any, code: ErrorCode, message: str | None
) -> None:
    refusal = answer(module.RESPONSE.cls, code, message)
    forwarder = Forwarder([refusal, answer(module.RESPONSE.cls)])
    response = asyncio.run(broker(Core(), forwarder).handle(request(module, body)))
    assert (response.error_code, response.error_message) == (code, message)
    assert len(forwarder.calls) == 1


def test_no_leader_within_the_requests_timeout_is_request_timed_out_as_kafka_answers() -> None:
    forwarder = Forwarder([])
    started = time.monotonic()
    response = asyncio.run(
        broker(Core(leader=None), forwarder).handle(request(add_raft_voter, add(timeout_ms=300)))
    )
    elapsed = time.monotonic() - started
    assert response.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert response.error_message.startswith("The request timed out.")
    assert "no raft leader is known" in response.error_message
    assert forwarder.calls == []
    assert 0.25 <= elapsed < 10.0  # AddRaftVoter's own TimeoutMs, not the 30 s default


def test_an_unreachable_leader_is_request_timed_out_naming_the_failure() -> None:
    forwarder = Forwarder([])  # every call: ChannelError("connection refused")
    response = asyncio.run(
        broker(Core(leader=2), forwarder, timeout_ms=2_000).handle(request(remove_raft_voter, remove()))
    )
    # RemoveRaftVoter has no TimeoutMs: the broker's request.timeout.ms bounds it.
    assert response.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert "node 2" in response.error_message and "connection refused" in response.error_message
    assert len(forwarder.calls) >= 2 and {dest for dest, *_ in forwarder.calls} == {2}


def test_in_combined_mode_the_local_raft_core_answers_when_this_node_leads() -> None:
    seen: list[InboundRequest] = []

    async def local_raft(req: InboundRequest) -> Any:
        seen.append(req)
        return answer(ADD_RESPONSE)

    core = Core(leader=4)  # this node
    forwarder = Forwarder([])
    handler = broker(core, forwarder, colocated=True, local_raft=local_raft)
    inbound = request(add_raft_voter, add())
    assert asyncio.run(handler.handle(inbound)).error_code == ErrorCode.NONE
    assert seen == [inbound] and forwarder.calls == []

    core.leader = LeaderAndEpoch(1, 4)  # another controller leads: forwarded as usual
    forwarder.outcomes.append(answer(ADD_RESPONSE))
    assert asyncio.run(handler.handle(inbound)).error_code == ErrorCode.NONE
    assert [dest for dest, *_ in forwarder.calls] == [1] and len(seen) == 1


# -----------------------------------------------------------------------------------------------
# The controllers a broker lists (DescribeCluster endpoint type 2)


def describe(handler: BrokerApis, endpoint_type: int) -> Any:
    body = describe_cluster.REQUEST.cls(
        include_cluster_authorized_operations=False, endpoint_type=endpoint_type
    )
    return asyncio.run(handler.handle(request(describe_cluster, body, version=1)))


def test_a_dynamic_quorums_broker_lists_the_voter_set_it_follows_and_the_leader() -> None:
    handler = broker(Core(leader=2), Forwarder([]))
    before = describe(handler, 2)
    assert (before.controller_id, before.brokers) == (-1, [])  # nothing known yet

    handler.update_controllers([(3, "127.0.0.1", 9095, None), (2, "127.0.0.1", 9094, None)])
    after = describe(handler, 2)
    assert after.controller_id == 2
    assert [(b.broker_id, b.host, b.port) for b in after.brokers] == [
        (2, "127.0.0.1", 9094),
        (3, "127.0.0.1", 9095),
    ]

    handler.update_controllers([(3, "127.0.0.1", 9095, None)])  # voter 2 removed
    shrunk = describe(handler, 2)
    assert [b.broker_id for b in shrunk.brokers] == [3]
    assert shrunk.controller_id == -1  # the leader is no longer listed: -1, as Kafka reports it


def test_describe_cluster_for_brokers_is_unchanged_by_the_voter_set() -> None:
    handler = broker(Core(leader=2), Forwarder([]))
    handler.update_controllers([(2, "127.0.0.1", 9094, None)])
    response = describe(handler, 1)
    assert response.endpoint_type == 1 and response.brokers == []  # the image has no brokers
