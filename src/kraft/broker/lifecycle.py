"""The broker's lifecycle against the active controller (Kafka's ``BrokerLifecycleManager``), sans-IO.

Owns registration, heartbeats and controlled shutdown of one broker incarnation. It never touches
a socket or a clock: the node calls ``poll(now_ms, controller_id, metadata_offset)``, which returns
the request to send (at most one is in flight, as in Kafka), and feeds the answer back with
``handle_response`` (a ``None`` body: the request failed or timed out in the network shell).

States (Kafka's ``BrokerState``; the numbers are its metric values)::

    STARTING --caught up--> RECOVERY --unfenced--> RUNNING --begin_controlled_shutdown-->
    PENDING_CONTROLLED_SHUTDOWN --ShouldShutDown--> SHUTTING_DOWN

* STARTING: register (BrokerRegistration: a new IncarnationId per process, PreviousBrokerEpoch from
  the last clean shutdown, spec 2.2), retrying every heartbeat interval on any error (e.g.
  DUPLICATE_BROKER_REGISTRATION while the previous incarnation's session lives). Registered, it
  heartbeats with WantFence=true until the controller says IsCaughtUp (the reported
  CurrentMetadataOffset reached the registration record).
* RECOVERY: heartbeats with WantFence=false once ``ready_to_unfence`` (the node sets it when its
  image has caught up; a broker without partition data has nothing else to recover) until
  IsFenced=false.
* Every heartbeat carries, in kraft's tagged field 10000, the log info of the hosted partitions that
  wait leaderless with nobody eligible (``poll``'s ``replica_log_info``; usually none, and then the
  bytes are Kafka's), for the controller's unclean recovery (``kraft.controller.unclean_recovery``).
* RUNNING: a heartbeat every ``broker.heartbeat.interval.ms``. A session the controller expired
  (IsFenced=true while RUNNING: we were silent too long) heals by itself: the next heartbeats carry
  the same epoch and the controller unfences us once we are caught up. Kafka does exactly this.
* Registration lost (STALE_BROKER_EPOCH: the controller no longer has our epoch, e.g. after an
  UnregisterBroker, or the node sees its registration gone from the image): register again with the
  same incarnation (Kafka's ``resendBrokerRegistration``).
* PENDING_CONTROLLED_SHUTDOWN: heartbeats with WantShutDown=true (the first one at once, the next
  50 ms later, then every ``SHUTDOWN_RECHECK_MS``) until ShouldShutDown (the controller moved our
  leaderships away and every other active broker reported, in a heartbeat, that it replayed that).
  A broker that never got to RUNNING shuts down at once. The caller bounds the wait.
* A peer's controlled shutdown: while another broker of the image is in controlled shutdown, a
  broker that applied new metadata heartbeats within ``PEER_SHUTDOWN_REPORT_MS``
  (``request_report``/``early_report_ms``) instead of at its interval, so the controller learns
  soon that it replayed the moved leaderships. Kafka waits for the interval on both sides: a clean
  stop of a broker with 3,000 partitions waited 3 s for ShouldShutDown, most of it heartbeats.

``registration_timed_out`` turns true when no registration succeeded within
``initial.broker.registration.timeout.ms``; the node then stops (Kafka shuts the broker down).
"""

from __future__ import annotations

import enum
import itertools
import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kraft.metadata.replica_log_info import ReplicaLogInfo, to_heartbeat
from kraft.protocol.envelope import ApiRequest, ApiResponse, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import broker_heartbeat, broker_registration

log = logging.getLogger("kraft.broker.lifecycle")

# BrokerRegistration v4 and BrokerHeartbeat v1: what this broker asks for; the network shell sends
# the highest version both sides speak.
REGISTRATION_VERSION = 4
HEARTBEAT_VERSION = 1
# Kafka: after an IsCaughtUp=false answer in STARTING, ask again 10 ms later (start-up is quicker);
# the first answer to a controlled-shutdown heartbeat brings the next one 50 ms later.
STARTING_RECHECK_MS = 10
FIRST_SHUTDOWN_RECHECK_MS = 50
# kraft's: later re-checks of a controlled shutdown (Kafka: the heartbeat interval, 2 s), and how
# soon a broker reports new metadata while a peer is in controlled shutdown (module docstring).
SHUTDOWN_RECHECK_MS = 200
PEER_SHUTDOWN_REPORT_MS = 100


