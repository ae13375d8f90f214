"""The quorum controller end to end on real raft cores (in memory): bootstrap, broker lifecycle,
topics, AlterPartition, elections, configs, features, failover and snapshots."""

from __future__ import annotations

import uuid

import pytest
from clusters import CLUSTER_ID, ControllerCluster

from kraft.controller.quorum_controller import ControllerConfig
from kraft.metadata.image import MetadataLoader, image_equal
from kraft.metadata.records import MetadataRecordType, decode_record
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    broker_registration,
    create_partitions,
    delete_topics,
    describe_configs,
    update_features,
)

TOPIC, BROKER = 2, 4


def committed_record_types(cluster: ControllerCluster, node: int = 1) -> list[str]:
    out = []
    log = cluster.log(node)
    from kraft.records.batch import iter_batches

    for batch in iter_batches(log.read(0, 1 << 30)):
        if batch.is_control:
            continue
        for r in batch.records:
            out.append(decode_record(r.value or b"").type.name)
    return out


def test_first_active_controller_writes_bootstrap_records_in_one_transaction() -> None:
    c = ControllerCluster(1)
    ctl = c.wait_active()
    assert dict(ctl.image.features) == {"metadata.version": 25, "eligible.leader.replicas.version": 1}
    assert committed_record_types(c) == [
        "BEGIN_TRANSACTION",
        "FEATURE_LEVEL",
        "FEATURE_LEVEL",
        "ZK_MIGRATION_STATE",
        "END_TRANSACTION",
    ]


def test_bootstrap_features_come_from_the_bootstrap_checkpoint_and_are_written_once() -> None:
    c = ControllerCluster(3, bootstrap={"metadata.version": 24, "eligible.leader.replicas.version": 0})
    first = c.wait_active()
    assert dict(first.image.features) == {"metadata.version": 24}
    c.crash(first.node_id)
    c.run_until(lambda: c.active() is not None and c.active() is not first)
    c.run_for(500)
    assert committed_record_types(c, c.active().node_id).count("FEATURE_LEVEL") == 1


def test_broker_epoch_is_the_offset_of_its_registration_record() -> None:
    c = ControllerCluster(1)
    r = c.register(1)
    assert r.error_code == 0
    broker = c.image().brokers[1]
    assert broker.epoch == r.broker_epoch == broker.registration_offset
    assert broker.fenced


def test_registration_errors() -> None:
    c = ControllerCluster(1)
    c.start_brokers([1])
    cls = broker_registration.REQUEST.cls
    # another incarnation while the first one's session is live
    assert c.register(1, incarnation=uuid.UUID(int=99)).error_code == ErrorCode.DUPLICATE_BROKER_REGISTRATION
    # wrong cluster id
    bad = c.call(
        broker_registration,
        4,
        broker_id=2,
        cluster_id="other",
        incarnation_id=uuid.UUID(int=5),
        listeners=[],
        features=[],
        rack=None,
        log_dirs=[uuid.UUID(int=77)],
    )
    assert bad.error_code == ErrorCode.INCONSISTENT_CLUSTER_ID
    # a broker that does not support the finalized metadata.version
    old = c.call(
        broker_registration,
        4,
        broker_id=2,
        cluster_id=CLUSTER_ID,
        incarnation_id=uuid.UUID(int=5),
        listeners=[],
        rack=None,
        log_dirs=[uuid.UUID(int=77)],
        features=[cls.Feature(name="metadata.version", min_supported_version=1, max_supported_version=20)],
    )
    assert old.error_code == ErrorCode.UNSUPPORTED_VERSION
    # reserved or someone else's log directory
    assert c.register(2, log_dir=uuid.UUID(int=1)).error_code == ErrorCode.INVALID_REGISTRATION
    owned = c.image().brokers[1].directories[0]
    assert c.register(2, log_dir=owned).error_code == ErrorCode.INVALID_REGISTRATION
    assert 2 not in c.image().brokers


def test_same_incarnation_reregistration_keeps_the_epoch() -> None:
    c = ControllerCluster(1)
    first = c.register(1)
    again = c.register(1)
    assert again.error_code == 0 and again.broker_epoch == first.broker_epoch


