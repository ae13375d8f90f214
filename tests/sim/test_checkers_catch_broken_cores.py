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
    found = set().union(*(_invariants(run_seed("crash-restart-loop", seed)) for seed in (1, 2)))
    assert "LeaderCompleteness" in found


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
