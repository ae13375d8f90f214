"""Seeds of the voter-changes sweep (401..2500, 2026-11-24) that found core bugs."""

from __future__ import annotations

import pytest

from kraft.sim.scenarios import build_world


@pytest.mark.parametrize("seed", [602, 1326, 1882])
def test_a_voter_keeps_its_vote_when_it_learns_a_leader_it_cannot_reach_in_the_same_epoch(seed: int) -> None:
    # An Unattached voter that had voted in epoch E learned E's leader without that leader's
    # endpoint (KIP-853) and moved to Unattached in E with no vote: the core's transition check
    # stopped the node with a FatalError ("the vote ... cannot change or be forgotten").
    world = build_world("voter-changes", seed)
    world.run()
    assert [v for v in world.violations if v.invariant == "FatalError"] == []


def test_an_offset_committed_by_a_set_no_log_holds_any_more_is_not_a_violation() -> None:
    # Seed 1987: leader 1, cut off, appended the removal of voter 3 and committed offset 1560 on
    # voters 1 and 2 (a majority of {1,2,5}); the next leader truncated the removal. Only 2 of
    # {1,2,3,5} held 1560, which the checker called a loss, though 3 and 5 cannot outvote 1 and 2.
    world = build_world("voter-changes", 1987)
    world.run()
    assert world.violations == []
    assert world.checker.committed_end > 1560  # the run went on past the old false alarm


def test_committed_on_majority_still_fails_when_the_voters_lacking_an_offset_can_outvote() -> None:
    world = build_world("voter-changes", 1)
    world.run()
    assert world.violations == []
    checker = world.checker
    end = checker.committed_end
    voters = world.nodes[world.current_leader().node_id].raft.voter_set
    members = sorted(voters.ids)
    # Take the offset away from the voters one by one: reported once the voters lacking it form a
    # majority of the set in force (here also the committed set), not before.
    nodes = world.nodes
    for node_id in members:
        nodes[node_id].log.truncate_to(end - 1)
        checker._check_committed_on_majority()
        lacking = [v for v in members if nodes[v].log.end_offset() < end]
        reported = [v for v in world.violations if v.invariant == "CommittedOnMajority"]
        assert bool(reported) == (len(lacking) >= voters.majority), (lacking, members)
        if reported:
            return
    raise AssertionError("never reported")