def test_heartbeat_unfences_only_once_caught_up_and_rejects_stale_epochs() -> None:
    c = ControllerCluster(1)
    epoch = c.register(1).broker_epoch
    behind = c.heartbeat(1, epoch, offset=epoch - 1)
    assert behind.is_fenced and not behind.is_caught_up
    assert c.image().brokers[1].fenced
    ok = c.heartbeat(1, epoch, offset=epoch)
    assert not ok.is_fenced and ok.is_caught_up
    assert not c.image().brokers[1].fenced
    assert c.heartbeat(1, epoch + 100).error_code == ErrorCode.STALE_BROKER_EPOCH


def test_session_expiry_fences_silent_brokers_one_at_a_time_and_moves_leadership() -> None:
    c = ControllerCluster(1, config=ControllerConfig(max_idle_interval_ms=0, session_timeout_ms=3000))
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 3, 3)
    start = c.wait_active().heartbeats.last_contact_ms[1]
    fenced_at: dict[int, int] = {}
    last_heartbeat_ms = [c.now_ms]

    def keep_alive() -> bool:
        if c.now_ms - last_heartbeat_ms[0] >= 500:
            last_heartbeat_ms[0] = c.now_ms
            for b in (2, 3):
                c.heartbeat(b, epochs[b])
        img = c.image()
        if img.brokers[1].fenced and 1 not in fenced_at:
            fenced_at[1] = c.now_ms
        return 1 in fenced_at

    c.run_until(keep_alive, timeout_ms=10_000)
    assert fenced_at[1] - start >= 3000
    img = c.image()
    assert not img.brokers[2].fenced and not img.brokers[3].fenced
    for p in img.topics_by_name["t"].partitions.values():
        assert 1 not in p.isr and p.leader in (2, 3)


def test_controlled_shutdown_moves_leadership_before_shutting_down() -> None:
    c = ControllerCluster(1)
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 3, 3)
    assert c.image().partitions_led_by(1)
    r = c.heartbeat(1, epochs[1], want_shutdown=True)
    assert not r.should_shut_down and not r.is_fenced
    img = c.image()
    assert img.brokers[1].in_controlled_shutdown
    assert not img.partitions_led_by(1)
    for b in (2, 3):
        c.heartbeat(b, epochs[b])
    done = c.heartbeat(1, epochs[1], want_shutdown=True)
    assert done.should_shut_down and done.is_fenced
    assert c.image().brokers[1].fenced


def test_clean_restart_keeps_elr_membership_and_unclean_restart_drops_it() -> None:
    c = ControllerCluster(1)
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 1, 3, configs={"min.insync.replicas": "3"})
    t = c.image().topics_by_name["t"]
    p = t.partitions[0]
    # the leader drops both followers: below min ISR, so they enter ELR
    r = c.alter_partition(
        p.leader,
        epochs[p.leader],
        t.id,
        0,
        [p.leader],
        leader_epoch=p.leader_epoch,
        partition_epoch=p.partition_epoch,
    )
    assert r.topics[0].partitions[0].error_code == 0
    p = c.image().topics_by_name["t"].partitions[0]
    followers = [b for b in p.replicas if b != p.leader]
    assert sorted(p.elr) == sorted(followers)
    clean, unclean = followers
    for b in followers:  # both stop; their sessions end (fenced brokers stay in ELR: spec 5.3 rule 8)
        assert c.heartbeat(b, epochs[b], want_fence=True).is_fenced
    assert sorted(c.image().topics_by_name["t"].partitions[0].elr) == sorted(followers)
    assert c.register(clean, incarnation=uuid.UUID(int=500), previous_epoch=epochs[clean]).error_code == 0
    assert clean in c.image().topics_by_name["t"].partitions[0].elr
    assert c.register(unclean, incarnation=uuid.UUID(int=501), previous_epoch=-1).error_code == 0
    after = c.image().topics_by_name["t"].partitions[0]
    assert unclean not in after.elr and clean in after.elr
    assert after.leader_epoch == p.leader_epoch  # an ELR-only change does not bump the leader epoch


