"""AllocateProducerIds on the controller (Kafka's ``ProducerIdControlManager``): the pure handler
over an image, then the quorum controller end to end (the answer waits for the record to commit,
blocks never overlap, standbys refuse, a new active controller continues where the old one was)."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from clusters import ControllerCluster

from kraft.controller.producer_ids import PRODUCER_ID_BLOCK_SIZE, allocate_producer_id_block
from kraft.controller.quorum_controller import CONTROLLER_APIS
from kraft.metadata.image import MetadataImage, MetadataLoader
from kraft.metadata.records import (
    ApiMessageAndVersion,
    MetadataRecordType,
    decode_record,
    encode_record,
    make_record,
)
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import allocate_producer_ids
from kraft.protocol.primitives import INT64_MAX
from kraft.records.batch import iter_batches

T = MetadataRecordType
REQUEST: Any = allocate_producer_ids.REQUEST.cls


def image_with(*records: ApiMessageAndVersion) -> MetadataImage:
    loader = MetadataLoader()
    loader.handle_batch(0, 1, 0, [encode_record(r) for r in records])
    return loader.image


def registered(broker_id: int, epoch: int) -> ApiMessageAndVersion:
    return make_record(
        T.REGISTER_BROKER,
        broker_id=broker_id,
        broker_epoch=epoch,
        incarnation_id=uuid.UUID(int=broker_id),
        end_points=[],
        features=[],
        rack=None,
        fenced=False,
        in_controlled_shutdown=False,
        log_dirs=[],
    )


def test_controller_listener_serves_allocate_producer_ids() -> None:
    assert CONTROLLER_APIS[67] is allocate_producer_ids.API


def test_first_block_starts_at_zero_and_its_record_names_the_id_after_it() -> None:
    image = image_with(registered(1, 7))
    outcome = allocate_producer_id_block(image, REQUEST(broker_id=1, broker_epoch=7), 0)
    assert outcome.response.error_code == ErrorCode.NONE
    assert (outcome.response.producer_id_start, outcome.response.producer_id_len) == (0, 1000)
    (record,) = outcome.records
    assert record.type == T.PRODUCER_IDS
    data: Any = record.data
    assert (data.broker_id, data.broker_epoch, data.next_producer_id) == (1, 7, PRODUCER_ID_BLOCK_SIZE)


def test_the_next_block_starts_where_the_image_says_the_last_one_ended() -> None:
    image = image_with(
        registered(1, 7), make_record(T.PRODUCER_IDS, broker_id=2, broker_epoch=3, next_producer_id=5000)
    )
    outcome = allocate_producer_id_block(image, REQUEST(broker_id=1, broker_epoch=7), 0)
    assert (outcome.response.producer_id_start, outcome.response.producer_id_len) == (5000, 1000)
    data: Any = outcome.records[0].data
    assert data.next_producer_id == 6000


@pytest.mark.parametrize(
    ("broker_id", "epoch"), [(1, 6), (1, 8), (2, 7)], ids=["older-epoch", "newer-epoch", "unregistered"]
)
def test_a_stale_or_unknown_broker_epoch_is_refused_without_a_record(broker_id: int, epoch: int) -> None:
    image = image_with(registered(1, 7))
    outcome = allocate_producer_id_block(image, REQUEST(broker_id=broker_id, broker_epoch=epoch), 0)
    assert outcome.response.error_code == ErrorCode.STALE_BROKER_EPOCH
    assert outcome.records == ()


def test_an_exhausted_id_space_is_an_unknown_server_error() -> None:
    near_end = INT64_MAX - PRODUCER_ID_BLOCK_SIZE + 1
    image = image_with(
        registered(1, 7), make_record(T.PRODUCER_IDS, broker_id=1, broker_epoch=7, next_producer_id=near_end)
    )
    outcome = allocate_producer_id_block(image, REQUEST(broker_id=1, broker_epoch=7), 0)
    assert outcome.response.error_code == ErrorCode.UNKNOWN_SERVER_ERROR
    assert outcome.records == ()


# -- the quorum controller ---------------------------------------------------------------------------


def allocate(c: ControllerCluster, broker_id: int, epoch: int, to: int | None = None) -> Any:
    return c.call(allocate_producer_ids, 0, to=to, broker_id=broker_id, broker_epoch=epoch)


def committed_producer_ids_records(c: ControllerCluster, node: int) -> list[tuple[int, int, int]]:
    out = []
    for batch in iter_batches(c.log(node).read(0, 1 << 30)):
        if batch.is_control:
            continue
        for r in batch.records:
            record = decode_record(r.value or b"")
            if record.type == T.PRODUCER_IDS:
                data: Any = record.data
                out.append((data.broker_id, data.broker_epoch, data.next_producer_id))
    return out


def test_blocks_are_handed_out_in_order_and_recorded_in_the_metadata_log() -> None:
    c = ControllerCluster(1)
    e1 = c.register(1).broker_epoch
    e2 = c.register(2).broker_epoch
    first = allocate(c, 1, e1)
    second = allocate(c, 2, e2)
    assert (first.error_code, first.producer_id_start, first.producer_id_len) == (0, 0, 1000)
    assert (second.error_code, second.producer_id_start, second.producer_id_len) == (0, 1000, 1000)
    assert c.committed_image().producer_ids == (2, e2, 2000)
    active = c.wait_active().node_id
    assert committed_producer_ids_records(c, active) == [(1, e1, 1000), (2, e2, 2000)]


def test_requests_handled_before_either_commits_get_disjoint_blocks() -> None:
    c = ControllerCluster(3)
    epoch = c.register(1).broker_epoch
    ids = [c.request(allocate_producer_ids, 0, broker_id=1, broker_epoch=epoch) for _ in range(3)]
    starts = sorted(c.answer(i).producer_id_start for i in ids)
    assert starts == [0, 1000, 2000]


def test_a_stale_epoch_is_refused_and_writes_nothing() -> None:
    c = ControllerCluster(1)
    epoch = c.register(1).broker_epoch
    assert allocate(c, 1, epoch + 1).error_code == ErrorCode.STALE_BROKER_EPOCH
    assert allocate(c, 9, 0).error_code == ErrorCode.STALE_BROKER_EPOCH
    assert c.committed_image().producer_ids[2] == 0
    assert committed_producer_ids_records(c, c.wait_active().node_id) == []


def test_a_standby_answers_not_controller() -> None:
    c = ControllerCluster(3)
    epoch = c.register(1).broker_epoch
    active = c.wait_active()
    standby = next(n for n in c.nodes if n != active.node_id)
    assert allocate(c, 1, epoch, to=standby).error_code == ErrorCode.NOT_CONTROLLER


def test_the_block_is_answered_only_once_its_record_commits() -> None:
    c = ControllerCluster(3)
    epoch = c.register(1).broker_epoch
    active = c.wait_active()
    others = [n for n in c.nodes if n != active.node_id]
    pending = c.request(allocate_producer_ids, 0, broker_id=1, broker_epoch=epoch)
    # Cut the active controller off: its record cannot commit, so the block must never be handed out.
    c.world.network.isolate(active.node_id, others)
    answer = c.answer(pending, timeout_ms=20_000)
    assert answer.error_code == ErrorCode.NOT_CONTROLLER
    assert answer.producer_id_len == 0


def test_a_new_active_controller_continues_after_the_last_committed_block() -> None:
    c = ControllerCluster(3)
    epoch = c.register(1).broker_epoch
    assert allocate(c, 1, epoch).producer_id_start == 0
    old = c.wait_active()
    c.crash(old.node_id)
    c.run_until(lambda: c.active() is not None and c.active() is not old)
    c.wait_active()
    after = allocate(c, 1, epoch)
    assert (after.error_code, after.producer_id_start) == (0, 1000)
