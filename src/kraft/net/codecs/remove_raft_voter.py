"""RemoveRaftVoter (API key 81, KIP-853): the core's request and response <-> the wire.

No topic or partition to check: the core validates the voter.
"""

from __future__ import annotations

from kraft.net.codecs.common import voter_change_codec
from kraft.protocol.messages import remove_raft_voter as wire
from kraft.raft.messages import RemoveRaftVoterRequest, RemoveRaftVoterResponse
from kraft.raft.types import LeaderAndEpoch, ReplicaKey


def encode_request(request: RemoveRaftVoterRequest, version: int) -> wire.RemoveRaftVoterRequest:
    return wire.REQUEST.cls(
        cluster_id=request.cluster_id,
        voter_id=request.voter_key.id,
        voter_directory_id=request.voter_key.directory_id,
    )


def decode_request(
    body: wire.RemoveRaftVoterRequest, version: int, leader: LeaderAndEpoch | None = None
) -> RemoveRaftVoterRequest:
    return RemoveRaftVoterRequest(
        cluster_id=body.cluster_id, voter_key=ReplicaKey(body.voter_id, body.voter_directory_id)
    )


CODEC = voter_change_codec(
    wire.API, RemoveRaftVoterRequest, RemoveRaftVoterResponse, encode_request, decode_request
)
