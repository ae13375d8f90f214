"""AddRaftVoter, RemoveRaftVoter and UpdateRaftVoter (KIP-853, APIs 80-82) on the leader, and the
upgrade of a static quorum to dynamic voters (``upgrade_kraft_version``, Kafka 4.1).

Kafka's rules (spec 12), in the order Kafka's handlers check them:

1. the cluster id; only the leader answers (NOT_LEADER_OR_FOLLOWER elsewhere);
2. ``kraft.version`` 0 (static voters) cannot change: UNSUPPORTED_VERSION;
3. one change at a time, and only once the leader knows its high watermark in its epoch (a record
   of its epoch committed, and with it any voter set written at the start of the epoch):
   REQUEST_TIMED_OUT otherwise, which tells the caller to retry;
4. per API: a new voter needs a directory id and an endpoint on the raft listener (INVALID_REQUEST),
   must not be a voter already (DUPLICATE_VOTER) and must be an observer that caught up with the
   leader recently (REQUEST_TIMED_OUT); a removed voter must be in the set by id and directory id
   (VOTER_NOT_FOUND);
5. the leader appends the new VotersRecord. It is in force at once, uncommitted (the new voter
   counts toward the majority that commits it), and the request is answered when it commits, or
   with REQUEST_TIMED_OUT at the request's timeout (the record stays and may still commit).

A leader that removed itself leads until the removal commits, then resigns (``RaftNode``).

Where we differ from Kafka 4.1: Kafka first sends ApiVersions to the new voter to check its
``kraft.version`` range; every kraft node supports 0..1, so this check is not made here. The
"caught up" test asks for a caught-up fetch within the check-quorum timeout, not Kafka's hour: an
observer that was caught up long ago but lags now would stall commits the moment it is added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kraft.common.errors import KraftError, NotLeaderError
from kraft.common.uuids import ZERO_UUID
from kraft.protocol.error_codes import ErrorCode
from kraft.raft.messages import (
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    Envelope,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
)
from kraft.raft.states import LeaderState, ReplicaProgress
from kraft.raft.types import Endpoint
from kraft.raft.voters import KRAFT_VERSION_1, VoterNode, VoterSet, key_text

if TYPE_CHECKING:
    from kraft.raft.node import RaftNode

VoterChangeResponse = AddRaftVoterResponse | RemoveRaftVoterResponse | UpdateRaftVoterResponse


@dataclass(slots=True)
class PendingVoterChange:
    """The one voter change in flight: answered when its record commits or at its deadline."""

    envelope: Envelope
    record_offset: int
    deadline_ms: int
    removes_leader: bool
    answered: bool = False


def _update_response(node: RaftNode, error: int) -> UpdateRaftVoterResponse:
    leader_id, epoch, endpoints = node.current_leader_fields()
    return UpdateRaftVoterResponse(
        error_code=error, leader_id=leader_id, leader_epoch=epoch, leader_endpoints=endpoints
    )


def response_for(
    node: RaftNode, envelope: Envelope, error: int, message: str | None = None
) -> VoterChangeResponse:
    """The answer to the voter change request in ``envelope``."""
    request = envelope.body
    if isinstance(request, AddRaftVoterRequest):
        return AddRaftVoterResponse(error_code=error, error_message=message)
    if isinstance(request, RemoveRaftVoterRequest):
        return RemoveRaftVoterResponse(error_code=error, error_message=message)
    return _update_response(node, error)


def _common_checks(node: RaftNode) -> tuple[int, str] | None:
    """Steps 1-3 of the module docstring: an (error, message) or None."""
    leader = node.leader_state()
    if leader is None or node.shutting_down:
        return ErrorCode.NOT_LEADER_OR_FOLLOWER, f"node {node.node_id} is not the leader"
    if node.kraft_version < KRAFT_VERSION_1:
        return (
            ErrorCode.UNSUPPORTED_VERSION,
            "the voter set is static (kraft.version 0): format the controllers with --standalone "
            "or --initial-controllers, or upgrade it with kraft features upgrade --feature kraft.version=1",
        )
    return _not_ready_to_write_voters(node, leader)


def _not_ready_to_write_voters(node: RaftNode, leader: LeaderState) -> tuple[int, str] | None:
    """Step 3: the leader writes a voter set only once it has committed in its epoch, and one
    at a time (REQUEST_TIMED_OUT: retry)."""
    hw = node.high_watermark
    if hw is None or hw <= leader.epoch_start_offset:
        return (
            ErrorCode.REQUEST_TIMED_OUT,
            f"the leader has not committed an offset in epoch {leader.epoch} yet; retry",
        )
    if node.voter_change_pending():
        return ErrorCode.REQUEST_TIMED_OUT, "another voter change is in progress; retry"
    return None


def _raft_listener_missing(node: RaftNode, listeners: tuple[Endpoint, ...]) -> str | None:
    if not node.local_endpoints:
        return None  # a core without listeners (tests): nothing to compare with
    name = node.local_endpoints[0].name
    if any(e.name == name for e in listeners):
        return None
    return f"the listeners {[str(e) for e in listeners]} have no endpoint on the raft listener {name}"


def handle_add_raft_voter(
    node: RaftNode, envelope: Envelope, request: AddRaftVoterRequest, now_ms: int
) -> AddRaftVoterResponse | None:
    if not node.valid_cluster_id(request.cluster_id):
        return AddRaftVoterResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)
    key = request.voter_key
    if key.id < 0 or key.directory_id == ZERO_UUID:
        return AddRaftVoterResponse(
            error_code=ErrorCode.INVALID_REQUEST,
            error_message=f"a new voter needs a node id and a directory id, got {key_text(key)}",
        )
    missing = _raft_listener_missing(node, request.listeners)
    if missing is not None:
        return AddRaftVoterResponse(error_code=ErrorCode.INVALID_REQUEST, error_message=missing)
    problem = _common_checks(node)
    if problem is not None:
        return AddRaftVoterResponse(error_code=problem[0], error_message=problem[1])
    voters = node.voter_set
    if key.id in voters:
        return AddRaftVoterResponse(
            error_code=ErrorCode.DUPLICATE_VOTER,
            error_message=f"node {key.id} is already a voter (the voters are {voters})",
        )
    leader = node.leader_state()
    assert leader is not None
    progress = leader.observers.get(key)
    horizon = now_ms - node.config.check_quorum_timeout_ms
    if progress is None or progress.last_caught_up_ms < 0 or progress.last_caught_up_ms < horizon:
        return AddRaftVoterResponse(
            error_code=ErrorCode.REQUEST_TIMED_OUT,
            error_message=(
                f"replica {key_text(key)} is not an observer that caught up with the "
                f"leader in the last {node.config.check_quorum_timeout_ms} ms; start it and retry"
            ),
        )
    added = voters.add(VoterNode(key, request.listeners))
    assert added is not None
    timeout_ms = request.timeout_ms if request.timeout_ms > 0 else node.config.request_timeout_ms
    node.append_voter_set(added, envelope, now_ms + timeout_ms, removes_leader=False)
    return None


def handle_remove_raft_voter(
    node: RaftNode, envelope: Envelope, request: RemoveRaftVoterRequest, now_ms: int
) -> RemoveRaftVoterResponse | None:
    if not node.valid_cluster_id(request.cluster_id):
        return RemoveRaftVoterResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)
    problem = _common_checks(node)
    if problem is not None:
        return RemoveRaftVoterResponse(error_code=problem[0], error_message=problem[1])
    voters = node.voter_set
    key = request.voter_key
    removed = voters.remove(key)
    if removed is None:
        why = "it is the only voter" if voters.is_voter(key) else f"the voters are {voters}"
        return RemoveRaftVoterResponse(
            error_code=ErrorCode.VOTER_NOT_FOUND,
            error_message=f"cannot remove voter {key_text(key)}: {why}",
        )
    leader = node.leader_state()
    assert leader is not None
    live = _live_voters(node, leader, removed, now_ms)
    if len(live) < removed.majority:
        # Past Kafka, which appends it anyway: the removal commits only on a majority of the new
        # set, so with fewer of its voters reachable it never commits, and the new set, in force
        # uncommitted, keeps every node from committing or electing a leader until they return
        # (for good, when a lost disk is among them). Found by: kraft sim run --scenario
        # voter-changes --seed 7119.
        return RemoveRaftVoterResponse(
            error_code=ErrorCode.REQUEST_TIMED_OUT,
            error_message=(
                f"cannot remove voter {key_text(key)} now: of the voters that would remain, "
                f"{removed}, only {sorted(live)} fetched from the leader in the last "
                f"{node.config.check_quorum_timeout_ms} ms, short of a majority of "
                f"{removed.majority}; remove an unreachable voter first, or retry when they are back"
            ),
        )
    node.append_voter_set(
        removed, envelope, now_ms + node.config.request_timeout_ms, removes_leader=key.id == node.node_id
    )
    return None


def _live_voters(node: RaftNode, leader: LeaderState, voters: VoterSet, now_ms: int) -> list[int]:
    """The voters of ``voters`` that can vote for its record now: this leader, if one of them,
    and each voter (by id and directory id) that fetched within the check-quorum timeout."""
    horizon = now_ms - node.config.check_quorum_timeout_ms
    live = []
    for voter_id in voters.ids:
        progress = leader.voters.get(voter_id)
        if voter_id == leader.local_key.id:
            if voters.is_voter(leader.local_key):
                live.append(voter_id)
        elif progress is not None and voters.is_voter(progress.key) and progress.last_fetch_ms >= horizon:
            live.append(voter_id)
    return live


def handle_update_raft_voter(
    node: RaftNode, envelope: Envelope, request: UpdateRaftVoterRequest, now_ms: int
) -> UpdateRaftVoterResponse | None:
    if not node.valid_cluster_id(request.cluster_id):
        return UpdateRaftVoterResponse(error_code=ErrorCode.INCONSISTENT_CLUSTER_ID)

    def respond(error: int) -> UpdateRaftVoterResponse:
        return _update_response(node, error)

    error = node.validate_leader_only(request.current_leader_epoch)
    if error is not None:
        return respond(error)
    if request.listeners and _raft_listener_missing(node, request.listeners) is not None:
        return respond(ErrorCode.INVALID_REQUEST)
    level = node.kraft_version
    if not request.min_kraft_version <= level <= request.max_kraft_version:
        return respond(ErrorCode.INVALID_REQUEST)
    problem = _common_checks(node)
    if problem is not None:
        return respond(problem[0])
    voters = node.voter_set
    current = voters.node(request.voter_key.id)
    if current is None or not current.is_voter(request.voter_key):
        return respond(ErrorCode.VOTER_NOT_FOUND)
    wanted = VoterNode(
        current.key,
        request.listeners or current.endpoints,
        request.min_kraft_version,
        request.max_kraft_version,
    )
    if wanted == current:
        return respond(ErrorCode.NONE)
    updated = voters.update(wanted)
    assert updated is not None
    node.append_voter_set(updated, envelope, now_ms + node.config.request_timeout_ms, removes_leader=False)
    return None


def leader_progress_after_change(state: LeaderState, voters: VoterSet) -> None:
    """Move replicas between the leader's voter and observer progress maps for ``voters``."""
    for voter in voters:
        progress = state.voters.get(voter.key.id)
        if progress is not None:
            continue
        moved = state.observers.pop(voter.key, None)
        if moved is None:
            # An observer fetching without a directory id, or one not seen yet.
            for observer_key in [k for k in state.observers if k.id == voter.key.id]:
                moved = state.observers.pop(observer_key)
        if moved is None:
            moved = ReplicaProgress(voter.key)
        state.voters[voter.key.id] = moved
    for voter_id in [v for v in state.voters if v not in voters]:
        progress = state.voters.pop(voter_id)
        if voter_id != state.local_key.id:
            state.observers[progress.key] = progress
    state.fetched_voters &= voters.ids


