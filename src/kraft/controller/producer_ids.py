"""AllocateProducerIds on the active controller (Kafka's ``ProducerIdControlManager``).

Brokers hand out producer ids (InitProducerId) from blocks the controller gives them; a block is
claimed by writing one ``ProducerIdsRecord`` whose ``NextProducerId`` is the first id *after* it,
so the metadata log alone says which ids are taken, and every controller (active or standby, or
one that just loaded a snapshot) knows the next free id from its image
(``MetadataImage.producer_ids``: broker id, broker epoch, next producer id).

Pure, like the other controller managers: records and a response out, nothing mutated; the
caller replays the record into its latest image, so two requests handled before either commits
still get disjoint blocks, and answers once the record commits.

Invariant: blocks never overlap. Each block starts at the image's next producer id and the record
moves it past the block; replay refuses a record that does not move it forward.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from kraft.controller.result import ControllerResult
from kraft.metadata.image import MetadataImage
from kraft.metadata.records import MetadataRecordType, make_record
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import allocate_producer_ids
from kraft.protocol.primitives import INT64_MAX

if TYPE_CHECKING:  # the classes exist at run time as REQUEST.cls and RESPONSE.cls
    from kraft.protocol.messages.allocate_producer_ids import (
        AllocateProducerIdsRequest,
        AllocateProducerIdsResponse,
    )

# Kafka's ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE.
PRODUCER_ID_BLOCK_SIZE: Final = 1000


def allocate_producer_id_block(
    image: MetadataImage, request: AllocateProducerIdsRequest, version: int
) -> ControllerResult[AllocateProducerIdsResponse]:
    """The next block of ``PRODUCER_ID_BLOCK_SIZE`` ids for the asking broker.

    Refusals (no record written): STALE_BROKER_EPOCH when the broker is not registered or names
    another epoch than its registration's (Kafka's ``checkBrokerEpoch`` answers both the same way,
    and its ``RPCProducerIdManager`` retries both); UNKNOWN_SERVER_ERROR when the id space is used up.
    """
    del version  # v0 is the only version
    cls = allocate_producer_ids.RESPONSE.cls
    broker = image.brokers.get(request.broker_id)
    if broker is None or broker.epoch != request.broker_epoch:
        return ControllerResult(
            (),
            cls(
                throttle_time_ms=0,
                error_code=int(ErrorCode.STALE_BROKER_EPOCH),
                producer_id_start=0,
                producer_id_len=0,
            ),
        )
    first = image.producer_ids[2]
    if first > INT64_MAX - PRODUCER_ID_BLOCK_SIZE:
        return ControllerResult(
            (),
            cls(
                throttle_time_ms=0,
                error_code=int(ErrorCode.UNKNOWN_SERVER_ERROR),
                producer_id_start=0,
                producer_id_len=0,
            ),
        )
    record = make_record(
        MetadataRecordType.PRODUCER_IDS,
        broker_id=request.broker_id,
        broker_epoch=request.broker_epoch,
        next_producer_id=first + PRODUCER_ID_BLOCK_SIZE,
    )
    response = cls(
        throttle_time_ms=0,
        error_code=int(ErrorCode.NONE),
        producer_id_start=first,
        producer_id_len=PRODUCER_ID_BLOCK_SIZE,
    )
    return ControllerResult((record,), response)
