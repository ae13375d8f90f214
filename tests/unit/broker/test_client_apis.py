"""``ClientApis``: a broker listener's request handling inside the sans-IO core, on virtual time.

The controller is scripted: each request the broker forwards (a ``ControllerEnvelope`` out of
``drain``) is answered with the next scripted outcome, a response body, ``LOST`` (an ``ApiResponse``
with body None: the shell could not deliver it or the connection failed) or ``SILENT`` (no answer at
all). Time moves one millisecond per ``poll``, so every retry and deadline is observed exactly when
it happens. Images reach the broker as ``publish(delta, image)``, as its loader publishes them.
"""

from __future__ import annotations

import itertools
import uuid
from typing import Any

import pytest

from kraft.broker.apis import BrokerApiContext, ControllerEndpoint
from kraft.broker.client_apis import REQUEST_TIMED_OUT_MESSAGE, ClientApis
from kraft.common.errors import KraftError
from kraft.metadata.image import MetadataDelta, MetadataImage, TopicImage
from kraft.metadata.partition import PartitionRegistration
from kraft.protocol.envelope import ApiRequest, ApiResponse, ClientEnvelope, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    add_raft_voter,
    create_partitions,
    create_topics,
    delete_topics,
    describe_cluster,
    describe_quorum,
    incremental_alter_configs,
    metadata,
    remove_raft_voter,
    update_raft_voter,
)
from kraft.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UpdateRaftVoterRequest,
)
from kraft.raft.types import Endpoint, LeaderAndEpoch, ReplicaKey

BROKER_ID = 4
CLIENT = -2_000_001
LISTENER = "PLAINTEXT"
DIR = uuid.UUID(int=0xD1)

CT: Any = create_topics.REQUEST.cls
CT_RESPONSE: Any = create_topics.RESPONSE.cls
DT: Any = delete_topics.REQUEST.cls
DT_RESPONSE: Any = delete_topics.RESPONSE.cls
CP: Any = create_partitions.REQUEST.cls
CP_RESPONSE: Any = create_partitions.RESPONSE.cls
IAC: Any = incremental_alter_configs.REQUEST.cls
IAC_RESPONSE: Any = incremental_alter_configs.RESPONSE.cls
MD: Any = metadata.REQUEST.cls
DC: Any = describe_cluster.REQUEST.cls

LOST = None  # the controller's answer never came back: the shell delivers body None
SILENT = object()  # no answer at all (not even a failure) until the deadline


