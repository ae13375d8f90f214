"""Seeds of the 2501..10000 sweeps (2026-11-24) that broke a Liveness expectation; each found a
core behaviour worth changing (docs/simulator.md, "Findings")."""

from __future__ import annotations

import pytest

from kraft.sim.scenarios import build_world


@pytest.mark.parametrize(
    ("scenario", "seed"),
    [
        # An observer that had tried every bootstrap server slept to its fetch timeout: a request
        # that timed out unread hid their backoffs (RequestManager.next_event_ms).
        ("voter-changes", 5856),
        # The admin removed a live voter while another voter's directory was lost: the new set
        # could never commit its removal, and stopped the quorum. The leader now refuses it.
        ("voter-changes", 7119),
        # A voter refused a pre-vote with 6 ms left on its own fetch timer; both Prospectives went
        # back to following for a whole fetch timeout (Kafka's ProspectiveState). Now an election
        # timeout.
        ("zombie-leader", 5603),
    ],
)
def test_the_quorum_recovers(scenario: str, seed: int) -> None:
    world = build_world(scenario, seed)
    world.run()
    assert world.violations == []
