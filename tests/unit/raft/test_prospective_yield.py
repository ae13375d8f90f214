"""Two voters that lose their leader together do not split the vote (beyond Kafka).

Both followers' fetch timeouts expire in the same poll, both ask for pre-votes, and each grants the
other's. In Kafka 4.1 both then bump the epoch and vote for themselves; neither can win, and the
next election comes a randomized election timeout later. Here the one with the higher id (logs
being equal) gives way, so the other wins at once, one epoch up.
"""

from __future__ import annotations

from clusters import RaftCluster

from kraft.raft.states import ProspectiveState, Role


def test_simultaneous_prospectives_elect_one_leader_in_one_epoch() -> None:
    c = RaftCluster([1, 2, 3], fetch_timeout_ms=500, election_timeout_ms=1000)
    leader = c.elected_leader()
    epoch = leader.epoch
    last = leader.schedule_append(epoch, [b"x"])
    c.run_until(lambda: all((c.nodes[n].high_watermark or 0) > last for n in c.nodes))
    c.crash(leader.node_id)
    survivors = sorted(n for n in c.nodes if n != leader.node_id)
    yielded: list[int] = []

    def watch() -> bool:
        for n in survivors:
            state = c.nodes[n].quorum.state
            if isinstance(state, ProspectiveState) and state.yielded_to is not None:
                yielded.append(n)
        now = c.leader()
        return now is not None and now.node_id != leader.node_id

    c.run_until(watch)
    new = c.leader()
    assert new is not None
    assert new.epoch == epoch + 1, f"a split vote cost extra epochs: {epoch} -> {new.epoch}"
    assert new.node_id == survivors[0]  # equal logs: the lower id wins
    assert set(yielded) == {survivors[1]}
    c.run_until(lambda: c.nodes[survivors[1]].role is Role.FOLLOWER)
    assert c.nodes[survivors[1]].epoch == epoch + 1
