"""``QuorumState``: the current role and every role transition, checked against the table.

Rule 1: a transition is legal only if ``TRANSITIONS[from]`` contains the target role and the extra
epoch rules of spec 1.1 hold (never to a lower epoch; Candidate only from Prospective with epoch + 1
unless pre-vote is disabled; Leader only from Candidate in the same epoch; same-epoch Unattached only
from Unattached or Prospective, or for observers). Anything else is a bug: ``FatalError``.

Rule 2: durable transitions write the ``ElectionStore`` *before* the in-memory switch, so nothing the
node sends afterwards can depend on state a crash would forget (Kafka's ``durableTransitionTo``).
Prospective and Resigned are never persisted.

Lifecycle (voters, KIP-996)::

    Unattached --timeout--> Prospective --majority pre-votes--> Candidate(E+1) --majority--> Leader
        ^   \\                  |  \\--rejected/timeout--> Unattached(E) | Follower(E)
        |    \\--leader-->  Follower --fetch timeout--> Prospective        Leader --> Resigned
        +---------------------- higher epoch from anyone ------------------------------+
    Resigned --timeout--> Unattached(E+1) (expired timer => Prospective at once)

A Prospective voter whose leader resigned in E (EndQuorumEpoch) never goes back to following it:
a lost round starts another in place (``RaftNode._retry_prospective``).

Observers only move between Unattached and Follower.
"""

from __future__ import annotations

import random
from collections.abc import Mapping

from kraft.common.errors import FatalError
from kraft.raft.config import QuorumConfig
from kraft.raft.states import (
    CandidateState,
    EpochElection,
    FollowerState,
    LeaderState,
    ProspectiveState,
    ReplicaProgress,
    ResignedState,
    Role,
    State,
    UnattachedState,
)
from kraft.raft.store import ElectionState, ElectionStore
from kraft.raft.types import Endpoint, ReplicaKey
from kraft.raft.voters import VoterSet, VoterSetHistory

U, P, C, L, F, R = (
    Role.UNATTACHED,
    Role.PROSPECTIVE,
    Role.CANDIDATE,
    Role.LEADER,
    Role.FOLLOWER,
    Role.RESIGNED,
)

# KIP-996: only Prospective leads to Candidate; Resigned goes through Unattached(E + 1).
TRANSITIONS: Mapping[Role, frozenset[Role]] = {
    U: frozenset({U, P, F}),
    P: frozenset({U, P, C, F}),
    C: frozenset({U, P, L, F}),
    L: frozenset({U, F, R}),
    F: frozenset({U, P, F}),
    R: frozenset({U, F}),
}

# 3.9 (pre-vote disabled): timeouts go straight to Candidate(E + 1).
LEGACY_TRANSITIONS: Mapping[Role, frozenset[Role]] = {
    U: frozenset({U, C, F}),
    P: frozenset(),
    C: frozenset({U, C, L, F}),
    L: frozenset({U, F, R}),
    F: frozenset({U, C, F}),
    R: frozenset({U, C, F}),
}

OBSERVER_TRANSITIONS: Mapping[Role, frozenset[Role]] = {
    U: frozenset({U, F}),
    P: frozenset(),
    C: frozenset(),
    # KIP-853: a leader that removed itself from the voter set leads until that change commits,
    # then resigns; it is an observer from the moment the record is appended.
    L: frozenset({U, F, R}),
    F: frozenset({U, F}),
    # Spec 1.2 rule 2 restarts any node whose file names itself leader as Resigned, observers
    # included (e.g. removed from the static voters); they leave for Unattached(E + 1) like voters.
    R: frozenset({U, F}),
}

DURABLE_ROLES = frozenset({U, C, L, F})