class BrokerState(enum.IntEnum):
    """Kafka's ``BrokerState`` (the ``kafka.server:type=KafkaServer,name=BrokerState`` values)."""

    NOT_RUNNING = 0
    STARTING = 1
    RECOVERY = 2
    RUNNING = 3
    PENDING_CONTROLLED_SHUTDOWN = 6
    SHUTTING_DOWN = 7


@dataclass(frozen=True, slots=True, kw_only=True)
class Listener:
    """An advertised listener, as registered (``SecurityProtocol``: 0 PLAINTEXT, 1 SSL, ...)."""

    name: str
    host: str
    port: int
    security_protocol: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class LifecycleConfig:
    node_id: int
    cluster_id: str
    incarnation_id: uuid.UUID
    listeners: tuple[Listener, ...]
    supported_features: Mapping[str, tuple[int, int]]
    rack: str | None
    log_dirs: tuple[uuid.UUID, ...]
    previous_broker_epoch: int = -1  # from the last clean shutdown; -1 unknown (unclean)
    heartbeat_interval_ms: int = 2000  # broker.heartbeat.interval.ms
    request_timeout_ms: int = 30_000  # a request unanswered this long counts as failed
    registration_timeout_ms: int = 60_000  # initial.broker.registration.timeout.ms
    retry_backoff_ms: int = 100  # after NOT_CONTROLLER, or while no controller is known


