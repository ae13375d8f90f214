"""Several in-memory nodes exchanging messages: end-to-end behaviour of the core."""

from __future__ import annotations

from clusters import RaftCluster

from kraft.raft.states import Role
from kraft.raft.types import OffsetAndEpoch


def committed_everywhere(c: RaftCluster, offset: int, nodes: list[int] | None = None) -> bool:
    ids = nodes if nodes is not None else list(c.nodes)
    return all(c.is_up(i) and (c.nodes[i].high_watermark or 0) > offset for i in ids)


def elect(c: RaftCluster) -> int:
    node_id = c.elected_leader().node_id
    assert node_id is not None
    return node_id


def test_three_voters_elect_one_leader_and_commit_in_order_exactly_once() -> None:
    c = RaftCluster([1, 2, 3])
    leader_id = elect(c)
    leader = c.nodes[leader_id]
    last = 0
    for i in range(20):
        last = leader.schedule_append(leader.epoch, [b"v%d" % i])
        c.run_for(5)
    c.run_until(lambda: committed_everywhere(c, last))
    expected = [b"v%d" % i for i in range(20)]
    for n in c.nodes:
        assert c.listeners[n].values() == expected
        offsets = [b.base_offset for b in c.listeners[n].commits]
        assert offsets == sorted(set(offsets))
    assert sum(1 for n in c.nodes.values() if n.role is Role.LEADER) == 1


def test_observer_discovers_the_leader_and_replicates() -> None:
    c = RaftCluster([1, 2, 3], observers=(7,))
    leader_id = elect(c)
    leader = c.nodes[leader_id]
    last = leader.schedule_append(leader.epoch, [b"x"])
    c.run_until(lambda: committed_everywhere(c, last))
    observer = c.nodes[7]
    assert observer.role is Role.FOLLOWER and observer.leader_id == leader_id and not observer.is_voter
    assert observer.metrics.current_state == "observer"
    assert c.listeners[7].values() == [b"x"]


def test_leader_crash_elects_new_leader_without_losing_committed_data() -> None:
    c = RaftCluster([1, 2, 3], fetch_timeout_ms=500, election_timeout_ms=200)
    old = elect(c)
    leader = c.nodes[old]
    last = leader.schedule_append(leader.epoch, [b"a", b"b"])
    c.run_until(lambda: committed_everywhere(c, last))
    old = elect(c)  # leadership may have moved meanwhile
    old_epoch = c.nodes[old].epoch
    c.crash(old)
    c.run_until(lambda: c.leader() is not None and c.leader().node_id != old)  # type: ignore[union-attr]
    new = c.leader()
    assert new is not None and new.epoch > old_epoch
    last = new.schedule_append(new.epoch, [b"c"])
    c.run_until(lambda: committed_everywhere(c, last))
    c.restart(old)
    c.run_until(lambda: committed_everywhere(c, last, [old]))
    assert c.nodes[old].role is Role.FOLLOWER
    assert c.listeners[old].values() == [b"a", b"b", b"c"]


def test_isolated_voter_does_not_raise_the_epoch_with_pre_vote() -> None:
    c = RaftCluster([1, 2, 3], fetch_timeout_ms=500, election_timeout_ms=200)
    leader_id = elect(c)
    epoch = c.nodes[leader_id].epoch
    follower = next(i for i in c.nodes if i != leader_id)
    c.cut_off(follower)
    c.run_for(3000)  # several election timeouts
    assert c.nodes[follower].epoch == epoch  # pre-votes never succeeded, so no bump
    c.reconnect(follower)
    c.run_until(lambda: c.nodes[follower].role is Role.FOLLOWER)
    assert c.nodes[leader_id].role is Role.LEADER and c.nodes[leader_id].epoch == epoch


def test_partitioned_leader_resigns_via_check_quorum_and_majority_moves_on() -> None:
    c = RaftCluster([1, 2, 3], fetch_timeout_ms=500, election_timeout_ms=200)
    old = elect(c)
    c.cut_off(old)
    c.run_until(lambda: c.nodes[old].role is not Role.LEADER, timeout_ms=5_000)
    others = [i for i in c.nodes if i != old]
    c.run_until(lambda: any(c.nodes[i].role is Role.LEADER for i in others))
    c.reconnect(old)
    c.run_until(lambda: c.nodes[old].role is Role.FOLLOWER)


def test_legacy_elections_without_pre_vote_still_elect() -> None:
    c = RaftCluster([1, 2, 3], pre_vote_enabled=False, election_backoff_max_ms=100)
    elect(c)
    assert all(n.role is not Role.PROSPECTIVE for n in c.nodes.values())


def test_snapshot_is_fetched_by_a_new_follower_in_chunks() -> None:
    c = RaftCluster([1, 2, 3], fetch_snapshot_max_bytes=64)
    leader_id = elect(c)
    leader = c.nodes[leader_id]
    last = 0
    for i in range(10):
        last = leader.schedule_append(leader.epoch, [b"value-%d" % i])
    c.run_until(lambda: committed_everywhere(c, last))
    snapshot_id = OffsetAndEpoch(last + 1, leader.epoch)
    # Every node snapshots its own state; the leader then cleans its log below the snapshot.
    for n, node in c.nodes.items():
        writer = node.create_snapshot(snapshot_id, 0)
        assert writer is not None
        writer.append(c.listeners[n].values())
        writer.freeze()
    c.run_for(5)
    assert leader.log.start_offset() == snapshot_id.offset
    # A wiped follower must take the snapshot, then the log after it.
    victim = next(i for i in c.nodes if i != leader_id)
    c.wipe(victim)
    more = leader.schedule_append(leader.epoch, [b"after"])
    c.run_until(lambda: committed_everywhere(c, more, [victim]))
    assert c.log(victim).start_offset() == snapshot_id.offset
    listener = c.listeners[victim]
    assert len(listener.snapshots) == 1 and listener.snapshots[0].snapshot_id == snapshot_id
    assert listener.values() == [b"value-%d" % i for i in range(10)] + [b"after"]
    assert not c.listeners[leader_id].snapshots  # a leader never loads a snapshot


def test_graceful_shutdown_of_leader_hands_over_quickly() -> None:
    c = RaftCluster([1, 2, 3], fetch_timeout_ms=2_000, election_timeout_ms=1_000)
    old = elect(c)
    node = c.nodes[old]
    c.shutdown(old, 5_000)
    assert node.role is Role.RESIGNED and not node.is_shutdown_complete(c.now_ms)
    start = c.now_ms
    c.run_until(lambda: node.is_shutdown_complete(c.now_ms))
    assert c.now_ms - start < 2_000  # EndQuorumEpoch beats the 2 s fetch timeout
    new = c.leader()
    assert new is not None and new.node_id != old
    assert node.metrics.current_state in ("follower", "unattached")
