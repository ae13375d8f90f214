"""AddRaftVoter (API key 80, KIP-853): the core's request and response <-> the wire, both directions.

No topic or partition to check: the core validates the voter and its listeners. ``Listeners``
map to ``Endpoint(name, host, port)``.
"""

from __future__ import annotations

from kraft.net.codecs.common import from_named_endpoints, named_endpoints, voter_change_codec
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
) -> AddRaftVoterRequest:
    return AddRaftVoterRequest(
        cluster_id=body.cluster_id,
        timeout_ms=body.timeout_ms,
        voter_key=ReplicaKey(body.voter_id, body.voter_directory_id),
        listeners=from_named_endpoints(body.listeners),
    )


CODEC = voter_change_codec(
    wire.API, AddRaftVoterRequest, AddRaftVoterResponse, encode_request, decode_request
)
