from __future__ import annotations

from kraft.raft.states import Role

from raft_cluster import Cluster


def test_three_voters_elect_one_leader_and_commit_appends() -> None:
    c = Cluster([1, 2, 3])
    c.run_until(lambda: c.leader() is not None and c.leader().high_watermark is not None)
    leader = c.leader()
    assert leader is not None
    last = leader.schedule_append(leader.epoch, [b"a", b"b"])
    c.run_until(lambda: all(n.high_watermark is not None and n.high_watermark > last for n in c.nodes.values()))
    for n in c.nodes:
        assert c.listeners[n].values() == [b"a", b"b"]
    assert sum(1 for n in c.nodes.values() if n.role is Role.LEADER) == 1
