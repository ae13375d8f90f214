"""EndQuorumEpoch (API 54): a resigning leader hands over, naming preferred successors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import EndQuorumEpochRequest, EndQuorumEpochResponse
from kraft.raft.states import FollowerState, ProspectiveState, ResignedState
from kraft.raft.types import ReplicaKey

if TYPE_CHECKING:
    from kraft.raft.node import RaftNode


def build_end_quorum_epoch_request(node: RaftNode, state: ResignedState) -> EndQuorumEpochRequest:
    return EndQuorumEpochRequest(
        cluster_id=node.cluster_id,
        leader_id=state.local_key.id,
        leader_epoch=state.epoch,
        preferred_candidates=state.preferred_successors,
        leader_endpoints=node.local_endpoints,
    )


def successor_rank(candidates: tuple[ReplicaKey, ...], key: ReplicaKey) -> int | None:
    """``key``'s position among a resigned leader's preferred successors (0: the first), if any."""
    return next((i for i, c in enumerate(candidates) if c.matches(key)), None)


def successor_backoff_ms(local: ReplicaKey, candidates: tuple[ReplicaKey, ...], backoff_max_ms: int) -> int:
    """How long a follower waits before its election (spec 3.6): the first successor goes at once."""
    position = successor_rank(candidates, local)
    if position is None:
        return backoff_max_ms
    if position == 0:
        return 0
    n = len(candidates)
    return min(backoff_max_ms, (backoff_max_ms >> (n - 1)) << (position - 1))


def handle_end_quorum_epoch_request(
    node: RaftNode, request: EndQuorumEpochRequest, now_ms: int
) -> EndQuorumEpochResponse:
    if not node.valid_cluster_id(request.cluster_id):
        return EndQuorumEpochResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)

    def respond(error: int) -> EndQuorumEpochResponse:
        leader_id, epoch, endpoints = node.current_leader_fields()
        return EndQuorumEpochResponse(
            partition_error_code=error, leader_id=leader_id, leader_epoch=epoch, leader_endpoints=endpoints
        )

    error = node.validate_voter_only(request.leader_id, request.leader_epoch)
    if error is not None:
        return respond(error)
    node.maybe_transition(request.leader_id, request.leader_epoch, request.leader_endpoints, now_ms)
    state = node.quorum.state
    if (
        isinstance(state, FollowerState)
        and state.leader_id == request.leader_id
        and node.local_key is not None
    ):
        backoff = successor_backoff_ms(
            node.local_key, request.preferred_candidates, node.config.election_backoff_max_ms
        )
        state.fetch_deadline_ms = now_ms + backoff
        if not state.leader_resigned:
            # The fetch in flight now left before the resignation reached us (its answer may
            # bring records); any later one can only be refused (NOT_LEADER_OR_FOLLOWER).
            state.fetch_before_resignation = node.requests.has_any_inflight(now_ms)
        # The leader of this epoch is gone for good (a Resigned node never leads its epoch again,
        # not even after a restart): grant pre-votes from now on (vote.can_grant_vote).
        state.leader_resigned = True
        state.successors = request.preferred_candidates
    elif isinstance(state, ProspectiveState) and state.leader_id == request.leader_id:
        # Already campaigning (its fetch timer ran out first): a lost round must not go back to
        # following the resigned leader either (RaftNode._poll_prospective).
        state.leader_resigned = True
        state.successors = request.preferred_candidates
    return respond(ErrorCode.NONE)


def handle_end_quorum_epoch_response(
    node: RaftNode, source: int, response: EndQuorumEpochResponse, now_ms: int
) -> bool:
    """The API-specific part, once ``RaftNode.preprocess_response`` (spec 3.3) let it through."""
    if response.partition_error_code != ErrorCode.NONE:
        return False
    state = node.quorum.state
    if isinstance(state, ResignedState):
        state.unacked_voters.discard(source)
    return True
