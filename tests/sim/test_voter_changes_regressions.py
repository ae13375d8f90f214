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