class Broker:
    """A ``ClientApis`` of broker 4 on virtual time, with a scripted controller behind it.

    ``outcomes`` answer the forwarded requests in order (once they run out: ``LOST``). ``sent``
    records (time, envelope) of every controller request; ``answers`` the client answers by
    correlation id as (time, body).
    """

    def __init__(
        self,
        outcomes: list[Any] | None = None,
        *,
        leader: int | None = 1,
        timeout_ms: int = 30_000,
        controllers: tuple[ControllerEndpoint, ...] = (),
        static_configs: dict[str, str] | None = None,
    ) -> None:
        ids = itertools.count(1)
        context = BrokerApiContext(
            node_id=BROKER_ID,
            cluster_id="c",
            listener_name=LISTENER,
            controllers=controllers,
            static_configs=static_configs or {},
        )
        self.apis = ClientApis(
            node_id=BROKER_ID,
            contexts={LISTENER: context},
            request_timeout_ms=timeout_ms,
            next_correlation_id=ids.__next__,
        )
        self.outcomes = list(outcomes or [])
        self.leader = LeaderAndEpoch(leader, 3)
        self.now_ms = 0
        self.image = MetadataImage.EMPTY
        self.sent: list[tuple[int, ControllerEnvelope]] = []
        self.answers: dict[int, tuple[int, Any]] = {}
        self.wake_at_ms: int | None = None
        self._next_cid = 100

    # -- driving -----------------------------------------------------------------------------------

    def request(self, module: Any, version: int, body: Any) -> int:
        self._next_cid += 1
        cid = self._next_cid
        envelope = ClientEnvelope(CLIENT, BROKER_ID, cid, LISTENER, ApiRequest(module.API, version, body))
        self.apis.handle(envelope, self.now_ms, self.leader)
        self._collect()
        return cid

    def advance(self, ms: int) -> None:
        """Poll once per millisecond for ``ms`` milliseconds."""
        for _ in range(ms):
            self.now_ms += 1
            self.wake_at_ms = self.apis.poll(self.now_ms, self.leader)
            self._collect()

    def publish(self, image: MetadataImage) -> None:
        self.apis.publish(MetadataDelta(self.image), image)
        self.image = image
        self._collect()

    def _collect(self) -> None:
        for envelope in self.apis.drain():
            if isinstance(envelope, ClientEnvelope):
                assert envelope.destination == CLIENT and envelope.listener == LISTENER
                assert isinstance(envelope.body, ApiResponse)
                assert envelope.correlation_id not in self.answers, "answered twice"
                self.answers[envelope.correlation_id] = (self.now_ms, envelope.body.body)
                continue
            assert envelope.is_request and envelope.source == BROKER_ID
            self.sent.append((self.now_ms, envelope))
            outcome = self.outcomes.pop(0) if self.outcomes else LOST
            if outcome is not SILENT:
                assert self.apis.handle_answer(envelope.reply(outcome), self.now_ms)
                self._collect()

    # -- reading -----------------------------------------------------------------------------------

    def answer(self, cid: int) -> Any:
        assert cid in self.answers, f"request {cid} is not answered at {self.now_ms} ms"
        return self.answers[cid][1]

    def answered_at(self, cid: int) -> int:
        return self.answers[cid][0]

    def sends(self) -> list[tuple[int, int, int, int]]:
        """(time, destination, api key, version) of each forwarded request."""
        out = []
        for at, envelope in self.sent:
            request = envelope.body
            assert isinstance(request, ApiRequest)
            out.append((at, envelope.destination, request.api.key, request.version))
        return out

    def sent_bodies(self) -> list[Any]:
        bodies = []
        for _, envelope in self.sent:
            assert isinstance(envelope.body, ApiRequest)
            bodies.append(envelope.body.body)
        return bodies


# -------------------------------------------------------------------------------------------------
# Builders


def create(*names: str, timeout_ms: int = 5_000, validate_only: bool = False) -> Any:
    return CT(
        topics=[CT.CreatableTopic(name=n, num_partitions=1, replication_factor=1) for n in names],
        timeout_ms=timeout_ms,
        validate_only=validate_only,
    )


def created(*names: str, code: int = 0) -> Any:
    return CT_RESPONSE(
        throttle_time_ms=0,
        topics=[CT_RESPONSE.CreatableTopicResult(name=n, error_code=code) for n in names],
    )


def tid(name: str) -> uuid.UUID:
    return uuid.UUID(int=sum(name.encode()) + 7)


def with_topics(
    *names: str, partitions: int = 1, configs: dict[tuple[int, str], dict[str, str]] | None = None
) -> MetadataImage:
    part = PartitionRegistration(replicas=(1,), directories=(), isr=(1,), leader=1, leader_epoch=0)
    return MetadataImage(
        topics=[
            TopicImage(name=n, id=tid(n), partitions=dict.fromkeys(range(partitions), part)) for n in names
        ],
        configs=configs,
    )


def set_config(topic: str, name: str, value: str) -> Any:
    return IAC(
        resources=[
            IAC.AlterConfigsResource(
                resource_type=2,
                resource_name=topic,
                configs=[
                    IAC.AlterConfigsResource.AlterableConfig(name=name, config_operation=0, value=value)
                ],
            )
        ],
        validate_only=False,
    )


def altered(topic: str) -> Any:
    return IAC_RESPONSE(
        throttle_time_ms=0,
        responses=[
            IAC_RESPONSE.AlterConfigsResourceResponse(
                error_code=0, error_message=None, resource_type=2, resource_name=topic
            )
        ],
    )