def test_create_topics_validation_errors() -> None:
    c = ControllerCluster(1)
    c.start_brokers([1, 2])
    assert c.create_topic("ok", 2, 2).error_code == 0
    assert c.create_topic("ok", 1, 1).error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    assert c.create_topic("bad name").error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert c.create_topic("x" * 250).error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert c.create_topic("trailing\n").error_code == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert c.create_topic("o.k").error_code == 0
    assert c.create_topic("o_k").error_code == ErrorCode.INVALID_TOPIC_EXCEPTION  # collides with o.k
    assert c.create_topic("three", 1, 3).error_code == ErrorCode.INVALID_REPLICATION_FACTOR
    assert c.create_topic("zero", 0, 1).error_code == ErrorCode.INVALID_PARTITIONS
    assert (
        c.create_topic("cfg", 1, 1, configs={"min.insync.replicas": "0"}).error_code
        == ErrorCode.INVALID_CONFIG
    )
    assert c.create_topic("cfg", 1, 1, configs={"no.such.key": "1"}).error_code == ErrorCode.INVALID_CONFIG
    assert c.create_topic("__cluster_metadata").error_code == ErrorCode.INVALID_REQUEST
    assert c.create_topic("man", assignments={0: [1, 1]}).error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    assert (
        c.create_topic("man", assignments={0: [1], 2: [2]}).error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    )
    assert c.create_topic("man", assignments={0: [9]}).error_code == ErrorCode.INVALID_REPLICA_ASSIGNMENT
    made = c.create_topic("man", assignments={0: [2, 1], 1: [1, 2]})
    assert made.error_code == 0
    parts = c.image().topics_by_name["man"].partitions
    assert parts[0].replicas == (2, 1) and parts[0].leader == 2
    assert set(c.image().topics_by_name) == {"ok", "o.k", "man"}


def test_create_topics_validate_only_writes_nothing_and_names_the_topic_id_from_v7() -> None:
    c = ControllerCluster(1)
    c.start_brokers([1])
    before = c.image().provenance.last_offset
    from kraft.protocol.messages import create_topics

    cls = create_topics.REQUEST.cls
    r = c.call(
        create_topics,
        7,
        topics=[cls.CreatableTopic(name="v", num_partitions=3, replication_factor=1)],
        validate_only=True,
    )
    assert r.topics[0].error_code == 0 and r.topics[0].num_partitions == 3
    assert "v" not in c.image().topics_by_name and c.image().provenance.last_offset == before
    made = c.create_topic("v", 1, 1)
    assert made.topic_id == c.image().topics_by_name["v"].id


def test_the_oldest_served_versions_create_describe_and_delete() -> None:
    # CreateTopics v0, DescribeConfigs v0 and DeleteTopics v0 (older clients), through the codec.
    c = ControllerCluster(1)
    c.start_brokers([1, 2])
    made = c.create_topic("old", 2, 2, configs={"retention.ms": "5"}, version=0)
    assert made.error_code == 0 and made.name == "old"
    assert len(c.image().topics_by_name["old"].partitions) == 2
    assert c.create_topic("old", 1, 1, version=0).error_code == ErrorCode.TOPIC_ALREADY_EXISTS
    cls = describe_configs.REQUEST.cls
    r = c.call(
        describe_configs,
        0,
        resources=[
            cls.DescribeConfigsResource(resource_type=TOPIC, resource_name="old", configuration_keys=None)
        ],
    )
    rows = {x.name: x for x in r.results[0].configs}
    assert (rows["retention.ms"].value, rows["retention.ms"].is_default) == ("5", False)
    assert rows["cleanup.policy"].is_default is True
    gone = c.call(delete_topics, 0, topic_names=["old"], timeout_ms=1000).responses[0]
    assert (gone.name, gone.error_code) == ("old", 0)
    assert "old" not in c.image().topics_by_name


def test_placement_is_rack_aware_and_uses_only_active_brokers() -> None:
    c = ControllerCluster(1)
    for b, rack in ((1, "a"), (2, "a"), (3, "b"), (4, "b")):
        c.register(b, rack=rack)
    epochs = {b: c.image().brokers[b].epoch for b in (1, 2, 3, 4)}
    for b in (1, 2, 3):
        c.heartbeat(b, epochs[b])  # 4 stays fenced
    c.create_topic("r", 6, 2)
    img = c.image()
    for p in img.topics_by_name["r"].partitions.values():
        assert 4 not in p.replicas
        racks = {img.brokers[r].rack for r in p.replicas}
        assert len(racks) == 2, p.replicas