def check_transition(current: State, target: State, *, is_voter: bool, pre_vote_enabled: bool) -> str | None:
    """Why ``current -> target`` is illegal, or ``None`` if it is legal (pure; swept by Hypothesis)."""
    if not is_voter:
        table = OBSERVER_TRANSITIONS
    else:
        table = TRANSITIONS if pre_vote_enabled else LEGACY_TRANSITIONS
    if target.role not in table[current.role]:
        return f"{current.role.name} -> {target.role.name} is not in the transition table"
    if target.epoch < current.epoch:
        return f"epoch would decrease from {current.epoch} to {target.epoch}"
    same = target.epoch == current.epoch
    if same and target.role in (U, P, F):
        # Spec 1.1: a vote (a Candidate's implicit self-vote included) survives every transition
        # within its epoch, or the node could grant a second vote in that epoch.
        voted = voted_key_of(current)
        if voted is not None and voted_key_of(target) != voted:
            return f"the vote for {voted} cannot change or be forgotten within epoch {current.epoch}"
    match target.role:
        case Role.CANDIDATE:
            if pre_vote_enabled and not (current.role is P and target.epoch == current.epoch + 1):
                return "a candidate must come from Prospective with the epoch bumped by one"
            if not pre_vote_enabled and target.epoch != current.epoch + 1:
                return "a candidate must bump the epoch by one"
        case Role.LEADER:
            if current.role is not C or not same:
                return "a leader must come from Candidate in the same epoch"
        case Role.PROSPECTIVE | Role.RESIGNED:
            if not same:
                return f"{target.role.name} keeps the epoch"
        case Role.UNATTACHED:
            if same and current.role not in ((U, P) if is_voter else (U, F)):
                return "same-epoch Unattached only from Unattached or Prospective (observers: Follower)"
        case Role.FOLLOWER:
            assert isinstance(target, FollowerState)
            if same:
                known = _leader_of(current)
                if current.role in (L, R):
                    return "a leader cannot follow in its own epoch"
                if known is not None and known != target.leader_id:
                    return f"epoch {current.epoch} already has leader {known}, not {target.leader_id}"
    return None


def _leader_of(state: State) -> int | None:
    if isinstance(state, (UnattachedState, ProspectiveState, FollowerState)):
        return state.leader_id
    return None


def voted_key_of(state: State) -> ReplicaKey | None:
    if isinstance(state, (UnattachedState, ProspectiveState, FollowerState)):
        return state.voted_key
    if isinstance(state, CandidateState):
        return state.local_key
    return None


def election_state_of(state: State) -> ElectionState:
    """What the store holds for ``state`` (spec section 2: content per state)."""
    leader: int | None
    if isinstance(state, (LeaderState, ResignedState)):
        leader = state.local_key.id
    else:
        leader = _leader_of(state)
    return ElectionState(epoch=state.epoch, leader_id=leader, voted_key=voted_key_of(state))


def random_election_timeout_ms(rng: random.Random, timeout_ms: int) -> int:
    """``T + uniform[0, T)``; 0 when T is 0."""
    return timeout_ms + rng.randrange(timeout_ms) if timeout_ms > 0 else 0


