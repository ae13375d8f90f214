"""Break one rule of the real core and show the simulator names the broken invariant.

These prove the checkers can fail: each mutation is a classic Raft mistake.
"""

from __future__ import annotations

from typing import Any

import pytest

import kraft.raft.vote as vote_module
from kraft.raft.node import RaftNode
from kraft.sim.disk import SimLog
from kraft.sim.runner import run_seed
from kraft.sim.scenarios import build_world
from kraft.sim.world import Timing


def _invariants(result: dict[str, Any]) -> set[str]:
    return {v["invariant"] for v in result["violations"]}


def test_granting_votes_to_stale_logs_breaks_leader_completeness(monkeypatch: pytest.MonkeyPatch) -> None:
    original = vote_module.can_grant_vote

    def always_up_to_date(state: Any, candidate: Any, *, pre_vote: bool, up_to_date: bool) -> bool:
        return original(state, candidate, pre_vote=pre_vote, up_to_date=True)

    monkeypatch.setattr(vote_module, "can_grant_vote", always_up_to_date)

    # Not every seed elects a stale candidate; the first that does must be caught (the seeds that
    # show it move whenever the core's timing changes, so look through several).
    def caught(seed: int) -> bool:
        return "LeaderCompleteness" in _invariants(run_seed("crash-restart-loop", seed))

    assert any(caught(seed) for seed in range(1, 31))


def test_counting_a_minority_for_the_high_watermark_breaks_majority_reached(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def leader_alone(self: Any, state: Any, now_ms: int) -> bool:
        own = state.voters[state.local_key.id].end_offset
        if own is None or own <= state.epoch_start_offset or (self._hw is not None and own <= self._hw):
            return False
        self._set_high_watermark(own, now_ms)  # the leader's own log, as if it were a majority
        return True

    monkeypatch.setattr(RaftNode, "maybe_advance_high_watermark", leader_alone)
    assert "MajorityReachedHighWatermark" in _invariants(run_seed("steady", 1))


def test_skipping_truncation_leaves_a_diverged_follower_that_never_catches_up(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Snapshots off: with them, the leader's log start soon passes the stuck follower, which then
    # replaces its whole log by a snapshot and heals; that hides the bug from a short run.
    no_snapshots = Timing(snapshot_every=0)
    # Seed 3: the stuck follower is what Liveness reports (other seeds may first stall the commits).
    healthy = build_world("partition-leader", 3, timing=no_snapshots)
    healthy.run()
    assert healthy.violations == []

    monkeypatch.setattr(SimLog, "truncate_to", lambda self, offset: None)
    broken = build_world("partition-leader", 3, timing=no_snapshots)
    broken.run()
    assert [v.invariant for v in broken.violations] == ["Liveness"]
    assert "applied only up to offset" in broken.violations[0].detail


def test_a_leader_without_check_quorum_stays_a_zombie(monkeypatch: pytest.MonkeyPatch) -> None:
    import kraft.raft.config as config_module

    original_init = config_module.QuorumConfig.__init__

    def no_check_quorum(self: Any, **kwargs: Any) -> None:
        kwargs["check_quorum_enabled"] = False
        original_init(self, **kwargs)

    monkeypatch.setattr(config_module.QuorumConfig, "__init__", no_check_quorum)
    assert "CheckQuorum" in _invariants(run_seed("zombie-leader", 1))


def test_forgetting_to_persist_the_epoch_breaks_monotonic_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    from kraft.sim.disk import SimStore

    monkeypatch.setattr(SimStore, "write", lambda self, state: None)
    assert "MonotonicEpoch" in _invariants(run_seed("steady", 1))


@pytest.mark.parametrize("scenario", ["graceful-resign-5", "graceful-resign-7"])
def test_followers_refusing_pre_votes_after_their_leader_resigned_break_first_successor_wins(
    monkeypatch: pytest.MonkeyPatch, scenario: str
) -> None:
    # Kafka <= 4.1 (FollowerState.canGrantVote): a follower that fetched from its leader refuses
    # every pre-vote, even once that leader resigned with EndQuorumEpoch. With more than three
    # voters the first preferred successor then lacks a majority and a later one wins.
    from kraft.raft.states import FollowerState

    original = vote_module.can_grant_vote

    def kafka_41(state: Any, candidate: Any, *, pre_vote: bool, up_to_date: bool) -> bool:
        if isinstance(state, FollowerState):
            return pre_vote and up_to_date and not state.has_fetched_from_leader
        return original(state, candidate, pre_vote=pre_vote, up_to_date=up_to_date)

    assert _invariants(run_seed(scenario, 1)) == set()
    monkeypatch.setattr(vote_module, "can_grant_vote", kafka_41)
    assert _invariants(run_seed(scenario, 1)) == {"FirstSuccessorWins"}


def test_a_successor_that_campaigns_before_its_last_fetch_answer_breaks_first_successor_wins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Kafka (pollFollowerAsVoter): the first successor becomes prospective on the EndQuorumEpoch,
    # dropping the leader's last Fetch answer still on its way; it asks for votes with a shorter
    # log than the others' and a later successor wins (graceful-resign-5 seed 3, docs/raft.md).
    result = run_seed("graceful-resign-5", 3)
    assert _invariants(result) == set() and result["handovers_answer_in_flight"] == 0
    monkeypatch.setattr(RaftNode, "_awaits_last_answer", lambda self, state, now_ms: False)
    broken = run_seed("graceful-resign-5", 3)
    assert _invariants(broken) == {"FirstSuccessorWins"} and broken["handovers_answer_in_flight"] == 1


def test_an_observer_that_drops_its_leader_on_a_fetch_timeout_breaks_observer_follows_via_bootstrap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Kafka 4.0: an observer whose fetch timer expired becomes Unattached(E, leader) and asks a
    # bootstrap server, which names the same leader, whose endpoint it cannot reach: it never
    # replicates through the bootstrap address that works. Only a black-holed endpoint lets the
    # fetch timer expire (a refusing one fails each fetch at once): seed 2 draws one.
    original = RaftNode._poll_follower

    def kafka_40(self: Any, state: Any, now_ms: int) -> None:
        if not self.is_voter and now_ms >= state.fetch_deadline_ms:
            self.transition_to_unattached(state.epoch, now_ms, leader_id=state.leader_id)
            return
        original(self, state, now_ms)

    healthy = run_seed("observer-bootstrap", 2)
    assert _invariants(healthy) == set() and healthy["endpoint_refuses"] is False
    monkeypatch.setattr(RaftNode, "_poll_follower", kafka_40)
    assert _invariants(run_seed("observer-bootstrap", 2)) == {"ObserverFollowsViaBootstrap"}


def test_an_observer_that_discards_bootstrap_answers_without_backing_off_is_a_busy_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import kraft.raft.fetch as fetch_module
    from kraft.raft.request_manager import RequestManager

    original = fetch_module.handle_fetch_response

    def discard_from_bootstrap(node: Any, source: int, response: Any, now_ms: int) -> bool:
        if source < -1:
            return True  # dropped, as if it were not an answer from the leader
        return original(node, source, response, now_ms)

    monkeypatch.setattr(fetch_module, "handle_fetch_response", discard_from_bootstrap)
    monkeypatch.setattr(RequestManager, "backoff", lambda self, destination, now_ms: None)
    violations = run_seed("observer-bootstrap", 1)["violations"]
    assert {v["invariant"] for v in violations} == {"ObserverFollowsViaBootstrap"}
    assert any("busy loop" in v["detail"] for v in violations)
