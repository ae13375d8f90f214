"""Vote (API 52): building requests, granting (spec 3.4, KIP-996 pre-votes) and tallying responses.

``can_grant_vote`` is the pure decision table; ``handle_vote_request`` applies the validation order
of spec 3.4 and persists a granted standard vote before the response exists.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kraft.common.uuids import ZERO_UUID
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.end_epoch import successor_rank
from kraft.raft.messages import VoteRequest, VoteResponse
from kraft.raft.states import (
    CandidateState,
    FollowerState,
    LeaderState,
    ProspectiveState,
    ResignedState,
    State,
    UnattachedState,
)
from kraft.raft.types import ReplicaKey

if TYPE_CHECKING:
    from kraft.raft.node import RaftNode


def build_vote_request(node: RaftNode, voter_id: int, epoch: int, pre_vote: bool) -> VoteRequest:
    assert node.local_key is not None
    return VoteRequest(
        cluster_id=node.cluster_id,
        candidate_epoch=epoch,
        candidate_key=node.local_key,
        voter_key=node.voter_key_of(voter_id),
        last_offset_epoch=node.log.last_fetched_epoch(),
        last_offset=node.log.end_offset(),
        pre_vote=pre_vote,
    )


def _same_candidate(voted: ReplicaKey, candidate: ReplicaKey) -> bool:
    if voted.id != candidate.id:
        return False
    return voted.directory_id == ZERO_UUID or voted.directory_id == candidate.directory_id


def can_grant_vote(state: State, candidate: ReplicaKey, *, pre_vote: bool, up_to_date: bool) -> bool:
    """The table of spec 3.4 step 7 (state after any epoch bump of step 4)."""
    match state:
        case UnattachedState() | ProspectiveState():
            if pre_vote:
                return up_to_date
            if state.voted_key is not None:
                return _same_candidate(state.voted_key, candidate)  # log check skipped: already voted
            if state.leader_id is not None:
                return False
            return up_to_date
        case CandidateState():
            return up_to_date if pre_vote else False  # its own vote is implicit
        case LeaderState():
            return False
        case FollowerState():
            # KIP-996: a follower that heard from a live leader in this state refuses pre-votes.
            # A leader that resigned (EndQuorumEpoch) is not live whatever it answered before, so
            # the first preferred successor can win at once (KAFKA-20895; Kafka <= 4.1 refuses
            # it and the election falls to a later successor). Standard votes: always refused.
            if not pre_vote or not up_to_date:
                return False
            return state.leader_resigned or not state.has_fetched_from_leader
        case ResignedState():
            return pre_vote and up_to_date


def handle_vote_request(node: RaftNode, request: VoteRequest, now_ms: int) -> VoteResponse:
    if not node.valid_cluster_id(request.cluster_id):
        return VoteResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)

    def respond(error: int, granted: bool) -> VoteResponse:
        leader_id, epoch, endpoints = node.current_leader_fields()
        return VoteResponse(
            partition_error_code=error,
            leader_id=leader_id,
            leader_epoch=epoch,
            vote_granted=granted,
            leader_endpoints=endpoints,
        )

    last_epoch_invalid = (
        request.last_offset_epoch > request.candidate_epoch
        if request.pre_vote
        else request.last_offset_epoch >= request.candidate_epoch
    )
    if request.last_offset < 0 or request.last_offset_epoch < 0 or last_epoch_invalid:
        return respond(ErrorCode.INVALID_REQUEST, False)
    error = node.validate_voter_only(request.candidate_key.id, request.candidate_epoch)
    if error is not None:
        return respond(error, False)
    if request.candidate_epoch > node.epoch:
        # Also for pre-votes (spec 3.4 step 4): a higher epoch is news whatever the request.
        node.transition_to_unattached(request.candidate_epoch, now_ms)
    if not node.valid_voter_key(request.voter_key):
        return respond(ErrorCode.INVALID_VOTER_KEY, False)
    theirs = (request.last_offset_epoch, request.last_offset)
    ours = (node.log.last_fetched_epoch(), node.log.end_offset())
    up_to_date = theirs >= ours
    state = node.quorum.state
    granted = can_grant_vote(state, request.candidate_key, pre_vote=request.pre_vote, up_to_date=up_to_date)
    if granted and request.pre_vote:
        if isinstance(state, ProspectiveState) and _gives_way(node, state, request, theirs > ours):
            # Two prospective voters that grant each other's pre-votes would both become
            # candidates and split the vote (each votes for itself), costing an election timeout:
            # the one with the older log gives way, or with logs as new the one ranked lower
            # among a resigned leader's successors, else the higher id (ProspectiveState.yielded_to).
            state.yielded_to = request.candidate_key.id
        elif (
            isinstance(state, FollowerState)
            and state.leader_resigned
            and node.local_key is not None
            and _ranks_first(state.successors, request.candidate_key, node.local_key)
        ):
            # A successor still waiting out its backoff heard from one ranked above it: give that
            # one an election timeout to win before campaigning too (past Kafka: with a short
            # election.backoff.max.ms the two raced, and the lower id won the tie).
            state.fetch_deadline_ms = max(state.fetch_deadline_ms, now_ms + node.config.election_timeout_ms)
    if (
        granted
        and not request.pre_vote
        and isinstance(state, (UnattachedState, ProspectiveState))
        and state.voted_key is None
    ):
        # Persisted (inside the transition) before the granting response is built.
        node.transition_to_unattached_voted(request.candidate_key, now_ms)
    return respond(ErrorCode.NONE, granted)


def _ranks_first(successors: tuple[ReplicaKey, ...], candidate: ReplicaKey, local: ReplicaKey) -> bool | None:
    """Whether ``candidate`` comes before ``local`` among a resigned leader's ``successors``
    (best first); None unless both are among them."""
    theirs = successor_rank(successors, candidate)
    ours = successor_rank(successors, local)
    return None if theirs is None or ours is None else theirs < ours


def _gives_way(node: RaftNode, state: ProspectiveState, request: VoteRequest, newer_log: bool) -> bool:
    """Whether a prospective node that granted ``request``'s pre-vote lets that peer go first: its
    log is newer; or, as new, it ranks first among the successors; or, failing a rank, its id is
    lower."""
    local = node.local_key
    if newer_log or local is None:
        return newer_log
    first = _ranks_first(state.successors, request.candidate_key, local)
    return request.candidate_key.id < local.id if first is None else first


def handle_vote_response(node: RaftNode, source: int, response: VoteResponse, now_ms: int) -> bool:
    """The API-specific part, once ``RaftNode.preprocess_response`` (spec 3.3) let it through."""
    if response.partition_error_code != ErrorCode.NONE:
        return False
    state = node.quorum.state
    if isinstance(state, (ProspectiveState, CandidateState)) and source in node.quorum.voters:
        state.election.record(source, response.vote_granted)
    return True