class BrokerLifecycle:
    def __init__(
        self, config: LifecycleConfig, *, next_correlation_id: Callable[[], int] | None = None
    ) -> None:
        self.config = config
        self._next_correlation_id = next_correlation_id or itertools.count(1).__next__
        self.state = BrokerState.NOT_RUNNING
        self.broker_epoch = -1
        self.registered = False
        self.ready_to_unfence = False
        # What the last heartbeat answer said (a RUNNING broker may be fenced by session expiry).
        self.is_fenced = True
        self.is_caught_up = False
        self.registration_timed_out = False
        self.registrations = 0  # successful registrations (re-registrations included)
        self._started_ms: int | None = None
        self._next_send_ms = 0
        self._immediate = False  # a send was asked for while one was in flight
        self._in_flight: tuple[int, int, int] | None = None  # (correlation id, api key, deadline)
        self._got_shutdown_answer = False
        self._report_requested = False

    # ------------------------------------------------------------------------------ commands

    def start(self, now_ms: int) -> None:
        self.state = BrokerState.STARTING
        self._started_ms = now_ms
        self._next_send_ms = now_ms
        log.info(
            "broker %d: incarnation %s is STARTING (previous broker epoch %d)",
            self.config.node_id,
            self.config.incarnation_id,
            self.config.previous_broker_epoch,
        )

    def set_ready_to_unfence(self, now_ms: int) -> None:
        if not self.ready_to_unfence:
            self.ready_to_unfence = True
            self._schedule(now_ms, 0)

    def resend_registration(self, now_ms: int) -> None:
        """Register again with the same incarnation: the controller lost our registration."""
        if self.registered and self.state not in (BrokerState.SHUTTING_DOWN, BrokerState.NOT_RUNNING):
            log.warning(
                "broker %d: registration (epoch %d) lost; registering again",
                self.config.node_id,
                self.broker_epoch,
            )
            self.registered = False
            self._schedule(now_ms, 0)

    def begin_controlled_shutdown(self, now_ms: int) -> None:
        if self.state == BrokerState.PENDING_CONTROLLED_SHUTDOWN:
            return
        if self.state == BrokerState.RUNNING:
            log.info("broker %d: beginning controlled shutdown", self.config.node_id)
            self.state = BrokerState.PENDING_CONTROLLED_SHUTDOWN
            self._schedule(now_ms, 0)
        else:
            log.info(
                "broker %d: skipping controlled shutdown in state %s", self.config.node_id, self.state.name
            )
            self.state = BrokerState.SHUTTING_DOWN

    def shut_down(self) -> None:
        self.state = BrokerState.SHUTTING_DOWN

    def request_report(self) -> None:
        """New metadata was applied while a peer is in controlled shutdown: heartbeat soon."""
        self._report_requested = True

    def early_report_ms(self, now_ms: int) -> int | None:
        """Apply a requested report: the next heartbeat within ``PEER_SHUTDOWN_REPORT_MS`` (if it
        was due later); returns when it is due, or None (nothing requested, or a request in flight:
        applied once its answer is in)."""
        if not self._report_requested or self._in_flight is not None:
            return None
        self._report_requested = False
        if self.state != BrokerState.RUNNING or not self.registered:
            return None
        self._next_send_ms = min(self._next_send_ms, now_ms + PEER_SHUTDOWN_REPORT_MS)
        return self._next_send_ms

    @property
    def controlled_shutdown_done(self) -> bool:
        return self.state == BrokerState.SHUTTING_DOWN

    # ------------------------------------------------------------------------------ poll

    def poll(
        self,
        now_ms: int,
        controller_id: int | None,
        metadata_offset: int,
        replica_log_info: Callable[[], Sequence[ReplicaLogInfo]] | None = None,
    ) -> tuple[list[ControllerEnvelope], int | None]:
        """The request due now, if any, and when to poll again (None: nothing scheduled).

        ``replica_log_info`` gives what a heartbeat reports for unclean recovery (the replica
        manager's ``leaderless_log_info``); it is called only when a heartbeat is built.
        """
        if self.state in (BrokerState.NOT_RUNNING, BrokerState.SHUTTING_DOWN):
            return [], None
        if (
            not self.registrations
            and self._started_ms is not None
            and now_ms - self._started_ms >= self.config.registration_timeout_ms
            and not self.registration_timed_out
        ):
            self.registration_timed_out = True
            log.error(
                "broker %d: could not register with the controller quorum in %d ms; shutting down",
                self.config.node_id,
                self.config.registration_timeout_ms,
            )
            self.state = BrokerState.SHUTTING_DOWN
            return [], None
        if self._in_flight is not None:
            if now_ms < self._in_flight[2]:
                return [], self._in_flight[2]
            log.info("broker %d: request to the controller timed out", self.config.node_id)
            self._in_flight = None
            self._schedule(now_ms, self.config.heartbeat_interval_ms)
        if now_ms < self._next_send_ms:
            return [], self._next_send_ms
        if controller_id is None:
            self._next_send_ms = now_ms + self.config.retry_backoff_ms
            return [], self._next_send_ms
        correlation_id = self._next_correlation_id()
        if self.registered:
            logs = replica_log_info() if replica_log_info is not None else ()
            body = self._heartbeat(metadata_offset, logs)
            request = ApiRequest(broker_heartbeat.API, HEARTBEAT_VERSION, body)
        else:
            request = ApiRequest(broker_registration.API, REGISTRATION_VERSION, self._registration())
        deadline = now_ms + self.config.request_timeout_ms
        self._in_flight = (correlation_id, request.api.key, deadline)
        envelope = ControllerEnvelope(self.config.node_id, controller_id, correlation_id, request)
        return [envelope], deadline

    def handle_response(self, envelope: ControllerEnvelope, now_ms: int) -> None:
        """The answer to our request (``body.body is None``: it failed in the network)."""
        body = envelope.body
        if not isinstance(body, ApiResponse) or self._in_flight is None:
            return
        if envelope.correlation_id != self._in_flight[0]:
            return  # an answer to a request we gave up on
        self._in_flight = None
        if self.state in (BrokerState.SHUTTING_DOWN, BrokerState.NOT_RUNNING):
            return
        if body.body is None:
            self._immediate = False  # never retry at once after a failure (Kafka)
            self._schedule(now_ms, self.config.heartbeat_interval_ms)
        elif body.api is broker_registration.API:
            self._on_registration(body.body, now_ms)
        else:
            self._on_heartbeat(body.body, now_ms)

    # ------------------------------------------------------------------------------ internals

    def _schedule(self, now_ms: int, delay_ms: int) -> None:
        if self._in_flight is not None and delay_ms == 0:
            self._immediate = True
            return
        if self._immediate:
            delay_ms, self._immediate = 0, False
        self._next_send_ms = now_ms + delay_ms

    def _registration(self) -> object:
        cls: Any = broker_registration.REQUEST.cls
        c = self.config
        return cls(
            broker_id=c.node_id,
            cluster_id=c.cluster_id,
            incarnation_id=c.incarnation_id,
            listeners=[
                cls.Listener(name=e.name, host=e.host, port=e.port, security_protocol=e.security_protocol)
                for e in c.listeners
            ],
            features=[
                cls.Feature(name=name, min_supported_version=low, max_supported_version=high)
                for name, (low, high) in sorted(c.supported_features.items())
            ],
            rack=c.rack,
            is_migrating_zk_broker=False,
            log_dirs=sorted(c.log_dirs),
            previous_broker_epoch=c.previous_broker_epoch,
        )

    def _heartbeat(self, metadata_offset: int, logs: Sequence[ReplicaLogInfo]) -> object:
        return broker_heartbeat.REQUEST.cls(
            broker_id=self.config.node_id,
            broker_epoch=self.broker_epoch,
            current_metadata_offset=metadata_offset,
            want_fence=not self.ready_to_unfence,
            want_shut_down=self.state == BrokerState.PENDING_CONTROLLED_SHUTDOWN,
            offline_log_dirs=[],
            replica_log_info=to_heartbeat(logs),
        )

    def _on_registration(self, response: object, now_ms: int) -> None:
        code = int(getattr(response, "error_code", ErrorCode.UNKNOWN_SERVER_ERROR))
        if code == ErrorCode.NONE:
            self.broker_epoch = int(getattr(response, "broker_epoch", -1))
            self.registered = True
            self.registrations += 1
            log.info("broker %d: registered with broker epoch %d", self.config.node_id, self.broker_epoch)
            self._schedule(now_ms, 0)  # heartbeat at once
            return
        log.info("broker %d: registration refused: %s", self.config.node_id, _name(code))
        self._immediate = False
        self._schedule(now_ms, self._backoff(code))

    def _on_heartbeat(self, response: object, now_ms: int) -> None:
        code = int(getattr(response, "error_code", ErrorCode.UNKNOWN_SERVER_ERROR))
        interval = self.config.heartbeat_interval_ms
        if code != ErrorCode.NONE:
            if code == ErrorCode.STALE_BROKER_EPOCH and self.state != BrokerState.PENDING_CONTROLLED_SHUTDOWN:
                self.resend_registration(now_ms)
                return
            log.warning("broker %d: heartbeat answered %s", self.config.node_id, _name(code))
            self._immediate = False
            self._schedule(now_ms, self._backoff(code))
            return
        was_fenced = self.is_fenced
        self.is_caught_up = bool(getattr(response, "is_caught_up", False))
        self.is_fenced = bool(getattr(response, "is_fenced", True))
        if self.state == BrokerState.STARTING:
            if self.is_caught_up:
                log.info("broker %d: caught up with the metadata; STARTING -> RECOVERY", self.config.node_id)
                self.state = BrokerState.RECOVERY
            self._schedule(now_ms, STARTING_RECHECK_MS)
        elif self.state == BrokerState.RECOVERY:
            if not self.is_fenced:
                log.info("broker %d: unfenced; RECOVERY -> RUNNING", self.config.node_id)
                self.state = BrokerState.RUNNING
            self._schedule(now_ms, interval)
        elif self.state == BrokerState.RUNNING:
            if self.is_fenced and not was_fenced:
                log.warning(
                    "broker %d: the controller fenced us (session expired); heartbeating to be unfenced",
                    self.config.node_id,
                )
            elif was_fenced and not self.is_fenced:
                log.info("broker %d: unfenced again", self.config.node_id)
            self._schedule(now_ms, interval)
        elif self.state == BrokerState.PENDING_CONTROLLED_SHUTDOWN:
            if getattr(response, "should_shut_down", False):
                log.info("broker %d: the controller approved controlled shutdown", self.config.node_id)
                self.state = BrokerState.SHUTTING_DOWN
                return
            later = min(interval, SHUTDOWN_RECHECK_MS)
            self._schedule(now_ms, later if self._got_shutdown_answer else FIRST_SHUTDOWN_RECHECK_MS)
            self._got_shutdown_answer = True

    def _backoff(self, code: int) -> int:
        if code == ErrorCode.NOT_CONTROLLER:
            return self.config.retry_backoff_ms  # the node hands us the new controller meanwhile
        return self.config.heartbeat_interval_ms


def _name(code: int) -> str:
    try:
        return ErrorCode(code).name
    except ValueError:
        return f"error code {code}"
