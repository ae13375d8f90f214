"""Broker nodes end to end on real raft cores and real controllers (in memory, virtual time)."""

from __future__ import annotations

import pytest
from clusters import BrokerCluster

from kraft.broker.lifecycle import BrokerState
from kraft.metadata.image import image_equal
from kraft.protocol.messages import create_topics, unregister_broker


def create_topic(cluster: BrokerCluster, name: str, partitions: int = 1, rf: int = 3, **configs: str) -> None:
    cls = create_topics.REQUEST.cls
    topic = cls.CreatableTopic(
        name=name,
        num_partitions=partitions,
        replication_factor=rf,
        assignments=[],
        configs=[cls.CreatableTopic.CreatableTopicConfig(name=k, value=v) for k, v in configs.items()],
    )
    response = cluster.call(create_topics, 7, topics=[topic])
    assert response.topics[0].error_code == 0, response


def brokers_caught_up(cluster: BrokerCluster) -> bool:
    active = cluster.active()
    if active is None:
        return False
    offset = active.image.provenance.last_offset
    return all(
        cluster.is_up(b) and cluster.broker(b).image.provenance.last_offset >= offset
        for b in cluster.broker_ids
    )


def test_brokers_register_catch_up_and_run_unfenced() -> None:
    cluster = BrokerCluster()
    cluster.run_until(cluster.all_running)
    image = cluster.committed_image()
    for b in cluster.broker_ids:
        registration = image.brokers[b]
        node = cluster.broker(b)
        assert not registration.fenced and registration.epoch == node.lifecycle.broker_epoch
        assert registration.incarnation_id == cluster.sim_broker(b).incarnation_id
        listeners = node.lifecycle.config.listeners
        assert [(e.host, e.port) for e in registration.listeners] == [(x.host, x.port) for x in listeners]
        assert f"broker{b}." in listeners[0].host  # its own, not another broker's


def test_every_broker_replays_the_same_image_as_the_controllers() -> None:
    cluster = BrokerCluster()
    cluster.run_until(cluster.all_running)
    create_topic(cluster, "orders", partitions=3, **{"min.insync.replicas": "2"})
    create_topic(cluster, "audit", partitions=1, rf=2)
    cluster.run_until(lambda: brokers_caught_up(cluster))
    active = cluster.active()
    assert active is not None
    for b in cluster.broker_ids:
        image = cluster.broker(b).image
        assert set(image.topics_by_name) == {"orders", "audit"}
        if image.provenance == active.image.provenance:
            assert image_equal(image, active.image)


def test_controlled_shutdown_moves_leadership_away_then_a_clean_restart_registers_with_its_epoch() -> None:
    cluster = BrokerCluster()
    cluster.run_until(cluster.all_running)
    create_topic(cluster, "t", partitions=3)
    leaders = {p.leader for _t, _i, p in cluster.committed_image().iter_partitions()}
    victim = 101 if 101 in leaders else sorted(leaders)[0]
    cluster.broker(victim).begin_controlled_shutdown(cluster.now_ms)
    cluster.run_until(lambda: cluster.broker(victim).lifecycle.controlled_shutdown_done)
    image = cluster.committed_image()
    assert all(p.leader != victim and victim not in p.isr for _t, _i, p in image.iter_partitions())
    epoch = cluster.broker(victim).lifecycle.broker_epoch
    cluster.stop_cleanly(victim)
    cluster.restart(victim)
    cluster.run_until(cluster.all_running)
    # The controller saw PreviousBrokerEpoch == the old epoch: a clean restart (spec 2.2).
    assert cluster.broker(victim).lifecycle.config.previous_broker_epoch == epoch
    assert cluster.committed_image().brokers[victim].epoch > epoch


def test_a_broker_cut_off_past_its_session_is_fenced_then_unfenced_without_registering_again() -> None:
    cluster = BrokerCluster()
    cluster.run_until(cluster.all_running)
    cluster.cut_off(103)
    cluster.run_until(lambda: cluster.committed_image().brokers[103].fenced)
    cluster.reconnect(103)
    cluster.run_until(lambda: not cluster.committed_image().brokers[103].fenced)
    node = cluster.broker(103)
    assert node.lifecycle.registrations == 1 and node.broker_state == BrokerState.RUNNING
    cluster.run_until(lambda: not node.lifecycle.is_fenced)


def test_brokers_follow_a_new_active_controller_after_the_old_one_crashes() -> None:
    cluster = BrokerCluster()
    cluster.run_until(cluster.all_running)
    old = cluster.active()
    assert old is not None
    cluster.crash(old.node_id)
    cluster.run_until(lambda: cluster.active() is not None and cluster.active() is not old)
    create_topic(cluster, "after-failover")
    cluster.run_until(lambda: brokers_caught_up(cluster))
    cluster.run_for(3 * cluster.config.session_timeout_ms)
    image = cluster.committed_image()
    assert all(not image.brokers[b].fenced for b in cluster.broker_ids)
    assert all("after-failover" in cluster.broker(b).image.topics_by_name for b in cluster.broker_ids)