def add_voter(timeout_ms: int = 5_000) -> AddRaftVoterRequest:
    return AddRaftVoterRequest(
        cluster_id=None,
        timeout_ms=timeout_ms,
        voter_key=ReplicaKey(5, DIR),
        listeners=(Endpoint("CONTROLLER", "127.0.0.1", 9097),),
    )


def remove_voter(voter_id: int = 3) -> RemoveRaftVoterRequest:
    return RemoveRaftVoterRequest(cluster_id=None, voter_key=ReplicaKey(voter_id, DIR))


# -------------------------------------------------------------------------------------------------
# Admin writes: forwarding, retries, deadlines


def test_not_controller_and_lost_connections_are_retried_at_the_clients_version() -> None:
    broker = Broker([LOST, created("t", code=ErrorCode.NOT_CONTROLLER), created("t")])
    broker.publish(with_topics("t"))  # already visible: nothing to wait for after the answer
    body = create("t")
    cid = broker.request(create_topics, 4, body)
    broker.advance(1_000)
    assert [t.error_code for t in broker.answer(cid).topics] == [ErrorCode.NONE]
    # Backing off 50 ms, then 100 ms; always to the leader, at the client's version, its body as sent.
    assert broker.sends() == [(0, 1, create_topics.API.key, 4), (50, 1, 19, 4), (150, 1, 19, 4)]
    assert all(b is body for b in broker.sent_bodies())
    assert broker.answered_at(cid) == 150


def test_retries_back_off_from_50_ms_doubling_to_500_ms_until_the_deadline() -> None:
    broker = Broker()  # every attempt: LOST
    cid = broker.request(create_topics, 7, create("a", "b", timeout_ms=3_000))
    assert [at for at, *_ in broker.sends()] == [0]
    broker.advance(1)
    assert broker.wake_at_ms == 50  # the node is told when to come back
    broker.advance(2_998)
    assert cid not in broker.answers
    broker.advance(1)
    assert [at for at, *_ in broker.sends()] == [0, 50, 150, 350, 750, 1250, 1750, 2250, 2750]
    assert broker.answered_at(cid) == 3_000
    assert [(t.name, t.error_code) for t in broker.answer(cid).topics] == [
        ("a", ErrorCode.REQUEST_TIMED_OUT),
        ("b", ErrorCode.REQUEST_TIMED_OUT),
    ]
    assert broker.apis.waiting == 0


def test_each_attempt_tells_the_shell_to_wait_for_what_is_left_of_the_clients_timeout() -> None:
    # Not the controller channel's shorter default: a shell that gave up on a slow CreateTopics
    # would have it retried, and the retry would answer TOPIC_ALREADY_EXISTS for its own topic.
    broker = Broker([LOST, SILENT])
    broker.request(create_topics, 7, create("t", timeout_ms=3_000))
    broker.advance(100)
    assert [(at, e.timeout_ms) for at, e in broker.sent] == [(0, 3_000), (50, 2_950)]
    broker = Broker([SILENT], timeout_ms=1_200)  # no TimeoutMs in the request: the configured one
    broker.request(create_topics, 7, create("t", timeout_ms=0))
    assert [e.timeout_ms for _, e in broker.sent] == [1_200]


def test_a_request_in_flight_when_the_leader_moves_goes_to_the_new_leader() -> None:
    # Node 1 never answers (paused, or deposed): once node 2 leads, the request goes there, instead
    # of waiting out the client's timeout on node 1.
    broker = Broker([SILENT, created("t")], leader=1)
    broker.publish(with_topics("t"))
    cid = broker.request(create_topics, 7, create("t", timeout_ms=30_000))
    broker.advance(1_000)
    broker.leader = LeaderAndEpoch(None, 4)  # an election: no leader known, keep waiting for node 1
    broker.advance(500)
    assert [dest for _, dest, _, _ in broker.sends()] == [1] and cid not in broker.answers
    broker.leader = LeaderAndEpoch(2, 4)
    broker.advance(100)
    assert [(at, dest) for at, dest, _, _ in broker.sends()] == [(0, 1), (1_551, 2)]  # seen at 1,501 + 50 ms
    assert [t.error_code for t in broker.answer(cid).topics] == [ErrorCode.NONE]
    assert broker.answered_at(cid) == 1_551
    # Node 1's answer, arriving after all, is nobody's now: not taken, not answered twice.
    first = broker.sent[0][1]
    assert not broker.apis.handle_answer(first.reply(created("t")), broker.now_ms)
    assert broker.apis.waiting == 0


