"""``RaftNode``: the sans-IO KRaft consensus core (KIP-595 with KIP-996 Pre-Vote and KIP-836).

The contract, like etcd's Ready loop:

1. ``poll(now_ms, inbound)`` never blocks, never reads a clock, never touches a socket or file
   except through the injected ``log`` and ``store``. It handles the inbound envelopes, runs the
   timers of the current role, drains the leader's accumulator (append + flush), advances the high
   watermark, calls listeners with newly committed data and returns the outbound envelopes with
   the absolute time by which ``poll`` must run again.
2. Durable writes precede the messages that depend on them: election state goes through
   ``store.write`` inside the transition, and log appends are flushed inside ``poll`` before any
   Fetch or response that reveals them, so program order gives "persist before send".
3. Same inputs and the same ``rng`` give the same outputs.

Handlers live in one module per RPC (``vote``, ``begin_epoch``, ``end_epoch``, ``fetch``,
``fetch_snapshot``, ``describe_quorum``); this module owns dispatch, common response handling
(spec 3.3), role polling and the client API.
"""

from __future__ import annotations

import enum
import random
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import assert_never

from kraft.common.errors import FatalError, KraftError, NotLeaderError
from kraft.common.uuids import ZERO_UUID
from kraft.protocol.error_codes import ErrorCode
from kraft.raft import begin_epoch, describe_quorum, end_epoch, fetch, fetch_snapshot, reconfig, vote
from kraft.raft.accumulator import BatchAccumulator
from kraft.raft.config import LEGACY_ELECTION_BACKOFF_BASE_MS, QuorumConfig
from kraft.raft.listener import (
    CommittedBatch,
    CommittedBatchCache,
    ListenerContext,
    RaftListener,
    SnapshotReader,
    SnapshotWriter,
)
from kraft.raft.log import ReplicatedLog
from kraft.raft.messages import (
    REQUEST_TYPES,
    AddRaftVoterRequest,
    AddRaftVoterResponse,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    Envelope,
    FetchRequest,
    FetchResponse,
    FetchSnapshotRequest,
    FetchSnapshotResponse,
    LeaderInfoResponse,
    RaftRequest,
    RaftResponse,
    RemoveRaftVoterRequest,
    RemoveRaftVoterResponse,
    UpdateRaftVoterRequest,
    UpdateRaftVoterResponse,
    VoteRequest,
    VoteResponse,
)
from kraft.raft.metrics import RaftMetrics
from kraft.raft.quorum_state import QuorumState, random_election_timeout_ms
from kraft.raft.request_manager import RequestManager
from kraft.raft.states import (
    CandidateState,
    EpochElection,
    FollowerState,
    LeaderState,
    ProspectiveState,
    ResignedState,
    Role,
    UnattachedState,
)
from kraft.raft.store import ElectionStore
from kraft.raft.types import Endpoint, LeaderAndEpoch, OffsetAndEpoch, ReplicaKey
from kraft.raft.voters import (
    KRAFT_VERSION_1,
    SNAPSHOT_PREFIX_BYTES,
    VoterSet,
    VoterSetHistory,
    snapshot_voters,
)
from kraft.records.batch import iter_batch_headers
from kraft.records.control import ControlType, control_record, kraft_version_record, leader_change_message

__all__ = [
    "CommittedBatch",
    "LeaderAndEpoch",
    "PollResult",
    "QuorumConfig",
    "RaftListener",
    "RaftNode",
    "Role",
    "SnapshotReader",
    "SnapshotWriter",
]

_IDLE_WAKE_MS = 60_000


@dataclass(slots=True)
class PollResult:
    outbound: list[Envelope]
    wake_at_ms: int


class Outcome(enum.Enum):
    """Result of the common response handling (spec 3.3), ``RaftNode.preprocess_response``."""

    HANDLED = enum.auto()  # done, no backoff
    FAILED = enum.auto()  # done, back off before the next request to that destination
    CONTINUE = enum.auto()  # run the API-specific handler


@dataclass(slots=True)
class ParkedFetch:
    envelope: Envelope
    deadline_ms: int
    high_watermark: int | None