def upgrade_kraft_version(node: RaftNode, version: int, *, validate_only: bool, now_ms: int) -> int | None:
    """Leader: move a static quorum (kraft.version 0) to dynamic voters (1), as Kafka 4.1's
    ``RaftClient.upgradeKRaftVersion`` (KAFKA-16538). Appends one control batch, a KRaftVersion
    record and a VotersRecord of the static voters with the directory ids their fetches carried,
    and returns the offset to wait on for its commit; None when there is nothing to append (the
    level is already in force, or ``validate_only``).

    Kafka also waits to learn every voter's supported kraft.version range (from the voters'
    UpdateRaftVoter requests); every kraft node supports 0..1, so only the directory ids are
    needed here. After the commit the voter set lives in the log, and the static
    ``controller.quorum.voters`` no longer counts (docs/operations.md says how to reconfigure).

    Raises:
        NotLeaderError: not the leader.
        KraftError: the refusal, in words for the UpdateFeatures answer.
    """
    leader = node.leader_state()
    if leader is None or node.shutting_down:
        raise NotLeaderError(f"node {node.node_id} is not the leader")
    current = node.kraft_version
    if version == current:
        return None
    if version < current:
        raise KraftError(f"kraft.version cannot be downgraded from {current} to {version}")
    if version != KRAFT_VERSION_1:
        raise KraftError(f"kraft.version {version} is not supported (0 and 1 are)")
    problem = _not_ready_to_write_voters(node, leader)
    if problem is not None:
        raise KraftError(problem[1])
    voters: list[VoterNode] = []
    unknown: list[int] = []
    for voter in node.voter_set:
        key = leader.local_key if voter.key.id == leader.local_key.id else leader.voters[voter.key.id].key
        if key.directory_id == ZERO_UUID:
            unknown.append(voter.key.id)
        voters.append(VoterNode(key, voter.endpoints))
    if unknown:
        raise KraftError(
            f"the directory ids of voters {unknown} are not known yet (each voter tells the leader in "
            "its fetches): wait until every voter is up and fetching, then retry"
        )
    if validate_only:
        return None
    return node.append_kraft_upgrade(VoterSet(voters), version)
