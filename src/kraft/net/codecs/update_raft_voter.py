"""UpdateRaftVoter (API key 82, KIP-853): the core's request and response <-> the wire.

The response's tagged ``CurrentLeader`` carries one Host/Port: the leader's endpoint on our raft
listener (Kafka's ``RaftUtil.updateVoterResponse``); Host "" and Port 0 when none is known.
"""

from __future__ import annotations

from kraft.net.codecs.common import Codec, endpoints_for_wire, from_named_endpoints, named_endpoints
from kraft.protocol.messages import update_raft_voter as wire
from kraft.raft.messages import UpdateRaftVoterRequest, UpdateRaftVoterResponse
from kraft.raft.types import Endpoint, LeaderAndEpoch, ReplicaKey


def encode_request(request: UpdateRaftVoterRequest, version: int) -> wire.UpdateRaftVoterRequest:
    cls = wire.REQUEST.cls
    return cls(
        cluster_id=request.cluster_id,
        current_leader_epoch=request.current_leader_epoch,
        voter_id=request.voter_key.id,
        voter_directory_id=request.voter_key.directory_id,
        listeners=named_endpoints(cls.Listener, request.listeners),
        k_raft_version_feature=cls.KRaftVersionFeature(
            min_supported_version=request.min_kraft_version,
            max_supported_version=request.max_kraft_version,
        ),
    )


def decode_request(
    body: wire.UpdateRaftVoterRequest, version: int, leader: LeaderAndEpoch | None = None
) -> UpdateRaftVoterRequest:
    feature = body.k_raft_version_feature
    return UpdateRaftVoterRequest(
        cluster_id=body.cluster_id,
        current_leader_epoch=body.current_leader_epoch,
        voter_key=ReplicaKey(body.voter_id, body.voter_directory_id),
        listeners=from_named_endpoints(body.listeners),
        min_kraft_version=feature.min_supported_version,
        max_kraft_version=feature.max_supported_version,
    )


def encode_response(
    response: UpdateRaftVoterResponse, version: int, listener_name: str
) -> wire.UpdateRaftVoterResponse:
    cls = wire.RESPONSE.cls
    current = cls.CurrentLeader(leader_id=response.leader_id, leader_epoch=response.leader_epoch)
    endpoints = endpoints_for_wire(response.leader_endpoints, listener_name)
    if endpoints:
        current.host, current.port = endpoints[0].host, endpoints[0].port
    return cls(throttle_time_ms=0, error_code=response.error_code, current_leader=current)


def decode_response(
    body: wire.UpdateRaftVoterResponse, version: int, listener_name: str
) -> UpdateRaftVoterResponse:
    current = body.current_leader
    leader_endpoints: tuple[Endpoint, ...] = ()
    if current.host or current.port:
        leader_endpoints = (Endpoint(listener_name, current.host, current.port),)
    return UpdateRaftVoterResponse(
        error_code=body.error_code,
        leader_id=current.leader_id,
        leader_epoch=current.leader_epoch,
        leader_endpoints=leader_endpoints,
    )


CODEC = Codec(
    wire.API,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
    encode_request,
    decode_request,
    encode_response,
    decode_response,
)