def test_describe_quorum_in_flight_when_the_leader_moves_names_the_new_leader() -> None:
    broker = Broker([SILENT], leader=1)
    cid = broker.request(describe_quorum, 2, DescribeQuorumRequest())
    broker.leader = LeaderAndEpoch(2, 4)
    broker.advance(1)
    answer = broker.answer(cid)
    assert (answer.partition_error_code, answer.leader_id) == (ErrorCode.NOT_LEADER_OR_FOLLOWER, 2)


def test_no_leader_within_the_request_timeout_is_request_timed_out_per_topic() -> None:
    broker = Broker(leader=None)
    cid = broker.request(create_topics, 7, create("t", "u", timeout_ms=300))
    broker.advance(299)
    assert cid not in broker.answers
    broker.advance(1)
    assert [(t.name, t.error_code) for t in broker.answer(cid).topics] == [
        ("t", ErrorCode.REQUEST_TIMED_OUT),
        ("u", ErrorCode.REQUEST_TIMED_OUT),
    ]
    assert broker.sent == []


def test_a_controller_that_never_answers_is_request_timed_out_at_the_deadline() -> None:
    broker = Broker([SILENT])
    cid = broker.request(create_topics, 7, create("t", timeout_ms=800))
    broker.advance(799)
    assert cid not in broker.answers and len(broker.sent) == 1
    broker.advance(1)
    assert [t.error_code for t in broker.answer(cid).topics] == [ErrorCode.REQUEST_TIMED_OUT]


def test_without_a_timeout_in_the_request_the_configured_request_timeout_bounds_it() -> None:
    broker = Broker(leader=None, timeout_ms=1_200)
    cid = broker.request(create_topics, 7, create("t", timeout_ms=0))
    broker.advance(1_199)
    assert cid not in broker.answers
    broker.advance(1)
    assert broker.answer(cid).topics[0].error_code == ErrorCode.REQUEST_TIMED_OUT


def test_a_controller_error_other_than_not_controller_is_relayed_and_not_retried() -> None:
    broker = Broker([created("t", code=ErrorCode.TOPIC_ALREADY_EXISTS), created("t")])
    cid = broker.request(create_topics, 7, create("t"))
    assert broker.answer(cid).topics[0].error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    broker.advance(1_000)
    assert len(broker.sent) == 1


# -------------------------------------------------------------------------------------------------
# Read your writes


def test_a_created_topic_is_answered_only_once_this_brokers_image_has_it() -> None:
    broker = Broker([created("t")])
    cid = broker.request(create_topics, 7, create("t"))
    broker.advance(100)
    assert cid not in broker.answers  # the controller answered, but this broker has not replayed it
    broker.publish(with_topics("other"))
    assert cid not in broker.answers  # an image without it changes nothing
    broker.publish(with_topics("other", "t"))
    assert broker.answered_at(cid) == 100 and broker.answer(cid).topics[0].error_code == ErrorCode.NONE


def test_a_config_change_is_answered_once_the_image_shows_the_value() -> None:
    broker = Broker([altered("t")])
    cid = broker.request(incremental_alter_configs, 1, set_config("t", "min.insync.replicas", "2"))
    broker.advance(10)
    broker.publish(with_topics("t", configs={(2, "t"): {"min.insync.replicas": "1"}}))
    assert cid not in broker.answers  # the old value
    broker.publish(with_topics("t", configs={(2, "t"): {"min.insync.replicas": "2"}}))
    assert broker.answer(cid).responses[0].error_code == ErrorCode.NONE


