"""Producer ids for idempotent producers, sans-IO: InitProducerId on a broker listener (Kafka's
``RPCProducerIdManager`` and the non-transactional path of ``TransactionCoordinator.handleInitProducerId``).

What it owns: the block of producer ids this broker hands out (the active controller gives blocks
out with AllocateProducerIds and records each in the metadata log, so no id is handed out twice in
the cluster), the next block once asked for, and the InitProducerId requests waiting for an id.

* **InitProducerId with a null TransactionalId** (an idempotent producer: kafka-python 3 and the
  Java client by default, librdkafka with ``enable.idempotence=true``) is answered with the next id
  of the current block and epoch 0. The ProducerId/ProducerEpoch of v3+ (KIP-360: a producer asking
  for its epoch to be bumped) are ignored, as Kafka ignores them without a transactional id: the
  producer gets a fresh id. One of the two set without the other is INVALID_REQUEST (Kafka's
  ``KafkaApis``).
* **Blocks** are asked for lazily, as Kafka does: the first InitProducerId asks for one; the next
  block is fetched ahead once 90% of the current one is handed out (Kafka's prefetch threshold), so
  a busy broker never waits. One AllocateProducerIds is in flight at a time; NOT_CONTROLLER,
  STALE_BROKER_EPOCH, any other error, a lost connection, a block that overlaps the one in use or
  no answer within the request timeout: asked again after a 50 ms backoff (Kafka's
  ``RETRY_BACKOFF_MS``), to whichever node is then the raft leader.
* **While no id is available** (no block yet, or the current one used up before the next came), a
  request waits in a ``Purgatory`` until a block arrives (answered in arrival order) or its
  deadline, ``max_wait_ms`` on the node's clock, passes. Kafka answers at once instead; waiting
  saves the client a round of retries. Past the deadline the answer is COORDINATOR_LOAD_IN_PROGRESS,
  the code Kafka answers (not REQUEST_TIMED_OUT, which older Java clients treat as fatal): it is
  retriable, and kafka-python 3 and the Java client re-enqueue InitProducerId on any retriable
  error (librdkafka's idempotence state machine asks for a producer id again on a timer).
  ``max_wait_ms`` stays well under the clients' request timeouts (30 s in Java and kafka-python,
  60 s in librdkafka), so the client is still there to read the answer.
* **A TransactionalId** (a transactional producer): this broker runs no transaction coordinator
  and leads no ``__transaction_state`` partition, so it answers what Kafka's coordinator answers for
  a transactional id whose partition it does not own: NOT_COORDINATOR (retriable: the client
  looks its coordinator up again, with FindCoordinator, which no broker serves yet, so a
  transactional producer cannot start, and writes nothing). An empty TransactionalId is
  INVALID_REQUEST, as in Kafka. Transactions are out of scope.

Sans-IO: requests come in through ``handle`` and ``handle_answer``, answers and controller requests
go out through ``drain``; ``poll`` runs the timers and returns when to run again. Nothing here
reads a clock or touches a socket.

Invariants: an id is handed out at most once (ids come from blocks in increasing order, each used
from its first id up, and a block is only taken if it starts at or after the end of the one in
use); a waiting request leaves the purgatory exactly once (answered with an id, or at its deadline).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from kraft.broker.purgatory import Purgatory
from kraft.common.errors import KraftError
from kraft.protocol.envelope import ApiRequest, ApiResponse, ClientEnvelope, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import allocate_producer_ids, init_producer_id
from kraft.protocol.primitives import INT64_MAX

log = logging.getLogger("kraft.broker.producer_ids")

ALLOCATE_PRODUCER_IDS_VERSION: Final = 0
NO_PRODUCER_ID: Final = -1
NO_PRODUCER_EPOCH: Final = -1
# Kafka's RPCProducerIdManager: PID_PREFETCH_THRESHOLD (0.90) and RETRY_BACKOFF_MS.
PREFETCH_PERCENT: Final = 90
RETRY_BACKOFF_MS: Final = 50
DEFAULT_MAX_WAIT_MS: Final = 5_000
_BLOCK: Final = "block"  # the one event waiting requests wait for


@dataclass(frozen=True, slots=True)
class ProducerIdBlock:
    """The ids ``first`` .. ``first + length - 1`` (Kafka's ``ProducerIdsBlock``)."""

    first: int
    length: int

    @property
    def end(self) -> int:
        """The first id after the block."""
        return self.first + self.length

    @property
    def prefetch_at(self) -> int:
        """Once this id is handed out, the next block is asked for."""
        return self.first + self.length * PREFETCH_PERCENT // 100


@dataclass(slots=True, eq=False)
class _Waiting:
    """An InitProducerId waiting for a block."""

    request: ClientEnvelope
    deadline_ms: int


@dataclass(frozen=True, slots=True)
class _InFlight:
    correlation_id: int
    controller_id: int
    deadline_ms: int


class ProducerIdManager:
    """See the module docstring.

    Lifecycle of the blocks: none -> current (asked for by the first request that finds no id) ->
    current + next (prefetched once ``prefetch_at`` is handed out) -> the next becomes current when
    the current is used up. Nothing is asked for while a next block is held or a request is in
    flight.

    Args:
        node_id: this broker.
        next_correlation_id: the broker's one counter for controller requests (shared with the
            lifecycle, the ISR manager and the client APIs, so every answer finds its owner).
        request_timeout_ms: how long an AllocateProducerIds may go unanswered before it is sent again.
        retry_backoff_ms: the pause after a failed AllocateProducerIds.
        max_wait_ms: how long an InitProducerId waits for a block before COORDINATOR_LOAD_IN_PROGRESS.
    """

    def __init__(
        self,
        node_id: int,
        *,
        next_correlation_id: Callable[[], int],
        request_timeout_ms: int = 30_000,
        retry_backoff_ms: int = RETRY_BACKOFF_MS,
        max_wait_ms: int = DEFAULT_MAX_WAIT_MS,
    ) -> None:
        self.node_id = node_id
        self._next_correlation_id = next_correlation_id
        self.request_timeout_ms = request_timeout_ms
        self.retry_backoff_ms = retry_backoff_ms
        self.max_wait_ms = max_wait_ms
        self._current: ProducerIdBlock | None = None
        self._next_id = 0  # the next id of ``_current`` to hand out
        self._prefetched: ProducerIdBlock | None = None
        self._in_flight: _InFlight | None = None
        self._not_before_ms = 0  # no AllocateProducerIds before this (backoff after a failure)
        self._waiting: Purgatory[str, _Waiting] = Purgatory()
        self._outbound: list[ClientEnvelope | ControllerEnvelope] = []
        # Counters (tests, metrics).
        self.requests_sent = 0
        self.blocks_received = 0
        self.ids_handed_out = 0
        self.waits_expired = 0

    # -- state -------------------------------------------------------------------------------------

    @property
    def current_block(self) -> ProducerIdBlock | None:
        return self._current

    @property
    def next_block(self) -> ProducerIdBlock | None:
        return self._prefetched

    @property
    def waiting(self) -> int:
        """InitProducerId requests waiting for a block."""
        return len(self._waiting)

    @property
    def in_flight(self) -> bool:
        return self._in_flight is not None

    def _needs_block(self) -> bool:
        """Whether to ask the controller for a block: nothing prefetched, and requests wait or the
        current block is past its prefetch point (never before the first request: lazily)."""
        if self._prefetched is not None:
            return False
        if len(self._waiting) > 0:
            return True
        return self._current is not None and self._next_id > self._current.prefetch_at

    # -- inputs ------------------------------------------------------------------------------------

    def handle(self, envelope: ClientEnvelope, now_ms: int) -> None:
        """Take an InitProducerId; its answer comes out of ``drain`` (now, or once a block came)."""
        request = envelope.body
        if not isinstance(request, ApiRequest) or request.api is not init_producer_id.API:
            raise KraftError(f"the producer id manager takes InitProducerId requests, not {request!r}")
        body: Any = request.body
        transactional_id = body.transactional_id
        if transactional_id is not None:
            # Kafka: "" is INVALID_REQUEST; any other id belongs to a transaction coordinator, which
            # this broker is not for any transactional id (module docstring).
            code = ErrorCode.INVALID_REQUEST if transactional_id == "" else ErrorCode.NOT_COORDINATOR
            self._answer(envelope, code)
            return
        if request.version >= 3 and (body.producer_id == NO_PRODUCER_ID) != (
            body.producer_epoch == NO_PRODUCER_EPOCH
        ):
            self._answer(envelope, ErrorCode.INVALID_REQUEST)
            return
        # Earlier arrivals first: while any request waits, no id is available anyway.
        producer_id = self._claim() if len(self._waiting) == 0 else None
        if producer_id is not None:
            self._answer(envelope, ErrorCode.NONE, producer_id)
            return
        op = _Waiting(envelope, now_ms + self.max_wait_ms)
        self._waiting.watch(_BLOCK, op, op.deadline_ms)

    def handle_answer(self, envelope: ControllerEnvelope, now_ms: int) -> bool:
        """The controller's answer to our AllocateProducerIds (returns whether it was ours)."""
        answer = envelope.body
        in_flight = self._in_flight
        if (
            not isinstance(answer, ApiResponse)
            or answer.api is not allocate_producer_ids.API
            or in_flight is None
            or envelope.correlation_id != in_flight.correlation_id
        ):
            return False
        self._in_flight = None
        response: Any = answer.body
        if response is None:
            self._failed(now_ms, f"no answer from node {in_flight.controller_id} (the connection was lost)")
        elif response.error_code != ErrorCode.NONE:
            self._failed(now_ms, f"node {in_flight.controller_id} answered {_name(response.error_code)}")
        else:
            block = ProducerIdBlock(response.producer_id_start, response.producer_id_len)
            problem = self._check_block(block)
            if problem is not None:
                self._failed(now_ms, problem)
            else:
                self._take_block(block)
        return True

    # -- outputs -----------------------------------------------------------------------------------

    def poll(self, now_ms: int, broker_epoch: int, controller_id: int | None) -> int | None:
        """Answer waiting requests whose deadline passed, ask for a block when one is needed.

        Args:
            broker_epoch: this broker's epoch (-1 before it registered: nothing is asked for yet,
                the controller would only answer STALE_BROKER_EPOCH).
            controller_id: the raft leader, the active controller (None: unknown).

        Returns:
            When to poll again (None: nothing scheduled).
        """
        for op in self._waiting.expire(now_ms):
            self.waits_expired += 1
            log.info(
                "broker %d: no producer id block within %d ms; InitProducerId answered "
                "COORDINATOR_LOAD_IN_PROGRESS (the client retries)",
                self.node_id,
                self.max_wait_ms,
            )
            self._answer(op.request, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)
        in_flight = self._in_flight
        if in_flight is not None and now_ms >= in_flight.deadline_ms:
            # Kafka's onTimeout: ask again (an answer that still comes is not ours any more).
            self._in_flight = in_flight = None
            log.info(
                "broker %d: AllocateProducerIds unanswered for %d ms", self.node_id, self.request_timeout_ms
            )
        wake: list[int] = []
        if in_flight is not None:
            wake.append(in_flight.deadline_ms)
        elif self._needs_block():
            if now_ms < self._not_before_ms:
                wake.append(self._not_before_ms)
            elif controller_id is None or broker_epoch < 0:
                wake.append(now_ms + self.retry_backoff_ms)  # look again for a leader or an epoch
            else:
                wake.append(self._send(now_ms, broker_epoch, controller_id))
        deadline = self._waiting.next_deadline_ms()
        if deadline is not None:
            wake.append(deadline)
        return min(wake) if wake else None

    def drain(self) -> list[ClientEnvelope | ControllerEnvelope]:
        """Answers to clients and requests to the controller produced since the last drain."""
        out, self._outbound = self._outbound, []
        return out

    # -- internals ---------------------------------------------------------------------------------

    def _claim(self) -> int | None:
        """The next free id (moving to the prefetched block when the current one is used up), or None."""
        current = self._current
        if current is None or self._next_id >= current.end:
            if self._prefetched is None:
                return None
            current = self._current = self._prefetched
            self._prefetched = None
            self._next_id = current.first
        producer_id = self._next_id
        self._next_id += 1
        self.ids_handed_out += 1
        return producer_id

    def _check_block(self, block: ProducerIdBlock) -> str | None:
        """Why ``block`` must not be used (Kafka's ``sanityCheckResponse``), or None."""
        if block.first < 0 or block.length <= 0 or block.first > INT64_MAX - block.length:
            return f"the controller sent an invalid block {block}"
        # Invariant: blocks only move forward; an overlap would hand ids out twice.
        if self._current is not None and block.first < self._current.end:
            return f"the controller sent block {block}, which overlaps the block in use {self._current}"
        return None

    def _take_block(self, block: ProducerIdBlock) -> None:
        self.blocks_received += 1
        current = self._current
        if current is None or self._next_id >= current.end:
            self._current, self._next_id = block, block.first
        else:
            self._prefetched = block
        log.info("broker %d: got producer ids %d..%d", self.node_id, block.first, block.end - 1)
        for op in self._waiting.take(_BLOCK):  # oldest first
            producer_id = self._claim()
            if producer_id is None:
                self._waiting.watch(_BLOCK, op, op.deadline_ms)  # more waiters than ids: next block
            else:
                self._answer(op.request, ErrorCode.NONE, producer_id)

    def _send(self, now_ms: int, broker_epoch: int, controller_id: int) -> int:
        correlation_id = self._next_correlation_id()
        deadline_ms = now_ms + self.request_timeout_ms
        self._in_flight = _InFlight(correlation_id, controller_id, deadline_ms)
        self.requests_sent += 1
        body = allocate_producer_ids.REQUEST.cls(broker_id=self.node_id, broker_epoch=broker_epoch)
        request = ApiRequest(allocate_producer_ids.API, ALLOCATE_PRODUCER_IDS_VERSION, body)
        self._outbound.append(ControllerEnvelope(self.node_id, controller_id, correlation_id, request))
        return deadline_ms

    def _failed(self, now_ms: int, why: str) -> None:
        log.info("broker %d: AllocateProducerIds failed: %s; asking again", self.node_id, why)
        self._not_before_ms = now_ms + self.retry_backoff_ms

    def _answer(self, envelope: ClientEnvelope, code: ErrorCode, producer_id: int = NO_PRODUCER_ID) -> None:
        self._outbound.append(
            envelope.reply(
                init_producer_id.RESPONSE.cls(
                    throttle_time_ms=0,
                    error_code=int(code),
                    producer_id=producer_id,
                    producer_epoch=0 if code == ErrorCode.NONE else NO_PRODUCER_EPOCH,
                )
            )
        )


def _name(code: int) -> str:
    known = ErrorCode.from_wire(code)
    return f"error code {code}" if known is None else known.name
