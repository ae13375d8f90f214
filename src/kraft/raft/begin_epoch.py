"""BeginQuorumEpoch (API 53): a new leader announces itself to voters (replication is pull-based)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import BeginQuorumEpochRequest, BeginQuorumEpochResponse

if TYPE_CHECKING:
    from kraft.raft.node import RaftNode


def build_begin_quorum_epoch_request(node: RaftNode, voter_id: int) -> BeginQuorumEpochRequest:
    assert node.node_id is not None
    return BeginQuorumEpochRequest(
        cluster_id=node.cluster_id,
        voter_key=node.voter_key_of(voter_id),
        leader_id=node.node_id,
        leader_epoch=node.epoch,
        leader_endpoints=node.local_endpoints,
    )


def handle_begin_quorum_epoch_request(
    node: RaftNode, request: BeginQuorumEpochRequest, now_ms: int
) -> BeginQuorumEpochResponse:
    if not node.valid_cluster_id(request.cluster_id):
        return BeginQuorumEpochResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)

    def respond(error: int) -> BeginQuorumEpochResponse:
        leader_id, epoch, endpoints = node.current_leader_fields()
        return BeginQuorumEpochResponse(
            partition_error_code=error, leader_id=leader_id, leader_epoch=epoch, leader_endpoints=endpoints
        )

    error = node.validate_voter_only(request.leader_id, request.leader_epoch)
    if error is not None:
        return respond(error)
    node.maybe_transition(request.leader_id, request.leader_epoch, request.leader_endpoints, now_ms)
    if not node.valid_voter_key(request.voter_key):
        return respond(ErrorCode.INVALID_VOTER_KEY)
    return respond(ErrorCode.NONE)


def handle_begin_quorum_epoch_response(
    node: RaftNode, source: int, response: BeginQuorumEpochResponse, now_ms: int
) -> bool:
    """The API-specific part, once ``RaftNode.preprocess_response`` (spec 3.3) let it through."""
    # Acknowledgement is bookkeeping only: the leader re-announces to voters that do not fetch.
    return response.partition_error_code == ErrorCode.NONE