def test_a_deleted_topic_is_answered_once_this_brokers_image_no_longer_has_it() -> None:
    answer = DT_RESPONSE(
        throttle_time_ms=0,
        responses=[DT_RESPONSE.DeletableTopicResult(name="t", topic_id=tid("t"), error_code=0)],
    )
    broker = Broker([answer])
    broker.publish(with_topics("t"))
    cid = broker.request(delete_topics, 6, DT(topics=[DT.DeleteTopicState(name="t")], timeout_ms=5_000))
    assert cid not in broker.answers
    broker.publish(with_topics())
    assert broker.answer(cid).responses[0].error_code == ErrorCode.NONE


def test_added_partitions_are_answered_once_this_brokers_image_has_them() -> None:
    answer = CP_RESPONSE(
        throttle_time_ms=0, results=[CP_RESPONSE.CreatePartitionsTopicResult(name="t", error_code=0)]
    )
    broker = Broker([answer])
    broker.publish(with_topics("t", partitions=1))
    body = CP(topics=[CP.CreatePartitionsTopic(name="t", count=3, assignments=None)], timeout_ms=5_000)
    cid = broker.request(create_partitions, 3, body)
    broker.publish(with_topics("t", partitions=2))
    assert cid not in broker.answers
    broker.publish(with_topics("t", partitions=3))
    assert broker.answer(cid).results[0].error_code == ErrorCode.NONE


def test_a_write_the_image_never_shows_is_answered_at_its_deadline_with_the_controllers_answer() -> None:
    broker = Broker([created("t")])
    cid = broker.request(create_topics, 7, create("t", timeout_ms=500))
    broker.advance(499)
    assert cid not in broker.answers
    broker.advance(1)
    assert broker.answer(cid).topics[0].error_code == ErrorCode.NONE  # what the controller said


def test_a_validate_only_request_or_a_failed_write_is_answered_at_once() -> None:
    broker = Broker([created("t"), created("u", code=ErrorCode.INVALID_REPLICATION_FACTOR)])
    validated = broker.request(create_topics, 7, create("t", validate_only=True))
    failed = broker.request(create_topics, 7, create("u"))
    assert broker.answer(validated).topics[0].error_code == ErrorCode.NONE
    assert broker.answer(failed).topics[0].error_code == ErrorCode.INVALID_REPLICATION_FACTOR


# -------------------------------------------------------------------------------------------------
# KIP-853 voter changes through a broker


def test_update_raft_voter_is_not_served_on_a_broker_listener() -> None:
    broker = Broker()
    update = UpdateRaftVoterRequest(
        cluster_id=None, current_leader_epoch=3, voter_key=ReplicaKey(1, DIR), listeners=()
    )
    with pytest.raises(KraftError, match="not served on a broker listener"):
        broker.request(update_raft_voter, 0, update)
    assert broker.sent == []


def test_add_raft_voter_goes_to_the_raft_leader_unchanged_and_its_answer_comes_back_unchanged() -> None:
    reply = AddRaftVoterResponse()
    broker = Broker([reply], leader=2)
    body = add_voter()
    cid = broker.request(add_raft_voter, 0, body)
    assert broker.sends() == [(0, 2, add_raft_voter.API.key, 0)]
    assert broker.sent_bodies()[0] is body  # the client's request as it came, cluster id and all
    assert broker.answer(cid) is reply


def test_remove_raft_voter_goes_to_the_raft_leader() -> None:
    reply = RemoveRaftVoterResponse()
    broker = Broker([reply], leader=1)
    cid = broker.request(remove_raft_voter, 0, remove_voter())
    assert [(dest, key) for _, dest, key, _ in broker.sends()] == [(1, remove_raft_voter.API.key)]
    assert broker.answer(cid) is reply