class RaftNode:
    """One replica of the metadata quorum. See the module docstring for the poll contract."""

    def __init__(
        self,
        *,
        node_id: int | None,
        directory_id: uuid.UUID,
        cluster_id: str,
        config: QuorumConfig,
        log: ReplicatedLog,
        store: ElectionStore,
        rng: random.Random,
        now_ms: int,
        local_endpoints: tuple[Endpoint, ...] = (),
        batch_cache: CommittedBatchCache | None = None,
    ) -> None:
        self.node_id = node_id
        # Opt-in memo of decoded committed batches, shared by nodes in one process (simulator).
        self._batch_cache = batch_cache
        self.directory_id = directory_id
        self.cluster_id = cluster_id
        self.config = config
        self.log = log
        self.rng = rng
        self.local_endpoints = local_endpoints
        self.local_key = None if node_id is None else ReplicaKey(node_id, directory_id)
        # KIP-853: the voter set in force follows the control records of the snapshot and the log.
        self._history = VoterSetHistory(VoterSet.static(config.voters))
        self._load_voter_history()
        self.quorum = QuorumState(
            local_key=self.local_key, config=config, store=store, rng=rng, history=self._history
        )
        self.quorum.initialize(log_end_epoch=log.last_fetched_epoch(), now_ms=now_ms)
        self.requests = RequestManager(
            request_timeout_ms=config.request_timeout_ms, retry_backoff_ms=config.retry_backoff_ms
        )
        self.metrics = RaftMetrics(now_ms)
        self._outbound: list[Envelope] = []
        self._next_correlation_id = 1
        self._hw: int | None = None  # None = unknown (a new leader until a majority fetched)
        self._committed = 0  # largest high watermark ever known: listeners read below it
        self._parked: list[ParkedFetch] = []
        # The leader appended records that are not fsynced yet (see _drain_accumulator).
        self._leader_flush_pending = False
        self._listeners: list[ListenerContext] = []
        self._accumulator: BatchAccumulator | None = None
        # (last offset, creation time, record count) of leader batches not yet committed
        self._pending_commit_times: list[tuple[int, int, int]] = []
        # This leader's own data batches of its epoch, by base offset, until every listener has
        # them: handed over as appended, never decoded back from the log (as Kafka's leader does).
        self._own_batches: dict[int, CommittedBatch] = {}
        self._shutdown_deadline_ms: int | None = None
        self._shutdown_complete = False
        self._bootstrap_ids = self._bootstrap_destinations()
        # The one voter change (KIP-853) this leader is committing, with the request to answer.
        self._voter_change: reconfig.PendingVoterChange | None = None
        self.metrics.on_state(self, now_ms)
        # Spec 1.2 rule 6: a sole voter elects itself at once.
        if self.is_voter and len(self.voter_set) == 1:
            if isinstance(self.quorum.state, ResignedState):
                self.quorum.state.election_deadline_ms = now_ms
            elif isinstance(self.quorum.state, (UnattachedState, FollowerState)):
                self._start_election(now_ms)

    # ---- observation -------------------------------------------------------------------------

    # role and epoch read the state directly (one property hop less): they are read on every poll.
    @property
    def role(self) -> Role:
        return self.quorum.state.role

    @property
    def epoch(self) -> int:
        return self.quorum.state.epoch

    @property
    def leader_id(self) -> int | None:
        return self.quorum.leader_id

    @property
    def voted_key(self) -> ReplicaKey | None:
        return self.quorum.voted_key

    @property
    def high_watermark(self) -> int | None:
        return self._hw

    @property
    def committed_offset(self) -> int:
        """The largest high watermark this node has known since it started (0 if none)."""
        return self._committed

    @property
    def is_voter(self) -> bool:
        return self.quorum.is_voter

    @property
    def voter_set(self) -> VoterSet:
        """The voters in force: the latest VotersRecord of snapshot and log (even uncommitted),
        else the static ``controller.quorum.voters``."""
        return self._history.latest()

    @property
    def kraft_version(self) -> int:
        return self._history.kraft_version()

    @property
    def voter_history(self) -> VoterSetHistory:
        """The voter sets by log offset (read-only use: simulator invariants, tools)."""
        return self._history

    @property
    def shutting_down(self) -> bool:
        return self._shutdown_deadline_ms is not None

    @property
    def _fallback_ids(self) -> list[int]:
        """Where a follower's fetches go when the leader's endpoint fails: an observer uses the
        discovery destinations (bootstrap servers, else the voters), a voter only configured
        bootstrap servers (other voters cannot serve it; its fetch timeout starts an election)."""
        return self._bootstrap_ids if not self.is_voter or self.config.bootstrap_servers else []

    def voter_key_of(self, voter_id: int) -> ReplicaKey:
        """The key to address voter ``voter_id`` by (its directory id once the log has one)."""
        node = self._history.latest().node(voter_id)
        return ReplicaKey(voter_id) if node is None else node.key

    @property
    def source_id(self) -> int:
        return -1 if self.node_id is None else self.node_id

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return LeaderAndEpoch(self.quorum.leader_id, self.quorum.epoch)

    def leader_state(self) -> LeaderState | None:
        s = self.quorum.state
        return s if isinstance(s, LeaderState) else None

    # ---- poll --------------------------------------------------------------------------------

    def poll(self, now_ms: int, inbound: Iterable[Envelope] = ()) -> PollResult:
        if self._shutdown_complete:
            return PollResult([], now_ms + _IDLE_WAKE_MS)
        self._flush_leader_log(now_ms)
        for envelope in inbound:
            self._dispatch(envelope, now_ms)
        self._poll_current_state(now_ms)
        self._complete_parked_fetches(now_ms)
        if self._leader_flush_pending and (not self._outbound or self._shutdown_deadline_ms is not None):
            self._flush_leader_log(now_ms)  # nothing to send first: no reason to wait
            self._complete_parked_fetches(now_ms)
        self._update_listeners()
        self._maybe_delete_before_snapshot()
        if self._shutdown_deadline_ms is not None and self.is_shutdown_complete(now_ms):
            self._shutdown_complete = True
        wake_at_ms = self._next_wake_ms(now_ms)
        out, self._outbound = self._outbound, []
        self.metrics.on_poll(self, now_ms, wake_at_ms)
        return PollResult(out, wake_at_ms)

    def _dispatch(self, envelope: Envelope, now_ms: int) -> None:
        body = envelope.body
        if envelope.is_request:
            response = self._handle_request(envelope, now_ms)
            if response is not None:
                self.respond(envelope, response)
            return
        assert not isinstance(body, REQUEST_TYPES)
        if not self.requests.is_response_expected(envelope.source, envelope.correlation_id):
            return  # a response to a request we no longer wait for (timed out or role changed)
        self.requests.on_response(envelope.source, success=True, now_ms=now_ms)
        before = self.quorum.state
        ok = self._handle_response(envelope, body, now_ms)
        if isinstance(body, (FetchResponse, FetchSnapshotResponse)) and self.quorum.state is before:
            if isinstance(before, FollowerState):
                before.fetch_before_resignation = False  # answered (see _poll_follower)
                # Useful only from where this follower fetches (success sets ``fetch_via``): an
                # answer from another bootstrap server that taught nothing is a failure too.
                ok = ok and envelope.source in (before.leader_id, before.fetch_via)
                if not ok:
                    self._on_fetch_failed(before, envelope.source)
            elif isinstance(before, UnattachedState):
                ok = False  # a discovery answer that found no leader: back off, do not spin
        if not ok:
            self.requests.backoff(envelope.source, now_ms)

    def _handle_request(self, envelope: Envelope, now_ms: int) -> RaftResponse | None:
        body: RaftRequest = envelope.body  # type: ignore[assignment]
        match body:  # (the classes are disjoint: Fetch, by far the most frequent, is tried first)
            case FetchRequest():
                return fetch.handle_fetch_request(self, envelope, body, now_ms, may_park=True)
            case VoteRequest():
                return vote.handle_vote_request(self, body, now_ms)
            case BeginQuorumEpochRequest():
                return begin_epoch.handle_begin_quorum_epoch_request(self, body, now_ms)
            case EndQuorumEpochRequest():
                return end_epoch.handle_end_quorum_epoch_request(self, body, now_ms)
            case FetchSnapshotRequest():
                return fetch_snapshot.handle_fetch_snapshot_request(self, body, now_ms)
            case DescribeQuorumRequest():
                return self.describe_quorum(now_ms)
            case AddRaftVoterRequest():
                return reconfig.handle_add_raft_voter(self, envelope, body, now_ms)
            case RemoveRaftVoterRequest():
                return reconfig.handle_remove_raft_voter(self, envelope, body, now_ms)
            case UpdateRaftVoterRequest():
                return reconfig.handle_update_raft_voter(self, envelope, body, now_ms)
        raise FatalError(f"unknown request {body!r}")  # pragma: no cover

    def _handle_response(self, envelope: Envelope, body: RaftResponse, now_ms: int) -> bool:
        """Whether ``body`` counts as a success for the request manager (else: back off)."""
        if isinstance(body, (DescribeQuorumResponse, AddRaftVoterResponse, RemoveRaftVoterResponse)):
            return True  # the core never asks these; nothing in them concerns the quorum
        outcome = self.preprocess_response(body, now_ms)
        if outcome is not Outcome.CONTINUE:
            return outcome is Outcome.HANDLED
        # The API-specific part, once spec 3.3 let the response through.
        match body:  # (disjoint classes, Fetch first as above)
            case FetchResponse():
                return fetch.handle_fetch_response(self, envelope.source, body, now_ms)
            case VoteResponse():
                return vote.handle_vote_response(self, envelope.source, body, now_ms)
            case BeginQuorumEpochResponse():
                return begin_epoch.handle_begin_quorum_epoch_response(self, envelope.source, body, now_ms)
            case EndQuorumEpochResponse():
                return end_epoch.handle_end_quorum_epoch_response(self, envelope.source, body, now_ms)
            case FetchSnapshotResponse():
                return fetch_snapshot.handle_fetch_snapshot_response(self, envelope.source, body, now_ms)
            case UpdateRaftVoterResponse():
                return True  # done: the leader answers once the new voter set has committed
        assert_never(body)

    # ---- sending -----------------------------------------------------------------------------

    def send(self, destination: int, body: RaftRequest, now_ms: int) -> None:
        correlation_id = self._next_correlation_id
        self._next_correlation_id += 1
        self.requests.on_request_sent(destination, correlation_id, now_ms)
        self._outbound.append(Envelope(self.source_id, destination, correlation_id, body))

    def respond(self, request: Envelope, body: RaftResponse) -> None:
        self._outbound.append(Envelope(self.source_id, request.source, request.correlation_id, body))

    # ---- shared validation (spec 3.2) and response handling (spec 3.3) ---------------------

    def valid_cluster_id(self, cluster_id: str | None) -> bool:
        return cluster_id is None or cluster_id == self.cluster_id

    def validate_voter_only(self, sender_id: int, epoch: int) -> ErrorCode | None:
        if sender_id < 0:
            return ErrorCode.INVALID_REQUEST
        if epoch < self.epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        return None

    def validate_leader_only(self, epoch: int) -> ErrorCode | None:
        if epoch < self.epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if epoch > self.epoch:
            return ErrorCode.UNKNOWN_LEADER_EPOCH
        if not isinstance(self.quorum.state, LeaderState):
            return ErrorCode.NOT_LEADER_OR_FOLLOWER
        if self._shutdown_deadline_ms is not None:
            return ErrorCode.BROKER_NOT_AVAILABLE
        return None

    def valid_voter_key(self, voter_key: ReplicaKey) -> bool:
        if voter_key.id < 0:
            return True
        if voter_key.id != self.node_id:
            return False
        return voter_key.directory_id == ZERO_UUID or voter_key.directory_id == self.directory_id

    def current_leader_fields(self) -> tuple[int, int, tuple[Endpoint, ...]]:
        leader = self.quorum.leader_id
        return (
            -1 if leader is None else leader,
            self.epoch,
            self.quorum.leader_endpoints(leader) if leader != self.node_id else self.local_endpoints,
        )

    def handle_common_response(
        self,
        *,
        error: int,
        epoch: int,
        leader_id: int,
        endpoints: tuple[Endpoint, ...],
        now_ms: int,
    ) -> Outcome:
        leader = None if leader_id < 0 else leader_id
        if epoch < self.epoch or error == ErrorCode.UNKNOWN_LEADER_EPOCH:
            return Outcome.HANDLED
        if (
            epoch > self.epoch
            or error == ErrorCode.FENCED_LEADER_EPOCH
            or error == ErrorCode.NOT_LEADER_OR_FOLLOWER
        ):
            changed = self.maybe_transition(leader, epoch, endpoints, now_ms)
            # Nothing new learned (e.g. our leader resigned but no successor yet): back off rather
            # than spin on the same answer.
            return Outcome.HANDLED if changed else Outcome.FAILED
        if (
            epoch == self.epoch
            and leader is not None
            and (self.quorum.leader_id is None or isinstance(self.quorum.state, UnattachedState))
        ):
            # Learn (or, Unattached with a leader id it could not reach, rejoin) the leader of our
            # epoch; with NONE go on, so a discovery Fetch answered by the leader (perhaps through
            # a bootstrap address) is appended at once instead of dropped and sent again.
            self.maybe_transition(leader, epoch, endpoints, now_ms)
            return Outcome.CONTINUE if error == ErrorCode.NONE else Outcome.HANDLED
        if error == ErrorCode.BROKER_NOT_AVAILABLE:
            return Outcome.FAILED
        if error == ErrorCode.INVALID_VOTER_KEY:
            return Outcome.HANDLED
        if error == ErrorCode.INVALID_REQUEST:
            raise FatalError("a peer rejected our request as INVALID_REQUEST: this is a bug")
        return Outcome.CONTINUE

    def preprocess_response(self, response: LeaderInfoResponse, now_ms: int) -> Outcome:
        """Spec 3.3, applied to every raft response before its API-specific part.

        Returns ``CONTINUE`` when the API handler should go on; else the response is dealt with,
        as a success (``HANDLED``) or a failure to back off from (``FAILED``).
        """
        if response.error_code != ErrorCode.NONE:
            return self.handle_top_level_error(response, now_ms)
        match response:  # where each response carries the sender's view of the quorum
            case FetchResponse() | FetchSnapshotResponse():
                error = response.partition_error_code
                epoch, leader_id = response.current_leader_epoch, response.current_leader_id
            case VoteResponse() | BeginQuorumEpochResponse() | EndQuorumEpochResponse():
                error = response.partition_error_code
                epoch, leader_id = response.leader_epoch, response.leader_id
            case UpdateRaftVoterResponse():  # no partition level
                error = ErrorCode.NONE
                epoch, leader_id = response.leader_epoch, response.leader_id
            case _:
                assert_never(response)
        return self.handle_common_response(
            error=error, epoch=epoch, leader_id=leader_id, endpoints=response.leader_endpoints, now_ms=now_ms
        )

    def handle_top_level_error(self, response: LeaderInfoResponse, now_ms: int) -> Outcome:
        error = response.error_code
        if error == ErrorCode.CLUSTER_AUTHORIZATION_FAILED:
            raise FatalError("cluster authorization failed")
        if (
            error == ErrorCode.UNSUPPORTED_VERSION
            and isinstance(response, VoteResponse)
            and isinstance(self.quorum.state, ProspectiveState)
        ):
            # Spec 3.4: the peer cannot take a pre-vote (no Vote v2): fall back to a real election.
            self._transition_to_candidate(now_ms)
            return Outcome.HANDLED
        return Outcome.FAILED

    def maybe_transition(
        self, leader_id: int | None, epoch: int, endpoints: tuple[Endpoint, ...], now_ms: int
    ) -> bool:
        """Follow what a peer says about (leader, epoch). Returns whether the state changed."""
        local = self.quorum.leader_id
        if leader_id is not None:
            if epoch == self.epoch and local is not None and local != leader_id:
                raise FatalError(f"epoch {epoch} has leader {local} locally but a peer says {leader_id}")
            if leader_id == self.node_id and not (
                epoch == self.epoch and isinstance(self.quorum.state, (LeaderState, ResignedState))
            ):
                if self.config.voters:  # static voters: a node id is one disk, this is a bug
                    raise FatalError(
                        f"a peer says this node leads epoch {epoch}, but it is {self.quorum.state}"
                    )
                # KIP-853: this node id led that epoch with another disk (the directory was
                # replaced; this one is an observer until it is added back). Take the epoch, not
                # the leadership: the next leader will be elected in a later epoch.
                if epoch > self.epoch:
                    self.transition_to_unattached(epoch, now_ms)
                    return True
                return False
        if epoch > self.epoch:
            if leader_id is not None:
                self.transition_to_follower(epoch, leader_id, endpoints, now_ms)
            else:
                self.transition_to_unattached(epoch, now_ms)
            return True
        if epoch == self.epoch and leader_id is not None and leader_id != self.node_id:
            state = self.quorum.state
            more_endpoints = (
                isinstance(state, FollowerState)
                and bool(endpoints)
                and (set(endpoints) - set(state.leader_endpoints))
            )
            learns = local is None or more_endpoints or isinstance(state, UnattachedState)
            following = isinstance(state, (ProspectiveState, CandidateState, UnattachedState, FollowerState))
            if learns and following:
                self.transition_to_follower(epoch, leader_id, endpoints, now_ms)
                return True
        return False

    # ---- transitions (quorum state + the node's own bookkeeping) -----------------------------

    def _after_transition(self, previous: Role, now_ms: int) -> None:
        self.requests.reset()
        if previous is Role.LEADER and not isinstance(self.quorum.state, LeaderState):
            self._accumulator = None
            # Spec 10: commit latency is a leader metric; batches left uncommitted are either
            # committed later by another leader or truncated, neither is this leader's latency.
            self._pending_commit_times.clear()
            self._fail_parked_fetches()
            change, self._voter_change = self._voter_change, None
            if change is not None and not change.answered:
                # Kafka answers NOT_LEADER_OR_FOLLOWER too: the record may still commit under the
                # next leader; the caller asks the new leader (describe) to find out.
                self.respond(
                    change.envelope,
                    reconfig.response_for(
                        self, change.envelope, ErrorCode.NOT_LEADER_OR_FOLLOWER, "leadership changed"
                    ),
                )
        self.metrics.on_state(self, now_ms)

    def transition_to_unattached(self, epoch: int, now_ms: int, leader_id: int | None = None) -> None:
        previous = self.role
        self.quorum.transition_to_unattached(epoch, now_ms, leader_id=leader_id)
        self._after_transition(previous, now_ms)

    def transition_to_unattached_voted(self, candidate: ReplicaKey, now_ms: int) -> None:
        previous = self.role
        self.quorum.transition_to_unattached_voted(candidate, now_ms)
        self._after_transition(previous, now_ms)

    def transition_to_follower(
        self, epoch: int, leader_id: int, endpoints: tuple[Endpoint, ...], now_ms: int
    ) -> None:
        previous = self.role
        if self.quorum.is_leader_reachable(leader_id, endpoints):
            self.quorum.transition_to_follower(epoch, leader_id, endpoints, now_ms)
        else:
            self.quorum.transition_to_unattached(epoch, now_ms, leader_id=leader_id)
        self._after_transition(previous, now_ms)

    def _start_election(self, now_ms: int) -> None:
        previous = self.role
        if self.config.pre_vote_enabled:
            self.quorum.transition_to_prospective(now_ms)
        else:
            self.quorum.transition_to_candidate(now_ms)
        self._after_transition(previous, now_ms)

    def _transition_to_candidate(self, now_ms: int, retries: int = 1) -> None:
        previous = self.role
        self.quorum.transition_to_candidate(now_ms, retries=retries)
        self._after_transition(previous, now_ms)

    def _transition_to_leader(self, now_ms: int) -> None:
        previous = self.role
        # Spec 4.5: accumulator at LEO, durable transition, epoch cache entry, LeaderChange batch.
        epoch_start = self.log.end_offset()
        leader = self.quorum.transition_to_leader(epoch_start, now_ms)
        self.log.initialize_leader_epoch(leader.epoch)
        self._hw = None  # a new leader does not inherit the high watermark
        self._accumulator = BatchAccumulator(
            epoch=leader.epoch,
            next_offset=epoch_start,
            max_batch_size_bytes=self.config.max_batch_size_bytes,
            linger_ms=self.config.append_linger_ms,
        )
        message = leader_change_message(
            leader.local_key.id, sorted(self.voter_set.ids), leader.granting_voters
        )
        control = [control_record(ControlType.LEADER_CHANGE, message)]
        if self.kraft_version >= KRAFT_VERSION_1 and not self._history.in_log():
            # KIP-853 (Kafka's appendStartOfEpochControlRecords): a voter set known only from the
            # bootstrap checkpoint goes into the log, so replicas formatted without one (observers
            # to be added) learn it, and snapshots carry it once the checkpoint is gone.
            control.append(
                control_record(ControlType.KRAFT_VERSION, kraft_version_record(self.kraft_version))
            )
            control.append(control_record(ControlType.KRAFT_VOTERS, self.voter_set.to_record()))
        self._accumulator.append_control(control, now_ms)
        self._after_transition(previous, now_ms)

    def _transition_to_resigned(self, now_ms: int) -> None:
        leader = self.leader_state()
        if leader is None:
            raise FatalError(f"only a leader can resign, not {self.quorum.state}")
        remote = [p for v, p in leader.voters.items() if v != self.node_id]
        # Preferred successors: the most caught-up voters first (spec 3.6).
        remote.sort(key=lambda p: (-(p.end_offset if p.end_offset is not None else -1), p.key.id))
        previous = self.role
        self.quorum.transition_to_resigned(tuple(p.key for p in remote), now_ms)
        self._after_transition(previous, now_ms)

    # ---- per-role polling ----------------------------------------------------------------------

    def _poll_current_state(self, now_ms: int) -> None:
        quorum = self.quorum
        for _ in range(8):  # each pass may move to another role that acts at once
            state = quorum.state
            role, epoch = state.role, state.epoch
            self._poll_role(now_ms)
            state = quorum.state
            if state.role is role and state.epoch == epoch:
                return

    def _poll_role(self, now_ms: int) -> None:
        state = self.quorum.state
        match state:
            case LeaderState():
                self._poll_leader(state, now_ms)
            case CandidateState():
                self._poll_candidate(state, now_ms)
            case ProspectiveState():
                self._poll_prospective(state, now_ms)
            case FollowerState():
                self._poll_follower(state, now_ms)
            case UnattachedState():
                self._poll_unattached(state, now_ms)
            case ResignedState():
                self._poll_resigned(state, now_ms)

    def _poll_leader(self, state: LeaderState, now_ms: int) -> None:
        if self._shutdown_deadline_ms is not None:
            # Kafka's pollLeader: a node that (still) leads while shutting down resigns at once,
            # e.g. a shutting-down Candidate that won its election.
            self._transition_to_resigned(now_ms)
            return
        if state.check_quorum_deadline_ms is not None and now_ms >= state.check_quorum_deadline_ms:
            if self._check_quorum_met(state):
                self._reset_check_quorum(state, now_ms)
            else:
                # Leader progress timeout (KIP-595): a majority stopped fetching; stop being a zombie.
                self._transition_to_resigned(now_ms)
                return
        self._drain_accumulator(state, now_ms)
        if self._voter_change is not None and self._poll_voter_change(state, self._voter_change, now_ms):
            return
        if now_ms >= state.begin_quorum_epoch_deadline_ms:
            half = self.config.fetch_timeout_ms // 2
            for voter_id, progress in state.voters.items():
                if voter_id == self.node_id:
                    continue
                if progress.last_fetch_ms >= 0 and progress.last_fetch_ms >= now_ms - half:
                    continue
                if self.requests.is_ready(voter_id, now_ms):
                    self.send(voter_id, begin_epoch.build_begin_quorum_epoch_request(self, voter_id), now_ms)
            state.begin_quorum_epoch_deadline_ms = now_ms + max(half, 1)

    def _check_quorum_met(self, state: LeaderState) -> bool:
        """A majority of the voters in force fetched (the leader counts while it is one)."""
        voters = self.voter_set
        heard = len(state.fetched_voters) + (1 if state.local_key.id in voters else 0)
        return heard >= voters.majority

    def _reset_check_quorum(self, state: LeaderState, now_ms: int) -> None:
        state.fetched_voters.clear()
        if state.check_quorum_deadline_ms is not None:
            state.check_quorum_deadline_ms = now_ms + self.config.check_quorum_timeout_ms

    def record_voter_contact(self, state: LeaderState, voter_id: int, now_ms: int) -> None:
        """A voter fetched (or fetched a snapshot): counts towards check-quorum."""
        if voter_id == self.node_id or voter_id not in state.voters:
            return
        state.fetched_voters.add(voter_id)
        if self._check_quorum_met(state):
            self._reset_check_quorum(state, now_ms)

    def _drain_accumulator(self, state: LeaderState, now_ms: int) -> None:
        acc = self._accumulator
        if acc is None or not acc.needs_drain(now_ms):
            return
        drained = acc.drain(now_ms)
        if not drained:
            return
        records = 0
        for batch in drained:
            info = self.log.append_as_leader(batch.data, state.epoch)
            if info.first_offset != batch.base_offset or info.last_offset != batch.last_offset:
                raise FatalError(
                    f"leader append landed at [{info.first_offset}, {info.last_offset}], the accumulator "
                    f"assigned [{batch.base_offset}, {batch.last_offset}]"
                )
            if batch.is_control:
                self.on_log_appended(batch.data, now_ms)
            elif self._listeners:
                self._own_batches[batch.base_offset] = CommittedBatch(
                    batch.base_offset, batch.last_offset, state.epoch, batch.created_ms, batch.values
                )
            records += batch.record_count
            self._pending_commit_times.append((batch.last_offset, batch.created_ms, batch.record_count))
        self.metrics.on_leader_append(records, self.log, now_ms)
        # As Kafka's KafkaRaftClient.flushLeaderLog: parked Fetches see the new end offset before
        # the leader's fsync, so the followers write their copies while the leader flushes. This
        # poll answers them; the next one (due at once) fsyncs. The leader's own end offset, which
        # counts toward the high watermark, moves only after the fsync.
        self._leader_flush_pending = True

    def _flush_leader_log(self, now_ms: int) -> None:
        if not self._leader_flush_pending:
            return
        self._leader_flush_pending = False
        self.log.flush()
        state = self.leader_state()
        if state is not None:
            local = state.voters.get(state.local_key.id)
            if local is not None:  # not once it removed itself (KIP-853)
                local.end_offset = self.log.end_offset()
            self.maybe_advance_high_watermark(state, now_ms)

    def maybe_advance_high_watermark(self, state: LeaderState, now_ms: int) -> bool:
        # An unknown end offset sorts as -1, which is below any epoch start offset (>= 0).
        offsets = [-1 if p.end_offset is None else p.end_offset for p in state.voters.values()]
        offsets.sort(reverse=True)
        candidate = offsets[len(offsets) // 2]
        if candidate <= state.epoch_start_offset:
            return False  # a majority must hold a record of this epoch (spec 4.3)
        if self._hw is not None and candidate <= self._hw:
            return False  # never backwards
        self._set_high_watermark(candidate, now_ms)
        return True

    def _set_high_watermark(self, hw: int, now_ms: int) -> None:
        self._hw = hw
        if hw > self._committed:
            self._committed = hw
        while self._pending_commit_times and self._pending_commit_times[0][0] < hw:
            _, created_ms, count = self._pending_commit_times.pop(0)
            self.metrics.on_commit(created_ms, count, now_ms)
        self.metrics.high_watermark = hw

    def update_follower_high_watermark(self, leader_hw: int, now_ms: int) -> None:
        if leader_hw < 0:
            return
        hw = min(leader_hw, self.log.end_offset())
        if self._hw is None or hw > self._hw:
            self._set_high_watermark(hw, now_ms)

    def _poll_candidate(self, state: CandidateState, now_ms: int) -> None:
        if state.election.is_granted:
            self._transition_to_leader(now_ms)
            return
        if self.config.pre_vote_enabled:
            if now_ms >= state.election_deadline_ms:
                self._start_election(now_ms)  # KIP-996: back to Prospective, no epoch bump
                return
        else:
            if state.backoff_until_ms is not None:
                if now_ms >= state.backoff_until_ms:
                    self._transition_to_candidate(now_ms, retries=state.retries + 1)
                return
            if state.election.is_rejected or now_ms >= state.election_deadline_ms:
                state.backoff_until_ms = now_ms + self._legacy_backoff_ms(state.retries)
                return
        if not state.election.is_rejected:
            self._send_votes(state.election.unrecorded(), state.epoch, pre_vote=False, now_ms=now_ms)

    def _legacy_backoff_ms(self, retries: int) -> int:
        # 3.9: min(100 * rand[0, 2^retries), election.backoff.max.ms)
        bound = 1 << max(retries, 0)
        return min(
            LEGACY_ELECTION_BACKOFF_BASE_MS * self.rng.randrange(bound), self.config.election_backoff_max_ms
        )

    def _poll_prospective(self, state: ProspectiveState, now_ms: int) -> None:
        if state.election.is_granted and state.yielded_to is None:
            self._transition_to_candidate(now_ms)
            return
        # Having given way to a peer, wait for its Vote request (which moves this node to its
        # epoch) or for the end of this round.
        if state.election.is_rejected or now_ms >= state.election_deadline_ms:
            if not state.leader_resigned:
                self._end_prospective(state, now_ms)
                return
            self._retry_prospective(state, now_ms)
        if state.retry_at_ms is not None:
            if now_ms < state.retry_at_ms:
                return
            state.retry_at_ms = None
        self._send_votes(state.election.unrecorded(), state.epoch, pre_vote=True, now_ms=now_ms)

    def _retry_prospective(self, state: ProspectiveState, now_ms: int) -> None:
        """A lost round of a voter whose leader resigned this epoch: ask again, not follow it.

        Past Kafka, whose ProspectiveState goes back to following the leader it knows (spec 1.1).
        That leader resigned (EndQuorumEpoch) and never leads this epoch again, so following it
        only waits for a fetch timeout or another successor's backoff. The usual loser is the
        first preferred successor, which campaigns as soon as the EndQuorumEpoch reaches it: its
        pre-vote can reach voters before their own EndQuorumEpoch does (the two come from
        different senders), and they refuse it, as their leader is alive as far as they know. So
        the refused voters are asked again after ``retry.backoff.ms``, when they have the
        EndQuorumEpoch too (the grants stand); the wait doubles with each lost round, up to an
        election timeout, for voters that never get it (a leader that resigned on check-quorum
        may reach only some). A round whose timer ran out starts over instead: new tally, new
        timer, no yield to a peer, as a new Prospective state would. The node leaves Prospective
        as before: elected, or told of a higher epoch.
        """
        backoff_ms = self.config.retry_backoff_ms << min(state.retries, 16)
        state.retry_at_ms = now_ms + min(backoff_ms, self.config.election_timeout_ms)
        state.retries += 1
        if now_ms < state.election_deadline_ms:
            state.election.forget_rejections()
            return
        assert self.node_id is not None  # (only voters are prospective)
        state.election = EpochElection.start(self.quorum.voters, self.node_id)
        state.election_deadline_ms = now_ms + random_election_timeout_ms(
            self.rng, self.config.election_timeout_ms
        )
        state.yielded_to = None

    def _end_prospective(self, state: ProspectiveState, now_ms: int) -> None:
        previous = self.role
        if state.leader_id is not None and self.quorum.is_leader_reachable(
            state.leader_id, state.leader_endpoints
        ):
            # Back to fetching from the leader, as Kafka does, in case it is alive after all; but
            # past Kafka, which waits a whole fetch timeout again, the next pre-vote comes after an
            # election timeout, as it does for a Prospective without a leader: this node already
            # went a fetch timeout without an answer. A voter that refused only because its own
            # fetch timer had a few ms left would otherwise cost the quorum two fetch timeouts.
            # Found by: kraft sim run --scenario zombie-leader --seed 5603.
            self.quorum.transition_to_follower(
                state.epoch,
                state.leader_id,
                state.leader_endpoints,
                now_ms,
                fetch_timeout_ms=random_election_timeout_ms(self.rng, self.config.election_timeout_ms),
            )
        else:
            self.quorum.transition_to_unattached(state.epoch, now_ms, leader_id=state.leader_id)
        self._after_transition(previous, now_ms)

    def _send_votes(self, voters: Sequence[int], epoch: int, *, pre_vote: bool, now_ms: int) -> None:
        for voter_id in voters:
            if voter_id != self.node_id and self.requests.is_ready(voter_id, now_ms):
                self.send(voter_id, vote.build_vote_request(self, voter_id, epoch, pre_vote), now_ms)

    def _poll_follower(self, state: FollowerState, now_ms: int) -> None:
        if now_ms >= state.fetch_deadline_ms:
            if self.is_voter:
                if self._awaits_last_answer(state, now_ms):
                    return
                self._start_election(now_ms)
                return
            # KAFKA-19354 (4.1): an observer keeps its leader and tries the bootstrap servers; here
            # each fetch timeout without an answer alternates between the leader's endpoint and
            # the bootstrap servers, and whichever answers as the leader is kept (``fetch_via``),
            # so an unreachable advertised endpoint costs one fetch timeout, not every one.
            state.via_bootstrap = not state.via_bootstrap and bool(self._fallback_ids)
            state.fetch_via = None
            state.fetch_deadline_ms = now_ms + self.config.fetch_timeout_ms
            # No answer for a fetch timeout: the leader is no longer known to be alive, so this
            # node stops refusing pre-votes for it (a voter would be in Prospective by now). An
            # observer that is a voter in the set of a candidate's log (KIP-853: the record that
            # added it has not reached it) would otherwise refuse that candidate forever.
            state.has_fetched_from_leader = False
        if self._shutdown_deadline_ms is not None:
            return  # a shutting-down follower stops at once
        if self.requests.has_any_inflight(now_ms):
            return  # one fetch in flight, wherever it went (spec 3.7)
        destination = self._fetch_destination(state, now_ms)
        if destination is None:
            return
        if state.download is not None:
            self.send(destination, fetch_snapshot.build_fetch_snapshot_request(self, state), now_ms)
            return
        update = self._voter_update(state, now_ms)
        if update is not None:
            # In place of one Fetch, as Kafka's pollFollowerAsVoter does.
            state.voter_update_after_ms = now_ms + self.config.request_timeout_ms
            self.send(destination, update, now_ms)
            return
        self.send(destination, fetch.build_fetch_request(self), now_ms)

    def _awaits_last_answer(self, state: FollowerState, now_ms: int) -> bool:
        """Past Kafka: whether a voter whose election is due waits for the answer to the fetch it
        sent before its leader's EndQuorumEpoch came, for up to ``retry.backoff.ms``.

        The resigned leader answers it at once (with the records it sent before resigning, or
        NOT_LEADER_OR_FOLLOWER), often just behind the EndQuorumEpoch. Becoming prospective
        drops that answer (a role change resets the requests), and the first successor asked
        for votes with a log shorter than the other voters' and lost (``kraft sim run --scenario
        graceful-resign-5 --seed 3``).
        """
        return (
            state.fetch_before_resignation
            and now_ms < state.fetch_deadline_ms + self.config.retry_backoff_ms
            and self.requests.has_any_inflight(now_ms)
        )

    def _voter_update(self, state: FollowerState, now_ms: int) -> UpdateRaftVoterRequest | None:
        """KIP-853: the UpdateRaftVoter a voter sends its leader when the voter set has another
        endpoint for it on the raft listener (it came back on a new host or port), so that the
        other voters can reach it again; None when there is nothing to tell (or not yet)."""
        if (
            self.kraft_version < KRAFT_VERSION_1
            or not self.local_endpoints
            or not state.has_fetched_from_leader
            or now_ms < state.voter_update_after_ms
            or self.node_id is None
        ):
            return None
        local = ReplicaKey(self.node_id, self.directory_id)
        voter = self.voter_set.node(self.node_id)
        if voter is None or not voter.is_voter(local):
            return None
        mine = self.local_endpoints[0]
        if mine in voter.endpoints:
            return None
        # Only the raft listener's endpoint is replaced; the others stay as the set has them.
        listeners = (mine, *(e for e in voter.endpoints if e.name != mine.name))
        return UpdateRaftVoterRequest(
            cluster_id=self.cluster_id,
            current_leader_epoch=state.epoch,
            voter_key=local,
            listeners=listeners,
        )

    def _fetch_destination(self, state: FollowerState, now_ms: int) -> int | None:
        """The leader's endpoint, the bootstrap address that last answered as the leader, or (the
        leader's endpoint failed) a random ready bootstrap server; None while they back off."""
        if state.fetch_via is not None:
            return state.fetch_via if self.requests.is_ready(state.fetch_via, now_ms) else None
        if state.via_bootstrap and self._fallback_ids:
            ready = [d for d in self._fallback_ids if self.requests.is_ready(d, now_ms)]
            return self.rng.choice(ready) if ready else None
        return state.leader_id if self.requests.is_ready(state.leader_id, now_ms) else None

    def _on_fetch_failed(self, state: FollowerState, source: int) -> None:
        """A fetch answer from ``source`` failed (or taught nothing): stop fetching there."""
        if source == state.fetch_via:
            state.fetch_via = None  # that bootstrap address stopped answering as the leader
            state.via_bootstrap = bool(self._fallback_ids)
        elif source == state.leader_id and self._fallback_ids:
            state.via_bootstrap = True

    def _poll_unattached(self, state: UnattachedState, now_ms: int) -> None:
        if self.is_voter and state.election_deadline_ms is not None and now_ms >= state.election_deadline_ms:
            self._start_election(now_ms)
            return
        # Observers (and, per KAFKA-17030, unattached voters) discover the leader by fetching from a
        # random bootstrap server; one fetch in flight at a time.
        if not self._bootstrap_ids or self.requests.has_any_inflight(now_ms):
            return
        ready = [d for d in self._bootstrap_ids if self.requests.is_ready(d, now_ms)]
        if ready:
            self.send(self.rng.choice(ready), fetch.build_fetch_request(self), now_ms)

    def _poll_resigned(self, state: ResignedState, now_ms: int) -> None:
        # Kafka's pollResigned: a shutting-down node stays Resigned until the shutdown ends or an
        # election elsewhere bumps the epoch; campaigning could make it leader again while it
        # refuses every fetch (BROKER_NOT_AVAILABLE). Found by: kraft sim run --scenario
        # graceful-resign --seed 45.
        if now_ms >= state.election_deadline_ms and self._shutdown_deadline_ms is None:
            self.transition_to_unattached(state.epoch + 1, now_ms)
            return
        for voter_id in sorted(state.unacked_voters):
            if self.requests.is_ready(voter_id, now_ms):
                self.send(voter_id, end_epoch.build_end_quorum_epoch_request(self, state), now_ms)

    def _bootstrap_destinations(self) -> list[int]:
        if self.config.bootstrap_servers:
            return [-2 - i for i in range(len(self.config.bootstrap_servers))]
        return sorted(v for v in self.config.voters if v != self.node_id)

    # ---- parked fetches ----------------------------------------------------------------------

    def park_fetch(self, envelope: Envelope, deadline_ms: int) -> None:
        self._parked.append(ParkedFetch(envelope, deadline_ms, self._hw))

    def _complete_parked_fetches(self, now_ms: int) -> None:
        if not self._parked:
            return
        still: list[ParkedFetch] = []
        for parked in self._parked:
            request = parked.envelope.body
            assert isinstance(request, FetchRequest)
            ready = (
                now_ms >= parked.deadline_ms
                or self.log.end_offset() > request.fetch_offset
                or self._hw != parked.high_watermark
                or not isinstance(self.quorum.state, LeaderState)
            )
            if not ready:
                still.append(parked)
                continue
            response = fetch.handle_fetch_request(self, parked.envelope, request, now_ms, may_park=False)
            if response is not None:
                self.respond(parked.envelope, response)
        self._parked = still

    def _fail_parked_fetches(self) -> None:
        leader_id, epoch, endpoints = self.current_leader_fields()
        for parked in self._parked:
            self.respond(
                parked.envelope,
                FetchResponse(
                    partition_error_code=ErrorCode.NOT_LEADER_OR_FOLLOWER,
                    high_watermark=-1 if self._hw is None else self._hw,
                    log_start_offset=self.log.start_offset(),
                    current_leader_id=leader_id,
                    current_leader_epoch=epoch,
                    leader_endpoints=endpoints,
                ),
            )
        self._parked = []

    # ---- wake-up time ------------------------------------------------------------------------

    def _next_wake_ms(self, now_ms: int) -> int:
        if self._leader_flush_pending:
            return now_ms  # fsync what the outbound Fetch responses carry, right after sending them
        times: list[int] = []
        s = self.quorum.state
        match s:
            case LeaderState():
                if s.check_quorum_deadline_ms is not None:
                    times.append(s.check_quorum_deadline_ms)
                times.append(s.begin_quorum_epoch_deadline_ms)
                if self._accumulator is not None:
                    linger = self._accumulator.next_drain_ms()
                    if linger is not None:
                        times.append(max(linger, now_ms))
            case CandidateState():
                times.append(s.election_deadline_ms)
                if s.backoff_until_ms is not None:
                    times.append(s.backoff_until_ms)
            case ProspectiveState():
                times.append(s.election_deadline_ms)
                if s.retry_at_ms is not None:
                    times.append(s.retry_at_ms)
            case FollowerState():
                times.append(s.fetch_deadline_ms)
                if s.fetch_before_resignation:
                    times.append(s.fetch_deadline_ms + self.config.retry_backoff_ms)
            case UnattachedState():
                if s.election_deadline_ms is not None:
                    times.append(s.election_deadline_ms)
            case ResignedState():
                times.append(s.election_deadline_ms)
        if self._parked:
            times.extend([p.deadline_ms for p in self._parked])
        if self._voter_change is not None and not self._voter_change.answered:
            times.append(self._voter_change.deadline_ms)
        request_time = self.requests.next_event_ms(now_ms)
        if request_time is not None:
            times.append(request_time)
        if self._shutdown_deadline_ms is not None and not self._shutdown_complete:
            times.append(self._shutdown_deadline_ms)
        earliest = None
        for t in times:
            if t > now_ms and (earliest is None or t < earliest):
                earliest = t
        return now_ms + _IDLE_WAKE_MS if earliest is None else earliest

    # ---- the voter set (KIP-853) ----------------------------------------------------------------

    def _load_voter_history(self) -> None:
        """Startup: the latest snapshot's voter set (the bootstrap checkpoint 0-0 included), then
        every KRaftVersion and Voters record of the log after it."""
        latest = self.log.latest_snapshot_id()
        start = self.log.start_offset()
        if latest is not None:
            self._reset_voters_to_snapshot(latest)
            start = max(start, latest.offset)
        end = self.log.end_offset()
        while start < end:
            data = self.log.read(start, self.config.max_fetch_bytes)
            last = None
            for _pos, header in iter_batch_headers(data):
                last = header.base_offset + header.last_offset_delta
            if last is None or last < start:
                break
            self._history.observe(data)
            start = last + 1

    def on_log_appended(self, data: bytes, now_ms: int) -> None:
        """Batches ``data`` were just appended (by this leader, or fetched)."""
        before, was_voter = self.voter_set, self.is_voter
        if self._history.observe(data):
            self._on_voter_set_changed(before, was_voter, now_ms)

    def on_log_truncated(self, now_ms: int) -> None:
        """The log was cut back to its end offset: voter sets past it are undone."""
        before, was_voter = self.voter_set, self.is_voter
        self._history.truncate_new(self.log.end_offset())
        self._on_voter_set_changed(before, was_voter, now_ms)

    def on_snapshot_installed(self, snapshot_id: OffsetAndEpoch, now_ms: int) -> None:
        """The log was replaced by snapshot ``snapshot_id`` (a follower's download finished)."""
        before, was_voter = self.voter_set, self.is_voter
        self._reset_voters_to_snapshot(snapshot_id)
        self._on_voter_set_changed(before, was_voter, now_ms)

    def _reset_voters_to_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        """The history starts over from the voter set and kraft.version of snapshot
        ``snapshot_id`` (read from its leading control batch only)."""
        raw = self.log.read_snapshot(snapshot_id)
        voters, kraft_version = (None, None)
        if raw is not None:
            voters, kraft_version = snapshot_voters(
                raw.read(0, min(raw.size_in_bytes(), SNAPSHOT_PREFIX_BYTES))
            )
        self._history.reset_to_snapshot(snapshot_id.offset, voters, kraft_version)

    def _on_voter_set_changed(self, before: VoterSet, was_voter: bool, now_ms: int) -> None:
        after = self.voter_set
        if after is before or after == before:
            return
        state = self.quorum.state
        if isinstance(state, LeaderState):
            reconfig.leader_progress_after_change(state, after)
            if len(after) > 1 and self.config.check_quorum_enabled and state.check_quorum_deadline_ms is None:
                state.check_quorum_deadline_ms = now_ms + self.config.check_quorum_timeout_ms
            self.maybe_advance_high_watermark(state, now_ms)
        elif isinstance(state, UnattachedState) and self.is_voter and not was_voter:
            # An observer that became a voter starts its election timer.
            state.election_deadline_ms = self.quorum.election_deadline(now_ms)
        if self.is_voter != was_voter:
            self.metrics.on_state(self, now_ms)

    def voter_change_pending(self) -> bool:
        """A voter change is being committed: the one in flight, or one in the log above the HW."""
        return self._voter_change is not None or self._history.has_uncommitted_change(self._hw)

    def append_voter_set(
        self, voters: VoterSet, envelope: Envelope, deadline_ms: int, *, removes_leader: bool
    ) -> None:
        """Leader: append a VotersRecord for ``voters``; answer ``envelope`` once it commits."""
        assert self._accumulator is not None
        offset = self._accumulator.append_control(
            [control_record(ControlType.KRAFT_VOTERS, voters.to_record())], self.metrics.last_poll_ms
        )
        self._voter_change = reconfig.PendingVoterChange(envelope, offset, deadline_ms, removes_leader)

    def upgrade_kraft_version(self, version: int, *, validate_only: bool, now_ms: int) -> int | None:
        """Leader: kraft.version 0 -> 1 (``reconfig.upgrade_kraft_version``, which documents it)."""
        return reconfig.upgrade_kraft_version(self, version, validate_only=validate_only, now_ms=now_ms)

    def append_kraft_upgrade(self, voters: VoterSet, version: int) -> int:
        """Leader: append KRaftVersion ``version`` and the VotersRecord ``voters`` as one control
        batch (``reconfig.upgrade_kraft_version``); returns its last offset."""
        assert self._accumulator is not None
        return self._accumulator.append_control(
            [
                control_record(ControlType.KRAFT_VERSION, kraft_version_record(version)),
                control_record(ControlType.KRAFT_VOTERS, voters.to_record()),
            ],
            self.metrics.last_poll_ms,
        )

    def _poll_voter_change(
        self, state: LeaderState, change: reconfig.PendingVoterChange, now_ms: int
    ) -> bool:
        """Answer the voter change once committed (or at its deadline); a leader that removed
        itself resigns then. Returns whether the role changed."""
        if self._hw is not None and self._hw > change.record_offset:
            self._voter_change = None
            if not change.answered:
                self.respond(change.envelope, reconfig.response_for(self, change.envelope, ErrorCode.NONE))
            if change.removes_leader:
                self._transition_to_resigned(now_ms)
                return True
            return False
        if not change.answered and now_ms >= change.deadline_ms:
            change.answered = True
            self.respond(
                change.envelope,
                reconfig.response_for(
                    self,
                    change.envelope,
                    ErrorCode.REQUEST_TIMED_OUT,
                    f"the voter change at offset {change.record_offset} did not commit in time; "
                    "it may still commit",
                ),
            )
        return False

    # ---- listeners ---------------------------------------------------------------------------

    def register(self, listener: RaftListener) -> None:
        self._listeners.append(ListenerContext(listener))

    def _update_listeners(self) -> None:
        own = self._own_batches
        if own:
            state = self.quorum.state
            if not isinstance(state, LeaderState) or next(iter(own.values())).epoch != state.epoch:
                own.clear()  # no longer this epoch's leader: the log may be truncated past them
        for ctx in self._listeners:
            self._update_listener(ctx)
        if own:
            delivered = min(-1 if ctx.next_offset is None else ctx.next_offset for ctx in self._listeners)
            while own:
                first = next(iter(own.values()))
                if first.last_offset >= delivered:
                    break
                del own[first.base_offset]

    def _update_listener(self, ctx: ListenerContext) -> None:
        next_offset = ctx.next_offset
        if next_offset is None or next_offset < self._committed or next_offset < self.log.start_offset():
            self._deliver_committed(ctx)
        # (else the usual poll: nothing new committed for it and no snapshot to load)
        state = self.quorum.state
        if state is ctx.last_state:
            return  # leader and epoch are fixed for the life of a quorum state object
        if isinstance(state, LeaderState) and ctx.next_offset < state.epoch_start_offset:  # type: ignore[operator]
            return  # announce leadership only once this listener has caught up to the epoch start
        ctx.last_state = state
        # Compared field by field: a new state object often keeps the leader (a vote, a resignation).
        leader_id = self.quorum.leader_id
        last = ctx.last_leader
        if last is None or last.leader_id != leader_id or last.epoch != state.epoch:
            current = LeaderAndEpoch(leader_id, state.epoch)
            ctx.last_leader = current
            ctx.listener.handle_leader_change(current)

    def _deliver_committed(self, ctx: ListenerContext) -> None:
        """Load the latest snapshot into the listener if it is behind the log start (or new), then
        hand it the committed batches it has not seen."""
        latest = self.log.latest_snapshot_id()
        start = self.log.start_offset()
        needs_snapshot = latest is not None and (
            (ctx.next_offset is None and latest.offset > 0)
            or (ctx.next_offset is not None and ctx.next_offset < start)
        )
        if needs_snapshot and latest is not None:
            if isinstance(self.quorum.state, LeaderState) and ctx.last_leader == self.leader_and_epoch():
                raise FatalError("a leader's listener must never be asked to load a snapshot")
            raw = self.log.read_snapshot(latest)
            if raw is None:
                raise FatalError(f"latest snapshot {latest} cannot be read")
            ctx.listener.handle_load_snapshot(SnapshotReader.from_raw(raw))
            ctx.next_offset = latest.offset
        if ctx.next_offset is None:
            ctx.next_offset = start
        own = self._own_batches
        while ctx.next_offset < self._committed and ctx.next_offset < self.log.end_offset():
            mine = own.get(ctx.next_offset)
            if mine is not None:
                if mine.last_offset >= self._committed:
                    break
                ctx.listener.handle_commit(mine)
                ctx.next_offset = mine.last_offset + 1
                continue
            data = self.log.read(ctx.next_offset, self.config.max_fetch_bytes)
            progressed = False
            # Headers first: only batches that are delivered are decoded (the read usually ends in
            # batches that are not committed yet, and may begin in one already delivered).
            for pos, header in iter_batch_headers(data):
                last_offset = header.base_offset + header.last_offset_delta
                if last_offset < ctx.next_offset:
                    continue
                if last_offset >= self._committed:
                    break
                cache = self._batch_cache
                whole = header.base_offset >= ctx.next_offset
                mine = own.get(header.base_offset) if whole else None
                if mine is not None:
                    committed = mine  # the records as this leader appended them
                elif cache is not None and whole:
                    # The whole batch is delivered: the shared decoded copy is the same value.
                    committed = cache.decode(bytes(data[pos : pos + header.size_in_bytes]))
                else:
                    committed = CommittedBatch.from_bytes(data, pos, from_offset=ctx.next_offset)
                ctx.listener.handle_commit(committed)
                ctx.next_offset = last_offset + 1
                progressed = True
            if not progressed:
                break

    # ---- client API --------------------------------------------------------------------------

    def schedule_append(self, epoch: int, records: Sequence[bytes]) -> int:
        """Queue ``records`` for the leader's log; returns the offset of the last one.

        Raises:
            NotLeaderError: this node is not the leader of ``epoch``.
        """
        leader = self.leader_state()
        if leader is None or self._accumulator is None:
            raise NotLeaderError(
                f"node {self.node_id} is not the leader (state {self.role.name}, epoch {self.epoch})"
            )
        if epoch != leader.epoch and epoch < leader.epoch:
            raise NotLeaderError(f"append for epoch {epoch}, but this node leads epoch {leader.epoch}")
        return self._accumulator.append(epoch, records, self.metrics.last_poll_ms)

    def next_append_offset(self) -> int | None:
        """The offset the next ``schedule_append`` record will get, or None when not leader."""
        if self.leader_state() is None or self._accumulator is None:
            return None
        return self._accumulator.next_offset

    def resign(self, epoch: int) -> None:
        if epoch < self.epoch:
            return  # spec 1.1: resigning an old epoch is a no-op
        if epoch > self.epoch:
            raise KraftError(f"cannot resign epoch {epoch}: the current epoch is {self.epoch}")
        if isinstance(self.quorum.state, ResignedState):
            return
        if self.leader_state() is None:
            raise NotLeaderError(f"cannot resign epoch {epoch}: node {self.node_id} is {self.role.name}")
        self._transition_to_resigned(self.metrics.last_poll_ms)

    def shutdown(self, now_ms: int, timeout_ms: int) -> None:
        if self._shutdown_deadline_ms is None:
            self._shutdown_deadline_ms = now_ms + timeout_ms
        if self.leader_state() is not None:
            self._transition_to_resigned(now_ms)

    def is_shutdown_complete(self, now_ms: int) -> bool:
        if self._shutdown_complete:
            return True
        if self._shutdown_deadline_ms is None:
            return False
        if now_ms >= self._shutdown_deadline_ms or not self.is_voter or len(self.voter_set) == 1:
            return True
        leader = self.quorum.leader_id
        return leader is not None and leader != self.node_id

    def create_snapshot(
        self, snapshot_id: OffsetAndEpoch, last_contained_log_timestamp_ms: int
    ) -> SnapshotWriter | None:
        """A writer for a snapshot of committed data up to ``snapshot_id.offset`` (exclusive).

        Raises:
            KraftError: the offset is not committed, or not a valid position of the log.
        """
        if snapshot_id.offset > self._committed:
            raise KraftError(
                f"snapshot {snapshot_id} is past the high watermark {self._committed}: not committed"
            )
        raw = self.log.create_new_snapshot(snapshot_id)
        if raw is None:
            return None
        # KIP-853: with kraft.version 1 the snapshot carries the voter set of its offset, since
        # the log before it (with the VotersRecord) will be deleted.
        kraft_version = self._history.kraft_version_before(snapshot_id.offset)
        voters = self._history.voters_before(snapshot_id.offset) if kraft_version >= KRAFT_VERSION_1 else None
        return SnapshotWriter(
            raw,
            last_contained_log_timestamp_ms,
            lambda _sid: None,
            kraft_version=kraft_version,
            voters=voters,
        )

    def _maybe_delete_before_snapshot(self) -> None:
        latest = self.log.latest_snapshot_id()
        if latest is None or latest.offset <= self.log.start_offset() or latest.offset > self._committed:
            return
        # Only move the log start past data every listener has read, so no listener (in particular
        # a leader's) ever has to load a snapshot because of our own cleaning.
        if any(ctx.next_offset is None or ctx.next_offset < latest.offset for ctx in self._listeners):
            return
        self.log.delete_before_snapshot(latest)

    def describe_quorum(self, now_ms: int) -> DescribeQuorumResponse:
        return describe_quorum.build_describe_quorum_response(self, now_ms)
