"""The ``kraft-upgrade`` scenario: a static quorum upgraded to kraft.version 1 while its leader
may crash right after writing the upgrade. Its end check (KRaftUpgrade) must pass on the core and
fail on a core that writes the voters without their directory ids."""

from __future__ import annotations

import pytest

from kraft.raft import reconfig
from kraft.raft.voters import VoterNode, VoterSet
from kraft.sim.runner import run_seed
from kraft.sim.scenarios import build_world


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_every_node_ends_upgraded_with_the_voters_directories(seed: int) -> None:
    result = run_seed("kraft-upgrade", seed)
    assert result["violations"] == []
    world = build_world("kraft-upgrade", seed)
    world.run()
    assert all(n.raft.kraft_version == 1 for n in world.nodes.values() if n.up)


def test_an_upgrade_without_directory_ids_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def id_only(node, version, *, validate_only, now_ms):  # type: ignore[no-untyped-def]
        if node.kraft_version >= version or node.leader_state() is None:
            return None
        return node.append_kraft_upgrade(
            VoterSet(VoterNode(v.key, v.endpoints) for v in node.voter_set), version
        )

    monkeypatch.setattr(reconfig, "upgrade_kraft_version", id_only)
    world = build_world("kraft-upgrade", 1)
    world.run()
    assert world.violations and {v.invariant for v in world.violations} == {"KRaftUpgrade"}