def test_a_lost_connection_is_retried_until_the_leader_answers() -> None:
    broker = Broker([LOST, LOST, RemoveRaftVoterResponse()])
    cid = broker.request(remove_raft_voter, 0, remove_voter())
    broker.advance(1_000)
    assert broker.answer(cid).error_code == ErrorCode.NONE
    assert [at for at, *_ in broker.sends()] == [0, 50, 150]


def test_a_leader_elected_while_waiting_gets_the_request() -> None:
    broker = Broker([AddRaftVoterResponse()], leader=None)
    cid = broker.request(add_raft_voter, 0, add_voter())
    broker.advance(100)
    assert broker.sent == [] and cid not in broker.answers  # nobody to send it to yet
    broker.leader = LeaderAndEpoch(3, 4)
    broker.advance(500)
    assert [dest for _, dest, _, _ in broker.sends()] == [3]
    assert broker.answer(cid).error_code == ErrorCode.NONE


@pytest.mark.parametrize(
    ("module", "body", "reply"),
    [
        (
            remove_raft_voter,
            remove_voter(9),
            RemoveRaftVoterResponse(
                error_code=ErrorCode.VOTER_NOT_FOUND, error_message="cannot remove voter 9"
            ),
        ),
        (
            add_raft_voter,
            add_voter(),
            AddRaftVoterResponse(
                error_code=ErrorCode.DUPLICATE_VOTER, error_message="voter 5 is already a voter"
            ),
        ),
        (
            add_raft_voter,
            add_voter(),
            AddRaftVoterResponse(
                error_code=ErrorCode.REQUEST_TIMED_OUT, error_message="observer 5 has not caught up"
            ),
        ),
        (add_raft_voter, add_voter(), AddRaftVoterResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)),
        # A controller that has just lost the leadership: Kafka's broker relays it too (only
        # NOT_CONTROLLER is retried by its channel manager); the admin client finds the leader.
        (
            remove_raft_voter,
            remove_voter(),
            RemoveRaftVoterResponse(error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER),
        ),
    ],
)
def test_a_controller_refusal_is_relayed_unchanged_and_not_retried(
    module: Any, body: Any, reply: Any
) -> None:
    broker = Broker([reply, module.RESPONSE.cls()])
    cid = broker.request(module, 0, body)
    broker.advance(1_000)
    assert broker.answer(cid) is reply
    assert len(broker.sent) == 1


def test_no_leader_within_the_requests_timeout_is_request_timed_out_as_kafka_answers() -> None:
    broker = Broker(leader=None)  # the default request timeout is 30 s
    cid = broker.request(add_raft_voter, 0, add_voter(timeout_ms=300))
    broker.advance(299)
    assert cid not in broker.answers
    broker.advance(1)  # AddRaftVoter's own TimeoutMs, not the 30 s default
    response = broker.answer(cid)
    assert isinstance(response, AddRaftVoterResponse)
    assert response.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert response.error_message is not None
    assert response.error_message.startswith(REQUEST_TIMED_OUT_MESSAGE + " Broker 4")
    assert "within 300 ms" in response.error_message and "no raft leader is known" in response.error_message
    assert broker.sent == []


def test_an_unreachable_leader_is_request_timed_out_naming_the_failure() -> None:
    broker = Broker(leader=2, timeout_ms=2_000)  # every attempt: LOST
    cid = broker.request(remove_raft_voter, 0, remove_voter())
    broker.advance(1_999)
    assert cid not in broker.answers
    broker.advance(1)  # RemoveRaftVoter has no TimeoutMs: the broker's request.timeout.ms bounds it
    response = broker.answer(cid)
    assert isinstance(response, RemoveRaftVoterResponse)
    assert response.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert response.error_message is not None
    assert "the active controller, node 2, did not answer" in response.error_message
    assert len(broker.sent) >= 2 and {dest for _, dest, _, _ in broker.sends()} == {2}