class QuorumState:
    """Owns the current ``State``; every change of role, epoch, leader or vote goes through here."""

    def __init__(
        self,
        *,
        local_key: ReplicaKey | None,
        config: QuorumConfig,
        store: ElectionStore,
        rng: random.Random,
        history: VoterSetHistory | None = None,
    ) -> None:
        self.local_key = local_key
        self.config = config
        self.store = store
        self.rng = rng
        # KIP-853: the voter set in force is the latest in the log (static voters without one).
        self.history = history if history is not None else VoterSetHistory(VoterSet.static(config.voters))
        self.state: State = UnattachedState(0, None, None, None)
        self._is_voter_of: VoterSet | None = None  # the voter set ``_is_voter`` was computed for
        self._is_voter = False

    # ---- observation -------------------------------------------------------------------------

    @property
    def local_id(self) -> int | None:
        return None if self.local_key is None else self.local_key.id

    @property
    def voter_set(self) -> VoterSet:
        return self.history.latest()

    @property
    def voters(self) -> frozenset[int]:
        return self.history.latest().ids

    @property
    def is_voter(self) -> bool:
        # Read many times per poll. The answer depends only on the (immutable) set in force and
        # the local key: remember it for the set it was computed from (kept alive by the
        # reference, so an identity test cannot be fooled by a recycled id).
        voters = self.history.latest()
        if voters is not self._is_voter_of:
            self._is_voter_of = voters
            self._is_voter = self.local_key is not None and voters.is_voter(self.local_key)
        return self._is_voter

    @property
    def role(self) -> Role:
        return self.state.role

    @property
    def epoch(self) -> int:
        return self.state.epoch

    @property
    def leader_id(self) -> int | None:
        s = self.state
        if isinstance(s, (LeaderState, ResignedState)):
            return s.local_key.id
        if isinstance(s, (UnattachedState, ProspectiveState, FollowerState)):  # _leader_of, inline
            return s.leader_id
        return None

    @property
    def voted_key(self) -> ReplicaKey | None:
        return voted_key_of(self.state)

    def election_state(self) -> ElectionState:
        return election_state_of(self.state)

    def leader_endpoints(self, leader_id: int | None) -> tuple[Endpoint, ...]:
        if leader_id is None:
            return ()
        return self.history.latest().endpoints(leader_id)

    def is_leader_reachable(self, leader_id: int, endpoints: tuple[Endpoint, ...]) -> bool:
        # Static voters are always addressable by id (the shell resolves ids); otherwise we need
        # endpoints from the peer.
        return leader_id in self.voters or bool(endpoints)

    def election_deadline(self, now_ms: int) -> int | None:
        if not self.is_voter:
            return None
        return now_ms + random_election_timeout_ms(self.rng, self.config.election_timeout_ms)

    # ---- the one place a state is replaced -----------------------------------------------------

    def _transition(self, target: State) -> None:
        reason = check_transition(
            self.state, target, is_voter=self.is_voter, pre_vote_enabled=self.config.pre_vote_enabled
        )
        if reason is not None:
            raise FatalError(f"illegal transition from {self.state} to {target}: {reason}")
        granting_vote = (
            isinstance(target, ProspectiveState)
            and target.voted_key is not None
            and voted_key_of(self.state) != target.voted_key
        )
        if target.role in DURABLE_ROLES or granting_vote:
            # Rule 2: persist first; the in-memory switch happens only after the write returned.
            self.store.write(election_state_of(target))
        self.state = target

    # ---- startup (spec 1.2) --------------------------------------------------------------------

    def initialize(self, *, log_end_epoch: int, now_ms: int) -> None:
        stored = self.store.read()
        if stored is None:
            stored = ElectionState.initial()
        local_id = self.local_id
        if stored.voted_key is not None and local_id is None:
            raise FatalError(f"the election state {stored} has a vote but this node has no node id")
        if stored.epoch < log_end_epoch:
            # The log is ahead of the file (e.g. the file was lost): start clean in the log's epoch.
            self.state = UnattachedState(log_end_epoch, None, None, self.election_deadline(now_ms))
            self.store.write(self.election_state())
            return
        epoch = stored.epoch
        if stored.leader_id is not None and stored.leader_id == local_id and self.local_key is not None:
            # Never restart as leader: unflushed data may be lost and the epoch must not be reused.
            self.state = ResignedState(
                epoch,
                self.local_key,
                self.election_deadline(now_ms) or now_ms,
                set(self.voters - {self.local_key.id}),
                (),
            )
        elif (
            stored.voted_key is not None
            and local_id is not None
            and stored.voted_key.id == local_id
            and stored.leader_id is None
            and self.is_voter
            and self.local_key is not None
        ):
            self.state = CandidateState(
                epoch,
                self.local_key,
                EpochElection.start(self.voters, local_id),
                self.election_deadline(now_ms) or now_ms,
            )
        elif stored.leader_id is not None and self.is_leader_reachable(stored.leader_id, ()):
            self.state = FollowerState(
                epoch,
                stored.leader_id,
                self.leader_endpoints(stored.leader_id),
                stored.voted_key,
                now_ms + self.config.fetch_timeout_ms,
            )
        else:
            self.state = UnattachedState(
                epoch, stored.leader_id, stored.voted_key, self.election_deadline(now_ms)
            )

    # ---- transitions ---------------------------------------------------------------------------

    def transition_to_unattached(self, epoch: int, now_ms: int, *, leader_id: int | None = None) -> None:
        """Higher epoch without a known leader (vote cleared); in the same epoch (a failed pre-vote,
        or a leader whose endpoint is unknown, KIP-853) the vote is kept: it cannot be forgotten
        within an epoch."""
        s = self.state
        voted: ReplicaKey | None = None
        deadline = self.election_deadline(now_ms)
        if epoch == s.epoch and isinstance(s, (ProspectiveState, UnattachedState)):
            voted = s.voted_key
            leader_id = leader_id if leader_id is not None else s.leader_id
        if isinstance(s, ResignedState) and self.is_voter:
            # KIP-996: the new Unattached inherits the Resigned's remaining timer (normally expired),
            # so a resigned voter starts a pre-vote at once.
            deadline = s.election_deadline_ms
        if (
            self.is_voter
            and epoch > s.epoch
            and isinstance(s, (UnattachedState, CandidateState))
            and s.election_deadline_ms is not None
        ):
            # Kafka's QuorumState.transitionToUnattached keeps the remaining election time here: a
            # fresh timer per higher-epoch Vote lets a rejected, disruptive candidate (no Pre-Vote)
            # hold everyone else below their timeout forever (sim: partition-rejoin --no-prevote).
            deadline = s.election_deadline_ms
        self._transition(UnattachedState(epoch, leader_id, voted, deadline))

    def transition_to_unattached_voted(self, candidate: ReplicaKey, now_ms: int) -> None:
        """Grant a standard vote in the current epoch (Unattached or Prospective, not yet voted)."""
        s = self.state
        deadline = now_ms + random_election_timeout_ms(self.rng, self.config.election_timeout_ms)
        if isinstance(s, UnattachedState) and s.voted_key is None:
            self._transition(UnattachedState(s.epoch, s.leader_id, candidate, deadline))
        elif isinstance(s, ProspectiveState) and s.voted_key is None:
            self._transition(
                ProspectiveState(s.epoch, s.leader_id, s.leader_endpoints, candidate, s.election, deadline)
            )
        else:
            raise FatalError(f"cannot record a vote for {candidate} in state {s}")

    def transition_to_follower(
        self,
        epoch: int,
        leader_id: int,
        endpoints: tuple[Endpoint, ...],
        now_ms: int,
        *,
        fetch_timeout_ms: int | None = None,
    ) -> None:
        """``fetch_timeout_ms``: how long the first fetch may go unanswered before the node (a
        voter) starts a pre-vote; the configured fetch timeout unless given."""
        s = self.state
        # KIP-996: never forget a vote within an epoch (a Candidate's self-vote included).
        voted = voted_key_of(s) if epoch == s.epoch else None
        if not endpoints:
            endpoints = self.leader_endpoints(leader_id)
        timeout_ms = self.config.fetch_timeout_ms if fetch_timeout_ms is None else fetch_timeout_ms
        self._transition(FollowerState(epoch, leader_id, endpoints, voted, now_ms + timeout_ms))

    def transition_to_prospective(self, now_ms: int) -> None:
        s = self.state
        local_key = self._voter_key_or_raise("Prospective")
        leader_id = _leader_of(s)
        endpoints = s.leader_endpoints if isinstance(s, (FollowerState, ProspectiveState)) else ()
        # A Candidate whose election timed out keeps its self-vote: it already voted in this epoch.
        voted = voted_key_of(s)
        self._transition(
            ProspectiveState(
                s.epoch,
                leader_id,
                endpoints,
                voted,
                EpochElection.start(self.voters, local_key.id),
                now_ms + random_election_timeout_ms(self.rng, self.config.election_timeout_ms),
                successors=s.successors if isinstance(s, FollowerState) and s.leader_resigned else (),
                leader_resigned=isinstance(s, FollowerState) and s.leader_resigned,
            )
        )

    def transition_to_candidate(self, now_ms: int, *, retries: int = 1) -> None:
        local_key = self._voter_key_or_raise("Candidate")
        self._transition(
            CandidateState(
                self.state.epoch + 1,
                local_key,
                EpochElection.start(self.voters, local_key.id),
                now_ms + random_election_timeout_ms(self.rng, self.config.election_timeout_ms),
                retries=retries,
            )
        )

    def transition_to_leader(self, epoch_start_offset: int, now_ms: int) -> LeaderState:
        s = self.state
        if not isinstance(s, CandidateState) or not s.election.is_granted:
            raise FatalError(f"cannot become leader from {s}")
        local_key = s.local_key
        voter_set = self.voter_set
        progress = {n.key.id: ReplicaProgress(n.key) for n in voter_set}
        if local_key.id in progress:
            progress[local_key.id] = ReplicaProgress(local_key)
        check_deadline = None
        if self.config.check_quorum_enabled and len(self.voters) > 1:
            check_deadline = now_ms + self.config.check_quorum_timeout_ms
        leader = LeaderState(
            s.epoch,
            local_key,
            epoch_start_offset,
            tuple(sorted(s.election.granting())),
            progress,
            check_deadline,
            now_ms,
        )
        self._transition(leader)
        return leader

    def transition_to_resigned(self, preferred_successors: tuple[ReplicaKey, ...], now_ms: int) -> None:
        s = self.state
        if not isinstance(s, LeaderState):
            raise FatalError(f"only a leader can resign, not {s}")
        self._transition(
            ResignedState(
                s.epoch,
                s.local_key,
                now_ms + random_election_timeout_ms(self.rng, self.config.election_timeout_ms),
                {k.id for k in preferred_successors},
                preferred_successors,
            )
        )

    def _voter_key_or_raise(self, what: str) -> ReplicaKey:
        if self.local_key is None or not self.is_voter:
            raise FatalError(f"an observer cannot become {what}")
        return self.local_key
