"""AddRaftVoter (API key 80, KIP-853): the core's request and response <-> the wire, both directions.

No topic or partition to check: the core validates the voter and its listeners. ``Listeners``
map to ``Endpoint(name, host, port)``.
"""

from __future__ import annotations

from kraft.net.codecs.common import Codec, ImmediateResponse, from_named_endpoints, named_endpoints
from kraft.protocol.messages import add_raft_voter as wire
from kraft.raft.messages import AddRaftVoterRequest, AddRaftVoterResponse
from kraft.raft.types import LeaderAndEpoch, ReplicaKey


def encode_request(request: AddRaftVoterRequest, version: int) -> wire.AddRaftVoterRequest:
    cls = wire.REQUEST.cls
    return cls(
        cluster_id=request.cluster_id,
        timeout_ms=request.timeout_ms,
        voter_id=request.voter_key.id,
        voter_directory_id=request.voter_key.directory_id,
        listeners=named_endpoints(cls.Listener, request.listeners),
    )


def decode_request(
    body: wire.AddRaftVoterRequest, version: int, leader: LeaderAndEpoch | None = None
) -> AddRaftVoterRequest | ImmediateResponse:
    return AddRaftVoterRequest(
        cluster_id=body.cluster_id,
        timeout_ms=body.timeout_ms,
        voter_key=ReplicaKey(body.voter_id, body.voter_directory_id),
        listeners=from_named_endpoints(body.listeners),
    )


def encode_response(
    response: AddRaftVoterResponse, version: int, listener_name: str
) -> wire.AddRaftVoterResponse:
    return wire.RESPONSE.cls(
        throttle_time_ms=0, error_code=response.error_code, error_message=response.error_message
    )


def decode_response(
    body: wire.AddRaftVoterResponse, version: int, listener_name: str
) -> AddRaftVoterResponse:
    return AddRaftVoterResponse(error_code=body.error_code, error_message=body.error_message)


CODEC = Codec(
    wire.API,
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    encode_request,
    decode_request,
    encode_response,
    decode_response,
)