def test_a_leader_that_never_answers_is_request_timed_out_saying_so() -> None:
    broker = Broker([SILENT], timeout_ms=2_000)
    cid = broker.request(remove_raft_voter, 0, remove_voter())
    broker.advance(2_000)
    response = broker.answer(cid)
    assert isinstance(response, RemoveRaftVoterResponse) and response.error_message is not None
    assert response.error_code == ErrorCode.REQUEST_TIMED_OUT
    assert "did not answer before the deadline" in response.error_message
    assert "could be forwarded" not in response.error_message and len(broker.sent) == 1


# -------------------------------------------------------------------------------------------------
# DescribeQuorum through a broker


def test_describe_quorum_without_a_leader_is_not_leader_or_follower_and_never_names_one() -> None:
    broker = Broker(leader=None)
    cid = broker.request(describe_quorum, 2, DescribeQuorumRequest())
    response = broker.answer(cid)
    assert isinstance(response, DescribeQuorumResponse)
    assert (response.partition_error_code, response.leader_id, response.leader_epoch) == (
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        -1,
        3,
    )
    assert response.partition_error_message is not None and "no leader" in response.partition_error_message
    assert broker.sent == []


def test_describe_quorum_is_forwarded_to_the_leader_and_its_answer_relayed() -> None:
    reply = DescribeQuorumResponse(leader_id=2, leader_epoch=3, high_watermark=42)
    broker = Broker([reply], leader=2)
    cid = broker.request(describe_quorum, 1, DescribeQuorumRequest())
    assert broker.sends() == [(0, 2, describe_quorum.API.key, 1)]
    assert broker.answer(cid) is reply


@pytest.mark.parametrize("outcome", [LOST, SILENT])
def test_describe_quorum_forwarding_failure_is_a_retriable_error_with_the_leader_hint(outcome: Any) -> None:
    broker = Broker([outcome, DescribeQuorumResponse(leader_id=2)], leader=2, timeout_ms=1_000)
    cid = broker.request(describe_quorum, 2, DescribeQuorumRequest())
    broker.advance(1_000)
    response = broker.answer(cid)
    assert (response.partition_error_code, response.leader_id, response.leader_epoch) == (
        ErrorCode.NOT_LEADER_OR_FOLLOWER,
        2,
        3,
    )
    assert len(broker.sent) == 1  # not retried: the client retries
    assert broker.answered_at(cid) == (0 if outcome is LOST else 1_000)


# -------------------------------------------------------------------------------------------------
# Auto-creating topics named in Metadata


def metadata_for(*names: str) -> Any:
    return MD(topics=[MD.MetadataRequestTopic(name=n) for n in names], allow_auto_topic_creation=True)


def test_topics_named_in_metadata_are_auto_created_by_one_create_topics_not_repeated_while_in_flight() -> (
    None
):
    broker = Broker([SILENT], timeout_ms=2_000)
    first = broker.request(metadata, 12, metadata_for("a", "b"))
    assert [(t.name, t.error_code) for t in broker.answer(first).topics] == [
        ("a", ErrorCode.LEADER_NOT_AVAILABLE),
        ("b", ErrorCode.LEADER_NOT_AVAILABLE),
    ]
    assert broker.sends() == [(0, 1, create_topics.API.key, 7)]
    (sent,) = broker.sent_bodies()
    assert [(t.name, t.num_partitions, t.replication_factor) for t in sent.topics] == [
        ("a", -1, -1),
        ("b", -1, -1),
    ]
    broker.advance(10)
    again = broker.request(metadata, 12, metadata_for("a", "b"))
    assert broker.answer(again).topics[0].error_code == ErrorCode.LEADER_NOT_AVAILABLE
    assert len(broker.sent) == 1  # the same topics are in flight: no second CreateTopics
    broker.request(metadata, 12, metadata_for("a", "c"))
    assert [[t.name for t in b.topics] for b in broker.sent_bodies()] == [["a", "b"], ["c"]]


