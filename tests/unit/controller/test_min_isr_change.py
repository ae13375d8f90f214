"""A min.insync.replicas change and the ELR (spec 5.3 rule 5, revised; KIP-966): "if the new min ISR
<= current ISR, the ELR will be removed", per partition.

First the pure rule (``elr_cleared_by_min_isr_change``) as a table and a Hypothesis property, then
``ConfigControl`` over a hand-built image (which partitions get a PartitionChangeRecord for
topic-level, cluster-level, node-level and multi-resource changes; never a ClearElrRecord), then
the quorum controller end to end: a leaderless partition keeps its eligible replicas through the
change and still elects from them.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

import pytest
from clusters import ControllerCluster
from hypothesis import given
from hypothesis import strategies as st

from kraft.controller.config_control import ConfigControl
from kraft.controller.partition_change import elr_cleared_by_min_isr_change
from kraft.controller.replication_control import partition_record
from kraft.metadata.configs import BROKER, TOPIC, ConfigResolver
from kraft.metadata.image import MetadataDelta, MetadataImage, MetadataProvenance
from kraft.metadata.partition import NO_LEADER, NO_LEADER_CHANGE, PartitionChange, PartitionRegistration
from kraft.metadata.records import (
    ApiMessageAndVersion,
    MetadataRecordType,
    decode_record,
    encode_record,
    make_record,
)
from kraft.protocol.messages import incremental_alter_configs

T = MetadataRecordType
TOPIC_ID = uuid.UUID(int=0x7E57)
IAC: Any = incremental_alter_configs.REQUEST.cls
MIN_ISR = "min.insync.replicas"
CONTROLLER_ID = 3000


def part(
    isr: Sequence[int],
    elr: Sequence[int] = (),
    lke: Sequence[int] = (),
    *,
    replicas: Sequence[int] = (0, 1, 2),
    leader: int | None = None,
) -> PartitionRegistration:
    if leader is None:
        leader = isr[0] if isr else NO_LEADER
    return PartitionRegistration(
        replicas=tuple(replicas),
        isr=tuple(isr),
        elr=tuple(elr),
        last_known_elr=tuple(lke),
        leader=leader,
        leader_epoch=7,
        partition_epoch=11,
    )


# ------------------------------------------------------------------------------ the pure rule

CLEARED = "cleared"
KEPT = "kept"

# (name, replicas, ISR, ELR, LKE, old m, new m, outcome). Each start is a state the old m allows
# (checked below), as the controller would hold it.
TABLE: list[tuple[str, tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...], int, int, str]] = [
    ("lowered to |ISR|: ISR now meets min ISR", (0, 1, 2), (0,), (1, 2), (), 2, 1, CLEARED),
    ("lowered below |ISR|", (0, 1, 2, 3), (0, 1), (2,), (), 3, 1, CLEARED),
    ("lowered to |ISR| of two", (0, 1, 2, 3), (0, 1), (2, 3), (), 3, 2, CLEARED),
    ("unchanged value", (0, 1, 2), (0,), (1, 2), (), 2, 2, KEPT),
    ("raised", (0, 1, 2), (0,), (1, 2), (), 2, 3, KEPT),
    ("lowered but the ISR is still below it", (0, 1, 2, 3), (0,), (1, 2, 3), (), 4, 2, KEPT),
    ("leaderless, lowered to 1: ELR and last known leader kept", (0, 1, 2), (), (1, 2), (0,), 2, 1, KEPT),
    ("leaderless, ELR empty, only the last known leader", (0, 1, 2), (), (), (0,), 2, 1, KEPT),
    ("KIP-mode LastKnownElr only, lowered to |ISR|", (0, 1, 2, 3), (0,), (), (3,), 3, 1, CLEARED),
    ("clamped to RF: 5 on RF 2 is m 2 > |ISR| 1", (0, 1), (0,), (1,), (), 2, 5, KEPT),
    ("nothing to clear", (0, 1, 2), (0, 1, 2), (), (), 2, 1, KEPT),
]


@pytest.mark.parametrize(
    ("replicas", "isr", "elr", "lke", "old_m", "new_m", "outcome"),
    [row[1:] for row in TABLE],
    ids=[row[0] for row in TABLE],
)
def test_min_isr_change_table(
    replicas: tuple[int, ...],
    isr: tuple[int, ...],
    elr: tuple[int, ...],
    lke: tuple[int, ...],
    old_m: int,
    new_m: int,
    outcome: str,
) -> None:
    p = part(isr, elr, lke, replicas=replicas)
    # The start satisfies spec 5.1 under the old m: ELR empty whenever |ISR| >= m.
    assert not elr or len(isr) < min(old_m, len(replicas))
    change = elr_cleared_by_min_isr_change(p, topic_id=TOPIC_ID, partition_id=4, min_isr=new_m)
    if outcome == KEPT:
        assert change is None
        return
    assert change == PartitionChange(topic_id=TOPIC_ID, partition_id=4, elr=(), last_known_elr=())
    after = p.merge(change)
    assert (after.elr, after.last_known_elr, after.isr, after.leader) == ((), (), p.isr, p.leader)
    # An ELR-only change: partition epoch + 1, no leader-epoch bump (spec 4.4).
    assert (after.leader_epoch, after.partition_epoch) == (p.leader_epoch, p.partition_epoch + 1)
    assert change.leader == NO_LEADER_CHANGE


@st.composite
def partitions(draw: st.DrawFn) -> tuple[PartitionRegistration, int]:
    """A partition as the controller may hold it under some old m, and a new min ISR value."""
    rf = draw(st.integers(1, 5))
    replicas = tuple(range(rf))
    members = draw(st.permutations(replicas))
    n_isr = draw(st.integers(0, rf))
    isr = tuple(sorted(members[:n_isr]))
    old_m = draw(st.integers(1, rf))
    elr: tuple[int, ...] = ()
    if n_isr < old_m:
        elr = tuple(sorted(draw(st.sets(st.sampled_from(members[n_isr:]) if n_isr < rf else st.nothing()))))
    lke = tuple(draw(st.sets(st.sampled_from(replicas)).map(sorted))) if not isr else ()
    return part(isr, elr, lke, replicas=replicas), draw(st.integers(1, 7))


@given(partitions())
def test_after_a_min_isr_change_elr_is_empty_iff_the_isr_meets_min_isr_or_it_was_empty(
    case: tuple[PartitionRegistration, int],
) -> None:
    p, new_min_isr = case
    m = min(new_min_isr, len(p.replicas))
    change = elr_cleared_by_min_isr_change(p, topic_id=TOPIC_ID, partition_id=0, min_isr=new_min_isr)
    after = p if change is None else p.merge(change)
    if len(p.isr) >= m:
        # Spec 5.1 under the new m.
        assert after.elr == () and after.last_known_elr == ()
    else:
        # Below the new m every eligible replica stays.
        assert (after.elr, after.last_known_elr) == (p.elr, p.last_known_elr)
    assert after.isr == p.isr and after.leader == p.leader and after.leader_epoch == p.leader_epoch
    # No record when nothing changes.
    assert (change is None) == (after == p)


# ------------------------------------------------------------------------------ ConfigControl

FEATURES = {"metadata.version": 25, "eligible.leader.replicas.version": 1}


def build_image(
    topics: dict[str, dict[int, PartitionRegistration]],
    configs: dict[tuple[int, str], dict[str, str]],
    features: dict[str, int] | None = None,
) -> tuple[MetadataImage, dict[str, uuid.UUID]]:
    records: list[ApiMessageAndVersion] = []
    for name, level in (features or FEATURES).items():
        records.append(make_record(T.FEATURE_LEVEL, name=name, feature_level=level))
    ids: dict[str, uuid.UUID] = {}
    for i, (name, parts) in enumerate(topics.items(), 1):
        ids[name] = uuid.UUID(int=0x100 + i)
        records.append(make_record(T.TOPIC, name=name, topic_id=ids[name]))
        for pid, p in parts.items():
            records.append(partition_record(ids[name], pid, p, 25))
    for (rtype, rname), entries in configs.items():
        for key, value in entries.items():
            records.append(
                make_record(T.CONFIG, resource_type=rtype, resource_name=rname, name=key, value=value)
            )
    delta = MetadataDelta(MetadataImage.EMPTY)
    for offset, record in enumerate(records):
        delta.replay(record, offset)
    last = len(records) - 1
    return delta.apply(MetadataProvenance(last_offset=last, last_epoch=1, last_append_ms=0)), ids


def alter(
    image: MetadataImage,
    changes: list[tuple[int, str, str | None]],
    *,
    validate_only: bool = False,
) -> list[ApiMessageAndVersion]:
    """Set (value) or delete (None) min.insync.replicas on each (type, name); the records."""
    request = IAC(
        resources=[
            IAC.AlterConfigsResource(
                resource_type=rtype,
                resource_name=rname,
                configs=[
                    IAC.AlterConfigsResource.AlterableConfig(
                        name=MIN_ISR, config_operation=0 if value is not None else 1, value=value
                    )
                ],
            )
            for rtype, rname, value in changes
        ],
        validate_only=validate_only,
    )
    outcome = ConfigControl(ConfigResolver({}, CONTROLLER_ID)).incremental_alter_configs(image, request, 1)
    assert all(r.error_code == 0 for r in outcome.response.responses), outcome.response
    return list(outcome.records)


def cleared(records: list[ApiMessageAndVersion], ids: dict[str, uuid.UUID]) -> list[tuple[str, int]]:
    """(topic, partition) of each PartitionChangeRecord, which must clear ELR and LKE only."""
    names = {v: k for k, v in ids.items()}
    out = []
    assert all(r.type in (T.CONFIG, T.PARTITION_CHANGE) for r in records), [r.type for r in records]
    for r in records:
        if r.type != T.PARTITION_CHANGE:
            continue
        d = r.data
        assert (d.eligible_leader_replicas, d.last_known_elr, d.isr, d.leader) == ([], [], None, -2)
        out.append((names[d.topic_id], d.partition_id))
    return out


def replay(image: MetadataImage, records: list[ApiMessageAndVersion]) -> MetadataImage:
    delta = MetadataDelta(image)
    start = image.provenance.last_offset + 1
    for i, record in enumerate(records):
        # Through the wire form, as the log carries it.
        delta.replay(decode_record(encode_record(record)), start + i)
    last = start + len(records) - 1
    return delta.apply(MetadataProvenance(last_offset=last, last_epoch=1, last_append_ms=0))


def mixed_topic() -> dict[int, PartitionRegistration]:
    return {
        0: part((0,), (1, 2)),  # led, below m 3 of old
        1: part((), (1, 2), (0,)),  # leaderless: its ELR is all it has
        2: part((0, 1, 2)),  # at min ISR: nothing to clear
        3: part((0, 1), (2,)),
    }


def test_topic_change_clears_only_partitions_whose_isr_meets_the_new_min_isr() -> None:
    image, ids = build_image({"t": mixed_topic()}, {(TOPIC, "t"): {MIN_ISR: "3"}})
    records = alter(image, [(TOPIC, "t", "2")])
    assert records[0].type == T.CONFIG
    assert cleared(records, ids) == [("t", 3)]  # |ISR| 2 >= 2; partition 0 (|ISR| 1) keeps its ELR
    after = replay(image, records)
    t = after.topics_by_name["t"].partitions
    assert (t[0].elr, t[1].elr, t[1].last_known_elr, t[3].elr) == ((1, 2), (1, 2), (0,), ())
    assert after.configs[(TOPIC, "t")][MIN_ISR] == "2"


def test_topic_change_to_one_keeps_the_leaderless_partitions_eligible_replicas() -> None:
    image, ids = build_image({"t": mixed_topic()}, {(TOPIC, "t"): {MIN_ISR: "3"}})
    records = alter(image, [(TOPIC, "t", "1")])
    assert cleared(records, ids) == [("t", 0), ("t", 3)]
    leaderless = replay(image, records).topics_by_name["t"].partitions[1]
    assert (leaderless.isr, leaderless.elr, leaderless.last_known_elr) == ((), (1, 2), (0,))
    assert not any(r.type == T.CLEAR_ELR for r in records)


def test_cluster_default_change_follows_each_topics_effective_min_isr() -> None:
    image, ids = build_image(
        {"plain": {0: part((0,), (1, 2)), 1: part((), (1, 2), (0,))}, "pinned": {0: part((0, 1), (2,))}},
        {(BROKER, ""): {MIN_ISR: "2"}, (TOPIC, "pinned"): {MIN_ISR: "3"}},
    )
    records = alter(image, [(BROKER, "", "1")])
    # "pinned" keeps m 3 through its topic override; "plain"'s leaderless partition keeps its ELR.
    assert cleared(records, ids) == [("plain", 0)]


def test_several_resources_in_one_request_are_judged_on_their_combined_result() -> None:
    image, ids = build_image(
        {"a": {0: part((0,), (1, 2))}, "b": {0: part((0,), (1, 2))}},
        {(BROKER, ""): {MIN_ISR: "2"}},
    )
    # The cluster default drops to 1, but "a" is pinned at 2 in the same request: only "b" clears.
    records = alter(image, [(BROKER, "", "1"), (TOPIC, "a", "2")])
    assert cleared(records, ids) == [("b", 0)]
    assert [r.type for r in records] == [T.CONFIG, T.CONFIG, T.PARTITION_CHANGE]


def test_deleting_a_topic_override_falls_back_to_the_cluster_default() -> None:
    image, ids = build_image(
        {"a": {0: part((0, 1), (2,), replicas=(0, 1, 2))}},
        {(BROKER, ""): {MIN_ISR: "1"}, (TOPIC, "a"): {MIN_ISR: "3"}},
    )
    assert cleared(alter(image, [(TOPIC, "a", None)]), ids) == [("a", 0)]


def test_node_level_changes_count_only_for_this_controllers_own_node() -> None:
    image, ids = build_image({"a": {0: part((0,), (1, 2))}}, {(BROKER, ""): {MIN_ISR: "2"}})
    assert cleared(alter(image, [(BROKER, "7", "1")]), ids) == []
    assert cleared(alter(image, [(BROKER, str(CONTROLLER_ID), "1")]), ids) == [("a", 0)]


def test_validate_only_and_disabled_elr_write_no_partition_change() -> None:
    image, _ = build_image({"a": {0: part((0,), (1, 2))}}, {(TOPIC, "a"): {MIN_ISR: "2"}})
    assert alter(image, [(TOPIC, "a", "1")], validate_only=True) == []
    off, _ = build_image(
        {"a": {0: part((0,), (1, 2))}}, {(TOPIC, "a"): {MIN_ISR: "2"}}, features={"metadata.version": 25}
    )
    assert [r.type for r in alter(off, [(TOPIC, "a", "1")])] == [T.CONFIG]


# ------------------------------------------------------------------------------ end to end


def test_leaderless_partition_keeps_its_elr_through_a_min_isr_change_and_elects_from_it() -> None:
    c = ControllerCluster(1)
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 1, 3, configs={MIN_ISR: "2"})
    t = c.image().topics_by_name["t"]
    leader = t.partitions[0].leader
    order = [b for b in t.partitions[0].replicas if b != leader] + [leader]
    for b in order:  # fence every replica, the leader last: ISR empty, ELR the last two
        assert c.heartbeat(b, epochs[b], want_fence=True).error_code == 0
    before = c.image().topics_by_name["t"].partitions[0]
    assert (before.isr, before.leader) == ((), NO_LEADER)
    assert before.elr == tuple(sorted(order[1:])) and before.last_known_elr == (leader,)

    assert c.set_config(TOPIC, "t", MIN_ISR, "1").error_code == 0
    after = c.image().topics_by_name["t"].partitions[0]
    assert after == before  # m 1 > |ISR| 0: nothing written for the partition

    eligible = order[1]
    assert not c.heartbeat(eligible, epochs[eligible]).is_fenced  # unfenced: elected from the ELR
    elected = c.image().topics_by_name["t"].partitions[0]
    assert (elected.leader, elected.isr) == (eligible, (eligible,))
    assert elected.leader_recovery_state == 0  # a clean election
    types = [decode_record(r).type for r in _committed(c)]
    assert T.CLEAR_ELR not in types


def test_min_isr_change_on_a_led_partition_writes_a_partition_change_not_clear_elr() -> None:
    c = ControllerCluster(1)
    epochs = c.start_brokers([1, 2, 3])
    c.create_topic("t", 1, 3, configs={MIN_ISR: "2"})
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
    shrunk = c.image().topics_by_name["t"].partitions[0]
    assert shrunk.elr
    assert c.set_config(TOPIC, "t", MIN_ISR, "1").error_code == 0
    after = c.image().topics_by_name["t"].partitions[0]
    assert (after.elr, after.last_known_elr, after.isr) == ((), (), shrunk.isr)
    assert (after.leader_epoch, after.partition_epoch) == (shrunk.leader_epoch, shrunk.partition_epoch + 1)
    types = [decode_record(r).type for r in _committed(c)]
    assert types[-2:] == [T.CONFIG, T.PARTITION_CHANGE] and T.CLEAR_ELR not in types


def _committed(c: ControllerCluster) -> list[bytes]:
    from kraft.records.batch import iter_batches

    out: list[bytes] = []
    for batch in iter_batches(c.log(1).read(0, 1 << 30)):
        if not batch.is_control:
            out.extend(r.value or b"" for r in batch.records)
    return out