def test_an_unregistered_broker_registers_again() -> None:
    cluster = BrokerCluster()
    cluster.run_until(cluster.all_running)
    response = cluster.call(unregister_broker, 0, broker_id=102)
    assert response.error_code == 0
    node = cluster.broker(102)
    cluster.run_until(lambda: node.lifecycle.registrations == 2 and 102 in cluster.committed_image().brokers)
    cluster.run_until(lambda: not cluster.committed_image().brokers[102].fenced)


def test_a_restarted_broker_loads_its_own_snapshot_and_gets_the_same_image() -> None:
    cluster = BrokerCluster(snapshot_max_bytes=400)
    cluster.run_until(cluster.all_running)
    for i in range(6):
        create_topic(cluster, f"topic-{i}", partitions=2)
    cluster.run_until(lambda: brokers_caught_up(cluster))
    node = cluster.broker(101)
    assert node.metadata is not None and node.metadata.snapshots_written >= 1
    cluster.stop_cleanly(101)
    cluster.restart(101)
    restarted = cluster.broker(101)
    cluster.run_until(lambda: brokers_caught_up(cluster) and cluster.all_running())
    assert restarted.metadata is not None and restarted.metadata.snapshots_loaded == 1
    active = cluster.active()
    assert active is not None
    cluster.run_until(lambda: restarted.image.provenance == active.image.provenance)
    assert image_equal(restarted.image, active.image, ignore_registration_offsets=True)


@pytest.mark.parametrize("controllers", [1, 3])
def test_combined_nodes_run_as_broker_and_controller(controllers: int) -> None:
    ids = tuple(range(1, controllers + 1))
    cluster = BrokerCluster(controllers, brokers=ids, combined=ids)
    cluster.run_until(cluster.all_running)
    create_topic(cluster, "c", partitions=2, rf=controllers)
    image = cluster.committed_image()
    assert sorted(image.brokers) == list(ids) and all(not b.fenced for b in image.brokers.values())
    for n in ids:
        assert cluster.broker(n).image is cluster.controller(n).image  # one image, replayed once


def test_a_leader_adds_returning_replicas_back_to_the_isr_which_clears_the_elr() -> None:
    cluster = BrokerCluster()
    cluster.run_until(cluster.all_running)
    create_topic(cluster, "elr", partitions=1, rf=3, **{"min.insync.replicas": "3"})
    (topic,) = cluster.committed_image().topics_by_name.values()
    leader = topic.partitions[0].leader
    follower = next(b for b in cluster.broker_ids if b != leader)
    cluster.cut_off(follower)
    cluster.run_until(lambda: follower in cluster.committed_image().topics_by_name["elr"].partitions[0].elr)
    p = cluster.committed_image().topics_by_name["elr"].partitions[0]
    assert follower not in p.isr and p.leader == leader  # below min ISR: it entered the ELR
    cluster.run_until(lambda: cluster.broker(leader).image.topics_by_name["elr"].partitions[0].elr != ())
    metrics = cluster.broker(leader).metrics_snapshot()
    assert (metrics["leader_count"], metrics["under_min_isr_partitions"], metrics["partition_count"]) == (
        1,
        1,
        1,
    )
    assert metrics["broker_state"] == 3 and metrics["fenced"] == 0
    cluster.reconnect(follower)
    cluster.run_until(
        lambda: sorted(cluster.committed_image().topics_by_name["elr"].partitions[0].isr) == [101, 102, 103]
    )
    p = cluster.committed_image().topics_by_name["elr"].partitions[0]
    assert p.elr == () and p.leader == leader
    assert cluster.broker(leader).isr.partitions_expanded >= 1


def test_an_unclean_leader_reports_its_partition_recovered() -> None:
    cluster = BrokerCluster()
    cluster.run_until(cluster.all_running)
    create_topic(cluster, "u", partitions=1, rf=2, **{"unclean.leader.election.enable": "true"})
    first, second = cluster.committed_image().topics_by_name["u"].partitions[0].replicas
    cluster.crash(first)
    cluster.run_until(lambda: cluster.committed_image().topics_by_name["u"].partitions[0].leader == second)
    cluster.crash(second)  # the last ISR member: ISR empties, second is the last known leader
    cluster.run_until(lambda: cluster.committed_image().topics_by_name["u"].partitions[0].leader == -1)
    # An unclean restart: second leaves the ELR and is forgotten as last known leader; only the
    # topic's unclean.leader.election.enable can elect it now.
    cluster.restart(second)
    cluster.run_until(lambda: cluster.committed_image().topics_by_name["u"].partitions[0].leader == second)
    p = cluster.committed_image().topics_by_name["u"].partitions[0]
    assert p.isr == (second,) and p.elr == ()
    cluster.run_until(
        lambda: cluster.committed_image().topics_by_name["u"].partitions[0].leader_recovery_state == 0
    )
    assert cluster.broker(second).isr.partitions_recovered >= 1