def test_create_partitions_and_delete_topics() -> None:
    c = ControllerCluster(1)
    c.start_brokers([1, 2])
    c.create_topic("t", 2, 2)
    cls = create_partitions.REQUEST.cls
    r = c.call(
        create_partitions,
        3,
        topics=[cls.CreatePartitionsTopic(name="t", count=4, assignments=None)],
        timeout_ms=1000,
        validate_only=False,
    )
    assert r.results[0].error_code == 0
    assert len(c.image().topics_by_name["t"].partitions) == 4
    r = c.call(
        create_partitions,
        3,
        topics=[cls.CreatePartitionsTopic(name="t", count=3, assignments=None)],
        timeout_ms=1000,
        validate_only=False,
    )
    assert r.results[0].error_code == ErrorCode.INVALID_PARTITIONS
    assert c.delete_topic("nope").error_code == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    topic_id = c.image().topics_by_name["t"].id
    dcls = delete_topics.REQUEST.cls
    by_id = c.call(
        delete_topics, 6, topics=[dcls.DeleteTopicState(name=None, topic_id=topic_id)], timeout_ms=1000
    )
    assert by_id.responses[0].error_code == 0 and by_id.responses[0].name == "t"
    assert "t" not in c.image().topics_by_name
    unknown = c.call(
        delete_topics, 6, topics=[dcls.DeleteTopicState(name=None, topic_id=topic_id)], timeout_ms=1
    )
    assert unknown.responses[0].error_code == ErrorCode.UNKNOWN_TOPIC_ID


def test_alter_partition_checks_in_kafkas_order() -> None:
    c = ControllerCluster(1)
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 1, 3, assignments=None)
    t = c.image().topics_by_name["t"]
    p = t.partitions[0]
    leader, follower = p.leader, next(b for b in p.replicas if b != p.leader)

    def ap(sender: int, isr: list[int], **kw: int) -> int:
        args = {"leader_epoch": p.leader_epoch, "partition_epoch": p.partition_epoch, **kw}
        r = c.alter_partition(sender, epochs[sender], t.id, 0, isr, **args)
        if r.error_code:
            return int(r.error_code)
        return int(r.topics[0].partitions[0].error_code)

    assert (
        c.alter_partition(
            leader, epochs[leader] + 1, t.id, 0, [leader], leader_epoch=0, partition_epoch=0
        ).error_code
        == ErrorCode.STALE_BROKER_EPOCH
    )
    assert ap(leader, [leader], leader_epoch=p.leader_epoch + 1) == ErrorCode.NOT_CONTROLLER
    assert ap(follower, [follower]) == ErrorCode.INVALID_REQUEST
    assert ap(leader, [follower]) == ErrorCode.INVALID_REQUEST  # ISR without the leader
    assert ap(leader, [leader, 9]) == ErrorCode.INVALID_REQUEST  # not a replica
    assert ap(leader, [leader, leader]) == ErrorCode.INVALID_REQUEST
    assert ap(leader, [leader]) == 0
    # the old partition epoch is now stale
    assert ap(leader, [leader, follower]) == ErrorCode.INVALID_UPDATE_VERSION
    # a fenced broker cannot join the ISR
    c.heartbeat(follower, epochs[follower], want_fence=True)
    p = c.image().topics_by_name["t"].partitions[0]
    assert ap(leader, [leader, follower]) == ErrorCode.INELIGIBLE_REPLICA


def test_preferred_leader_election() -> None:
    c = ControllerCluster(1)
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 1, 3)
    p = c.image().topics_by_name["t"].partitions[0]
    preferred = p.replicas[0]
    # move leadership away, then bring the preferred leader back
    c.heartbeat(preferred, epochs[preferred], want_fence=True)
    assert c.image().topics_by_name["t"].partitions[0].leader != preferred
    assert (
        c.elect(0, "t", [0]).replica_election_results[0].partition_result[0].error_code
        == ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
    )
    c.register(preferred, incarnation=uuid.UUID(int=700), previous_epoch=epochs[preferred])
    new_epoch = c.image().brokers[preferred].epoch
    c.heartbeat(preferred, new_epoch)
    q = c.image().topics_by_name["t"].partitions[0]
    leader = q.leader
    c.alter_partition(
        leader,
        epochs[leader],
        c.image().topics_by_name["t"].id,
        0,
        sorted(set(q.isr) | {preferred}),
        leader_epoch=q.leader_epoch,
        partition_epoch=q.partition_epoch,
    )
    r = c.elect(0, "t", [0])
    assert r.replica_election_results[0].partition_result[0].error_code == 0
    assert c.image().topics_by_name["t"].partitions[0].leader == preferred
    again = c.elect(0, "t", [0])
    assert again.replica_election_results[0].partition_result[0].error_code == ErrorCode.ELECTION_NOT_NEEDED


