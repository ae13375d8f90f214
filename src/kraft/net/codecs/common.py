"""What the per-API raft codecs share: the ``Codec`` record, the answers a codec gives in place of
the core, and the conversions every raft RPC needs (endpoints, the one metadata partition).

No I/O and no state. Wire endpoints carry no listener name, so decoding fills in the listener name
the caller passes (the raft listener, ``controller.listener.names``' first entry).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from kraft.protocol.api import Api
from kraft.protocol.error_codes import ErrorCode as Code
from kraft.protocol.schema import StructValue
from kraft.raft.messages import (
    AddRaftVoterResponse,
    BeginQuorumEpochResponse,
    EndQuorumEpochResponse,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterResponse,
    VoteResponse,
)
from kraft.raft.types import METADATA_PARTITION, METADATA_TOPIC, Endpoint, LeaderAndEpoch

Q = TypeVar("Q", bound=RaftRequest)
R = TypeVar("R", bound=RaftResponse)
W = TypeVar("W")

INVALID_SHAPE = "the request must name exactly topic __cluster_metadata partition 0"


class EncodeVersionError(ValueError):
    """The request cannot be expressed at the negotiated version (a pre-vote below Vote v2)."""


@dataclass(frozen=True, slots=True)
class ImmediateResponse:
    """A request the shell answers itself (wrong topic or partition); ``body`` is the wire body."""

    body: StructValue
    reason: str


@dataclass(frozen=True, slots=True)
class Codec(Generic[Q, R]):
    """One raft API's conversions, both directions (a module of ``kraft.net.codecs`` each).

    ``encode_request(request, version)`` and ``encode_response(response, version, listener_name)``
    give the wire body at ``version``; ``decode_request(body, version, leader)`` gives the core's
    request or an ``ImmediateResponse`` (``leader``: this node's view, for answers that name it);
    ``decode_response(body, version, listener_name)`` gives the core's response. Encoding a request
    may raise ``EncodeVersionError``.
    """

    api: Api
    request_type: type[Q]
    response_type: type[R]
    encode_request: Callable[[Q, int], StructValue]
    decode_request: Callable[[Any, int, LeaderAndEpoch | None], Q | ImmediateResponse]
    encode_response: Callable[[R, int, str], StructValue]
    decode_response: Callable[[Any, int, str], R]


# ---------------------------------------------------------------------------------------------------
# Endpoints


class _HostPort(Protocol):
    @property
    def host(self) -> str: ...
    @property
    def port(self) -> int: ...


class _NodeEndpoint(_HostPort, Protocol):
    @property
    def node_id(self) -> int: ...


class _NamedEndpoint(_HostPort, Protocol):
    @property
    def name(self) -> str: ...


def endpoints_for_wire(endpoints: tuple[Endpoint, ...], listener_name: str) -> list[Endpoint]:
    """The endpoints of our raft listener if any are named so, else all of them, without duplicates."""
    chosen = [e for e in endpoints if e.name == listener_name] or list(endpoints)
    out: list[Endpoint] = []
    for e in chosen:
        if e not in out:
            out.append(e)
    return out


def node_endpoints(
    make: Callable[..., W], version: int, leader_id: int, endpoints: tuple[Endpoint, ...], listener_name: str
) -> list[W]:
    """A response's NodeEndpoints (``make``: its NodeEndpoint class) for the known leader."""
    # NodeEndpoints exist from v1 on (KIP-853) and are not ignorable: older versions get none.
    if leader_id < 0 or version < 1:
        return []
    return [
        make(node_id=leader_id, host=e.host, port=e.port)
        for e in endpoints_for_wire(endpoints, listener_name)
    ]


def from_node_endpoints(
    nodes: Sequence[_NodeEndpoint] | None, leader_id: int, listener_name: str
) -> tuple[Endpoint, ...]:
    if not nodes or leader_id < 0:
        return ()
    return tuple(Endpoint(listener_name, n.host, n.port) for n in nodes if n.node_id == leader_id)


def named_endpoints(make: Callable[..., W], endpoints: tuple[Endpoint, ...]) -> list[W]:
    """Every endpoint with its listener name (``make``: a LeaderEndpoint or Listener class)."""
    return [make(name=e.name, host=e.host, port=e.port) for e in endpoints]


def from_named_endpoints(endpoints: Sequence[_NamedEndpoint] | None) -> tuple[Endpoint, ...]:
    return tuple(Endpoint(e.name, e.host, e.port) for e in endpoints or ())


# ---------------------------------------------------------------------------------------------------
# The one metadata partition


def single_partition(
    topics: Sequence[Any] | None, name_attr: str, expected: object, partition_attr: str
) -> Any:
    """The one partition of the one expected topic, or None if the request names anything else."""
    if not topics or len(topics) != 1:
        return None
    topic = topics[0]
    if getattr(topic, name_attr) != expected or not topic.partitions or len(topic.partitions) != 1:
        return None
    partition = topic.partitions[0]
    if getattr(partition, partition_attr) != METADATA_PARTITION:
        return None
    return partition


def metadata_topics(topic_cls: Any, **partition_fields: Any) -> list[Any]:
    """Topic ``__cluster_metadata`` with its partition 0 (``partition_fields``), as the one-element
    topic list of a message whose ``topic_cls`` is named ``TopicName`` and its partition
    ``PartitionIndex`` (Vote, BeginQuorumEpoch, EndQuorumEpoch, DescribeQuorum)."""
    partition = topic_cls.PartitionData(partition_index=METADATA_PARTITION, **partition_fields)
    return [topic_cls(topic_name=METADATA_TOPIC, partitions=[partition])]


def metadata_partition(topics: Sequence[Any] | None) -> Any:
    """The one partition of a request that names exactly ``__cluster_metadata`` partition 0 in
    ``metadata_topics``' shape, or None if it names anything else."""
    return single_partition(topics, "topic_name", METADATA_TOPIC, "partition_index")


def first_partition(topics: Sequence[Any] | None) -> Any:
    """The first partition of the first topic, or None: a response's one partition."""
    if topics and topics[0].partitions:
        return topics[0].partitions[0]
    return None


# ---------------------------------------------------------------------------------------------------
# Vote, BeginQuorumEpoch and EndQuorumEpoch responses share one shape


def encode_partition_response(
    cls: Any,
    r: VoteResponse | BeginQuorumEpochResponse | EndQuorumEpochResponse,
    version: int,
    listener_name: str,
    **partition_fields: Any,
) -> Any:
    """A top-level error, one topic with one partition (error, leader, epoch, plus
    ``partition_fields``) unless the top-level error is set, and NodeEndpoints; ``cls``: the
    response class."""
    topics = []
    if r.error_code == Code.NONE:
        topics = metadata_topics(
            cls.TopicData,
            error_code=r.partition_error_code,
            leader_id=r.leader_id,
            leader_epoch=r.leader_epoch,
            **partition_fields,
        )
    return cls(
        error_code=r.error_code,
        topics=topics,
        node_endpoints=node_endpoints(
            cls.NodeEndpoint, version, r.leader_id, r.leader_endpoints, listener_name
        ),
    )


def invalid_shape(
    cls: Any, response_type: type[VoteResponse | BeginQuorumEpochResponse | EndQuorumEpochResponse]
) -> ImmediateResponse:
    """The answer to a request that does not name exactly ``__cluster_metadata`` partition 0: a
    top-level INVALID_REQUEST (``cls``: the response class)."""
    invalid = response_type(error_code=Code.INVALID_REQUEST)
    return ImmediateResponse(encode_partition_response(cls, invalid, 0, ""), INVALID_SHAPE)


_LeaderResponse = TypeVar("_LeaderResponse", BeginQuorumEpochResponse, EndQuorumEpochResponse)


def decode_leader_response(
    body: Any, response_type: type[_LeaderResponse], listener_name: str
) -> _LeaderResponse:
    """BeginQuorumEpoch or EndQuorumEpoch response (one partition: error, leader, epoch).

    A response whose partition list is empty keeps only its top-level error code; a well-behaved
    peer sends that shape only together with a top-level error."""
    p = first_partition(body.topics)
    if p is None:
        return response_type(error_code=body.error_code)
    return response_type(
        error_code=body.error_code,
        partition_error_code=p.error_code,
        leader_id=p.leader_id,
        leader_epoch=p.leader_epoch,
        leader_endpoints=from_node_endpoints(body.node_endpoints, p.leader_id, listener_name),
    )


def leader_codec(
    api: Api,
    request_type: type[Q],
    response_type: type[_LeaderResponse],
    encode_request: Callable[[Q, int], StructValue],
    decode_request: Callable[[Any, int, LeaderAndEpoch | None], Q | ImmediateResponse],
) -> Codec[Q, _LeaderResponse]:
    """The ``Codec`` of BeginQuorumEpoch or EndQuorumEpoch: their responses are one shape
    (``encode_partition_response``, ``decode_leader_response``)."""
    return Codec(
        api,
        request_type,
        response_type,
        encode_request,
        decode_request,
        lambda r, version, listener_name: encode_partition_response(
            api.response.cls, r, version, listener_name
        ),
        lambda body, version, listener_name: decode_leader_response(body, response_type, listener_name),
    )


# ---------------------------------------------------------------------------------------------------
# AddRaftVoter and RemoveRaftVoter responses share one shape

_VoterChangeResponse = TypeVar("_VoterChangeResponse", AddRaftVoterResponse, RemoveRaftVoterResponse)


def voter_change_codec(
    api: Api,
    request_type: type[Q],
    response_type: type[_VoterChangeResponse],
    encode_request: Callable[[Q, int], StructValue],
    decode_request: Callable[[Any, int, LeaderAndEpoch | None], Q | ImmediateResponse],
) -> Codec[Q, _VoterChangeResponse]:
    """The ``Codec`` of AddRaftVoter or RemoveRaftVoter: their responses are one shape (no throttle
    time of ours, an error code and its message)."""

    def encode_response(response: _VoterChangeResponse, version: int, listener_name: str) -> StructValue:
        return api.response.cls(
            throttle_time_ms=0, error_code=response.error_code, error_message=response.error_message
        )

    def decode_response(body: Any, version: int, listener_name: str) -> _VoterChangeResponse:
        return response_type(error_code=body.error_code, error_message=body.error_message)

    return Codec(
        api, request_type, response_type, encode_request, decode_request, encode_response, decode_response
    )