def test_an_auto_create_that_timed_out_is_tried_again_on_the_next_metadata() -> None:
    broker = Broker([SILENT, SILENT], timeout_ms=500)
    broker.request(metadata, 12, metadata_for("a"))
    broker.advance(500)  # the first CreateTopics timed out
    assert broker.apis.waiting == 0 and broker.answers.keys() == {101}  # only the Metadata is answered
    broker.request(metadata, 12, metadata_for("a"))
    assert [at for at, *_ in broker.sends()] == [0, 500]


def test_an_auto_created_topic_shows_in_metadata_once_published() -> None:
    broker = Broker([created("a")])
    broker.request(metadata, 12, metadata_for("a"))
    broker.publish(with_topics("a"))
    cid = broker.request(metadata, 12, metadata_for("a"))
    assert [(t.name, t.error_code) for t in broker.answer(cid).topics] == [("a", ErrorCode.NONE)]
    assert len(broker.sent) == 1 and broker.apis.waiting == 0


def test_no_auto_create_when_the_broker_disables_it() -> None:
    broker = Broker(static_configs={"auto.create.topics.enable": "false"})
    cid = broker.request(metadata, 12, metadata_for("a"))
    assert broker.answer(cid).topics[0].error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert broker.sent == []


# -------------------------------------------------------------------------------------------------
# The controllers a broker lists (DescribeCluster endpoint type 2)


def describe(broker: Broker, endpoint_type: int) -> Any:
    cid = broker.request(
        describe_cluster, 1, DC(include_cluster_authorized_operations=False, endpoint_type=endpoint_type)
    )
    return broker.answer(cid)


def test_a_dynamic_quorums_broker_lists_the_voter_set_it_follows_and_the_leader() -> None:
    broker = Broker(leader=2)
    before = describe(broker, 2)
    assert (before.controller_id, before.brokers) == (-1, [])  # nothing known yet

    broker.apis.update_controllers(((3, "127.0.0.1", 9095, None), (2, "127.0.0.1", 9094, None)))
    after = describe(broker, 2)
    assert after.controller_id == 2
    assert [(b.broker_id, b.host, b.port) for b in after.brokers] == [
        (2, "127.0.0.1", 9094),
        (3, "127.0.0.1", 9095),
    ]

    broker.apis.update_controllers(((3, "127.0.0.1", 9095, None),))  # voter 2 removed
    shrunk = describe(broker, 2)
    assert [b.broker_id for b in shrunk.brokers] == [3]
    assert shrunk.controller_id == -1  # the leader is no longer listed: -1, as Kafka reports it


def test_describe_cluster_for_brokers_is_unchanged_by_the_voter_set() -> None:
    broker = Broker(leader=2)
    broker.apis.update_controllers(((2, "127.0.0.1", 9094, None),))
    response = describe(broker, 1)
    assert response.endpoint_type == 1 and response.brokers == []  # the image has no brokers


def test_metadata_is_built_once_per_image_and_request_shape_and_never_cached_when_it_auto_creates() -> None:
    b = Broker()
    b.publish(with_topics("a", "b", partitions=3))
    md: Any = metadata.REQUEST.cls
    everything = md(topics=None, allow_auto_topic_creation=False)
    first, again = b.request(metadata, 12, everything), b.request(metadata, 12, everything)
    assert b.answer(first) is b.answer(again)  # the same answer object: built once
    only_a = b.request(
        metadata, 12, md(topics=[md.MetadataRequestTopic(name="a")], allow_auto_topic_creation=False)
    )
    assert [t.name for t in b.answer(only_a).topics] == ["a"]
    b.publish(with_topics("a", "b", "c"))
    fresh = b.request(metadata, 12, everything)
    assert b.answer(fresh) is not b.answer(first)
    assert [t.name for t in b.answer(fresh).topics] == ["a", "b", "c"]
    # A request that names a missing topic to auto-create is answered afresh each time.
    auto = md(topics=[md.MetadataRequestTopic(name="new")], allow_auto_topic_creation=True)
    x, y = b.request(metadata, 12, auto), b.request(metadata, 12, auto)
    assert b.answer(x) is not b.answer(y)