def test_min_isr_change_clears_elr_where_the_isr_meets_it_and_bad_values_are_refused() -> None:
    c = ControllerCluster(1)
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 1, 3, configs={"min.insync.replicas": "2"})
    t = c.image().topics_by_name["t"]
    p = t.partitions[0]
    c.alter_partition(
        p.leader,
        epochs[p.leader],
        t.id,
        0,
        [p.leader],
        leader_epoch=p.leader_epoch,
        partition_epoch=p.partition_epoch,
    )
    assert c.image().topics_by_name["t"].partitions[0].elr
    assert c.set_config(TOPIC, "t", "min.insync.replicas", "zero").error_code == ErrorCode.INVALID_CONFIG
    assert (
        c.set_config(TOPIC, "nope", "min.insync.replicas", "1").error_code
        == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    )
    assert c.set_config(TOPIC, "t", "min.insync.replicas", "1").error_code == 0
    after = c.image().topics_by_name["t"].partitions[0]
    assert after.elr == () and after.last_known_elr == ()
    # Spec 5.3 rule 5 (revised): a PartitionChangeRecord for this partition, never ClearElrRecord.
    types = committed_record_types(c)
    assert types[-2:] == ["CONFIG", "PARTITION_CHANGE"] and "CLEAR_ELR" not in types
    assert c.set_config(TOPIC, "t", "cleanup.policy", "compact", op=2).error_code == 0
    assert c.image().configs[(TOPIC, "t")]["cleanup.policy"] == "delete,compact"
    assert c.set_config(TOPIC, "t", "retention.ms", "1", op=2).error_code == ErrorCode.INVALID_CONFIG


def test_describe_configs_reports_sources() -> None:
    c = ControllerCluster(
        1, config=ControllerConfig(max_idle_interval_ms=0, static_configs={"min.insync.replicas": "2"})
    )
    c.start_brokers([1])
    c.create_topic("t", 1, 1, configs={"retention.ms": "1000"})
    cls = describe_configs.REQUEST.cls
    r = c.call(
        describe_configs,
        4,
        resources=[
            cls.DescribeConfigsResource(resource_type=TOPIC, resource_name="t", configuration_keys=None)
        ],
        include_synonyms=False,
    )
    rows = {x.name: x for x in r.results[0].configs}
    assert rows["retention.ms"].value == "1000" and rows["retention.ms"].config_source == 1
    assert rows["min.insync.replicas"].value == "2" and rows["min.insync.replicas"].config_source == 4
    assert rows["cleanup.policy"].config_source == 5
    # An empty key list means every key, as null does (Kafka).
    every = c.call(
        describe_configs,
        4,
        resources=[
            cls.DescribeConfigsResource(resource_type=TOPIC, resource_name="t", configuration_keys=[])
        ],
        include_synonyms=False,
    )
    assert {x.name for x in every.results[0].configs} == set(rows)


def test_update_features_rules() -> None:
    c = ControllerCluster(1)
    c.start_brokers([1])
    cls = update_features.REQUEST.cls

    def update(name: str, level: int, kind: int) -> object:
        return c.call(
            update_features,
            1,
            timeout_ms=1000,
            validate_only=False,
            feature_updates=[cls.FeatureUpdateKey(feature=name, max_version_level=level, upgrade_type=kind)],
        )

    assert update("eligible.leader.replicas.version", 0, 1).error_code == ErrorCode.INVALID_UPDATE_VERSION
    assert update("eligible.leader.replicas.version", 0, 2).error_code == 0
    assert "eligible.leader.replicas.version" not in c.image().features
    assert update("eligible.leader.replicas.version", 1, 1).error_code == 0
    assert update("no.such.feature", 1, 1).error_code == ErrorCode.INVALID_UPDATE_VERSION
    assert update("metadata.version", 20, 3).error_code == ErrorCode.INVALID_UPDATE_VERSION
    assert update("eligible.leader.replicas.version", 2, 1).error_code == ErrorCode.INVALID_UPDATE_VERSION


def test_standby_controllers_answer_not_controller() -> None:
    c = ControllerCluster(3)
    active = c.wait_active()
    standby = next(n for n in c.nodes if n != active.node_id)
    r = c.call(
        broker_registration,
        4,
        to=standby,
        broker_id=1,
        cluster_id=CLUSTER_ID,
        incarnation_id=uuid.UUID(int=3),
        listeners=[],
        features=[],
        rack=None,
        log_dirs=[uuid.UUID(int=88)],
    )
    assert r.error_code == ErrorCode.NOT_CONTROLLER


