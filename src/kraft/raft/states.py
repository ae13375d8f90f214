"""One mutable dataclass per role; ``QuorumState`` owns the current one and every transition.

These classes hold data and answer questions about it; they never transition themselves, send
messages or touch storage.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from kraft.raft.log import RawSnapshotWriter
from kraft.raft.types import Endpoint, OffsetAndEpoch, ReplicaKey


class Role(enum.Enum):
    UNATTACHED = enum.auto()
    PROSPECTIVE = enum.auto()  # KIP-996 Pre-Vote
    CANDIDATE = enum.auto()
    LEADER = enum.auto()
    FOLLOWER = enum.auto()
    RESIGNED = enum.auto()


class VoteStatus(enum.Enum):
    UNRECORDED = enum.auto()
    GRANTED = enum.auto()
    REJECTED = enum.auto()


@dataclass(slots=True)
class EpochElection:
    """The tally shared by Prospective (pre-votes) and Candidate (votes).

    The local voter is granted on creation; a recorded vote never flips (but a prospective voter
    whose leader resigned asks the refusers again: ``forget_rejections``); only voters count.
    """

    votes: dict[int, VoteStatus]

    @staticmethod
    def start(voters: frozenset[int], local_id: int) -> EpochElection:
        votes = {v: VoteStatus.UNRECORDED for v in sorted(voters)}
        votes[local_id] = VoteStatus.GRANTED
        return EpochElection(votes)

    @property
    def majority(self) -> int:
        return len(self.votes) // 2 + 1

    def record(self, voter_id: int, granted: bool) -> bool:
        """Returns whether the vote was recorded (first response of a voter)."""
        if self.votes.get(voter_id) is not VoteStatus.UNRECORDED:
            return False
        self.votes[voter_id] = VoteStatus.GRANTED if granted else VoteStatus.REJECTED
        return True

    def forget_rejections(self) -> None:
        """A new pre-vote round of the same prospective node: ask again the voters that refused.

        Grants stand: the request is the same (a prospective node neither appends nor changes
        its epoch), and a pre-vote binds nobody.
        """
        for voter_id, status in self.votes.items():
            if status is VoteStatus.REJECTED:
                self.votes[voter_id] = VoteStatus.UNRECORDED

    def count(self, status: VoteStatus) -> int:
        return sum(1 for s in self.votes.values() if s is status)

    @property
    def is_granted(self) -> bool:
        return self.count(VoteStatus.GRANTED) >= self.majority

    @property
    def is_rejected(self) -> bool:
        return self.count(VoteStatus.GRANTED) + self.count(VoteStatus.UNRECORDED) < self.majority

    def unrecorded(self) -> list[int]:
        return [v for v, s in self.votes.items() if s is VoteStatus.UNRECORDED]

    def granting(self) -> list[int]:
        return [v for v, s in self.votes.items() if s is VoteStatus.GRANTED]


@dataclass(slots=True)
class UnattachedState:
    """Epoch known, no reachable leader. "Voted" when ``voted_key`` is set."""

    epoch: int
    leader_id: int | None
    voted_key: ReplicaKey | None
    election_deadline_ms: int | None  # None = infinite (observers)
    role: Role = field(default=Role.UNATTACHED, init=False)


@dataclass(slots=True)
class ProspectiveState:
    """Asks for pre-votes without bumping the epoch (KIP-996)."""

    epoch: int
    leader_id: int | None
    leader_endpoints: tuple[Endpoint, ...]
    voted_key: ReplicaKey | None
    election: EpochElection
    election_deadline_ms: int
    # Beyond Kafka: the id of a prospective peer this node granted a pre-vote to and gives way
    # to (its log is newer, or as new and its id lower). This node then does not become a
    # candidate on its own pre-vote majority this round, so two voters that lost their leader
    # together do not both bump the epoch, vote for themselves and split.
    yielded_to: int | None = None
    # The preferred successors of the leader whose resignation started this round (copied from
    # the FollowerState): between two as up-to-date prospective peers, the better-ranked one
    # wins the tie, not the lower id, so that the first successor takes over.
    successors: tuple[ReplicaKey, ...] = ()
    # Past Kafka: ``leader_id`` resigned this epoch (EndQuorumEpoch, before or during this state).
    # It never leads the epoch again, so a lost round does not go back to following it: this node
    # stays prospective and asks the voters that refused again at ``retry_at_ms`` (by then they
    # have the EndQuorumEpoch too), ``retries`` rounds lost so far. See RaftNode._retry_prospective.
    leader_resigned: bool = False
    retry_at_ms: int | None = None
    retries: int = 0
    role: Role = field(default=Role.PROSPECTIVE, init=False)


@dataclass(slots=True)
class CandidateState:
    """Bumped the epoch and voted for itself; asks for binding votes."""

    epoch: int
    local_key: ReplicaKey
    election: EpochElection
    election_deadline_ms: int
    retries: int = 1  # 3.9 exponential backoff only (pre-vote disabled)
    backoff_until_ms: int | None = None
    role: Role = field(default=Role.CANDIDATE, init=False)


@dataclass(slots=True)
class ReplicaProgress:
    """What a leader knows about one replica (KIP-836 timestamps included)."""

    key: ReplicaKey
    end_offset: int | None = None
    last_fetch_ms: int = -1
    last_fetch_leader_end_offset: int = -1
    last_caught_up_ms: int = -1
    # The high watermark this leader last sent the replica in a Fetch response: what the replica
    # knows. A Fetch is never parked while the replica knows less than the leader (see fetch.py).
    told_high_watermark: int = -1

    def update_on_fetch(self, fetch_offset: int, leader_end_offset: int, now_ms: int) -> None:
        # KIP-836: caught up if at the leader's end now, or at the end the leader had at the
        # previous fetch (then caught up as of that previous fetch).
        if fetch_offset >= leader_end_offset:
            self.last_caught_up_ms = max(self.last_caught_up_ms, now_ms)
        elif self.last_fetch_leader_end_offset > 0 and fetch_offset >= self.last_fetch_leader_end_offset:
            self.last_caught_up_ms = max(self.last_caught_up_ms, self.last_fetch_ms)
        self.last_fetch_leader_end_offset = leader_end_offset
        self.last_fetch_ms = max(self.last_fetch_ms, now_ms)
        self.end_offset = fetch_offset


@dataclass(slots=True)
class LeaderState:
    """Elected for ``epoch``; owns replica progress, check-quorum and BeginQuorumEpoch timers."""

    epoch: int
    local_key: ReplicaKey
    epoch_start_offset: int
    granting_voters: tuple[int, ...]
    voters: dict[int, ReplicaProgress]
    check_quorum_deadline_ms: int | None
    begin_quorum_epoch_deadline_ms: int
    observers: dict[ReplicaKey, ReplicaProgress] = field(default_factory=dict)
    fetched_voters: set[int] = field(default_factory=set)
    role: Role = field(default=Role.LEADER, init=False)


@dataclass(slots=True)
class SnapshotDownload:
    snapshot_id: OffsetAndEpoch
    writer: RawSnapshotWriter


@dataclass(slots=True)
class FollowerState:
    """Knows the leader of ``epoch``; fetches from it.

    ``has_fetched_from_leader`` and ``leader_resigned`` live and die with this state: a new
    FollowerState (another epoch, or the same one after a failed pre-vote) starts with both False.
    """

    epoch: int
    leader_id: int
    leader_endpoints: tuple[Endpoint, ...]
    voted_key: ReplicaKey | None
    fetch_deadline_ms: int
    has_fetched_from_leader: bool = False
    # The leader said (EndQuorumEpoch) it resigned this epoch: it can never lead it again, so a
    # fetch it answered earlier is no evidence of a live leader (see vote.can_grant_vote).
    leader_resigned: bool = False
    # The resigned leader's preferred successors (EndQuorumEpoch), best first; () otherwise.
    successors: tuple[ReplicaKey, ...] = ()
    # A fetch sent before the EndQuorumEpoch came is still unanswered: its answer may carry the
    # leader's last records, so the election waits for it (RaftNode._poll_follower).
    fetch_before_resignation: bool = False
    # Where fetches go: None = the leader's own (advertised) endpoint, else a bootstrap
    # destination (-2, -3, ...) that answered as the leader: kept while it keeps answering.
    fetch_via: int | None = None
    # The leader's endpoint failed (an error answer, or no answer within a fetch timeout for an
    # observer): the next fetches try the bootstrap servers, whichever of them is the leader.
    via_bootstrap: bool = False
    download: SnapshotDownload | None = None
    # KIP-853: when this voter may next tell the leader its endpoint (UpdateRaftVoter), if the
    # voter set has another one for it.
    voter_update_after_ms: int = 0
    role: Role = field(default=Role.FOLLOWER, init=False)

    def on_fetched_from_leader(self, fetch_deadline_ms: int, source: int) -> None:
        """A successful Fetch or FetchSnapshot answer from ``source`` (the leader's endpoint or,
        after it failed, a bootstrap address of it): keep fetching there, and restart the fetch
        timer, unless the leader resigned since: then a response sent before the resignation
        (reordering) must not push back the election EndQuorumEpoch asked for. Its data is kept,
        its evidence of a live leader is not."""
        self.has_fetched_from_leader = True
        if source == self.leader_id:
            self.fetch_via = None
        elif self.via_bootstrap:
            # Kept only as a fallback: a discovery answer through a bootstrap server does not
            # stop the next fetches from going to the leader's endpoint (KAFKA-19354).
            self.fetch_via = source
        self.via_bootstrap = False
        if not self.leader_resigned:
            self.fetch_deadline_ms = fetch_deadline_ms


@dataclass(slots=True)
class ResignedState:
    """A former leader that stopped accepting writes; tells voters with EndQuorumEpoch."""

    epoch: int
    local_key: ReplicaKey
    election_deadline_ms: int
    unacked_voters: set[int]
    preferred_successors: tuple[ReplicaKey, ...]
    role: Role = field(default=Role.RESIGNED, init=False)


State = UnattachedState | ProspectiveState | CandidateState | LeaderState | FollowerState | ResignedState