@pytest.mark.parametrize("verify", [True, False], ids=["replay-own-batches", "adopt-own-batches"])
def test_failover_keeps_every_topic_and_the_new_active_controller_serves_at_once(verify: bool) -> None:
    c = ControllerCluster(3, config=ControllerConfig(max_idle_interval_ms=0, verify_leader_replay=verify))
    epochs = c.start_brokers([1, 2, 3])
    for i in range(5):
        assert c.create_topic(f"t{i}", 2, 3).error_code == 0
    old = c.wait_active()
    before = old.image
    c.crash(old.node_id)
    c.run_until(lambda: c.active() is not None)
    new = c.wait_active()
    assert new.node_id != old.node_id
    assert image_equal(new.image, before)
    for b, e in epochs.items():
        c.heartbeat(b, e)
    assert c.create_topic("after", 1, 3).error_code == 0
    # every controller (the restarted one too) converges on the same committed image
    c.restart(old.node_id)
    c.run_until(
        lambda: all(
            n.controller.image.provenance.last_offset == new.image.provenance.last_offset
            for n in c.nodes.values()
        )
    )
    for n in c.nodes.values():
        assert image_equal(n.controller.image, new.image)


def test_pending_requests_get_not_controller_when_leadership_is_lost() -> None:
    c = ControllerCluster(3)
    c.start_brokers([1])
    active = c.wait_active()
    others = [n for n in c.nodes if n != active.node_id]
    from kraft.protocol.messages import create_topics

    cls = create_topics.REQUEST.cls
    lost = c.request(
        create_topics, 7, topics=[cls.CreatableTopic(name="lost", num_partitions=1, replication_factor=1)]
    )
    # cut the active controller off the other controllers so its write cannot commit
    c.world.network.isolate(active.node_id, others)
    assert c.answer(lost, timeout_ms=20_000).topics[0].error_code == ErrorCode.NOT_CONTROLLER
    assert "lost" not in active.image.topics_by_name


class _Recorder:
    def __init__(self) -> None:
        self.batches: list[object] = []

    def handle_commit(self, batch: object) -> None:
        self.batches.append(batch)

    def handle_load_snapshot(self, reader: object) -> None:
        raise AssertionError("the recorder never falls behind")

    def handle_leader_change(self, leader: object) -> None:
        pass


def test_snapshot_then_restart_gives_the_same_image_as_replaying_the_whole_log() -> None:
    c = ControllerCluster(1)
    recorder = _Recorder()
    c.nodes[1].raft.register(recorder)
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("a", 3, 3)
    ctl = c.wait_active()
    snap = ctl.write_snapshot(c.now_ms)
    assert snap is not None
    c.create_topic("b", 2, 2)
    c.heartbeat(1, epochs[1], want_fence=True)
    c.run_for(100)
    full = MetadataLoader()
    for batch in recorder.batches:
        if batch.is_control:  # type: ignore[attr-defined]
            full.handle_control_batch(batch.last_offset, batch.epoch, 0)  # type: ignore[attr-defined]
        else:
            full.handle_batch(batch.base_offset, batch.epoch, 0, batch.records)  # type: ignore[attr-defined]
    assert c.log(1).start_offset() > 0  # the snapshot let the log drop its head
    expected = c.wait_active().image
    assert image_equal(full.image, expected)
    c.crash(1)
    c.restart(1)
    restarted = c.wait_active()
    assert image_equal(restarted.image, expected, ignore_registration_offsets=True)


@pytest.mark.parametrize("record_type", [MetadataRecordType.NO_OP])
def test_noop_records_are_written_while_idle(record_type: MetadataRecordType) -> None:
    c = ControllerCluster(1, config=ControllerConfig(max_idle_interval_ms=100))
    c.wait_active()
    c.run_for(1000)
    assert committed_record_types(c).count(record_type.name) >= 5


def test_a_broker_resource_knows_topic_keys_only_by_their_broker_names() -> None:
    c = ControllerCluster(1)
    c.start_brokers([1])
    refused = c.set_config(BROKER, "", "retention.ms", "1000")
    assert refused.error_code == ErrorCode.INVALID_CONFIG
    assert c.set_config(BROKER, "", "log.retention.ms", "1000").error_code == 0
    cls = describe_configs.REQUEST.cls
    r = c.call(
        describe_configs,
        4,
        resources=[
            cls.DescribeConfigsResource(resource_type=BROKER, resource_name="1", configuration_keys=None)
        ],
        include_synonyms=False,
    )
    names = {x.name for x in r.results[0].configs}
    assert {"log.retention.ms", "min.insync.replicas", "compression.type"} <= names
    assert not names & {"retention.ms", "cleanup.policy", "segment.bytes"}
