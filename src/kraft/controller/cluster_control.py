"""Broker lifecycle: BrokerRegistration, BrokerHeartbeat, session expiry, controlled shutdown and
UnregisterBroker (spec 2; Kafka's ClusterControlManager and BrokerHeartbeatManager).

Handlers are pure functions of (image, heartbeat soft state, request, now, next offset) returning
records and a response. The soft state (``BrokerHeartbeats``: last contact, reported metadata
offsets, controlled-shutdown offsets) belongs to the active controller only and is never replayed:
a new active controller starts every session fresh (spec 2.4).

A session started at activation only delays fencing; it is not evidence that a process lives. So
DUPLICATE_BROKER_REGISTRATION needs a session this controller has *heard* in its term (a
heartbeat or a registration of the current incarnation): a broker killed around a failover is not
heard by the new active controller, and its next incarnation registers at once. Kafka counts the
activation-started session as live, which locked such a broker out for a session timeout after
each failover (29 s after a chain of them in a chaos run). Two live processes with one id are
still refused: the first one heartbeats this controller.

Taking a broker out of every ISR (controlled shutdown, session expiry) is sliced: one controller
step changes at most ``ISR_REMOVAL_SLICE`` partitions, and the controller's timers continue with
the rest. Kafka writes them all at once; in Python, 100,000 partition changes hold the raft thread
for about 4.5 s, longer than the followers' fetch timeout, so every new leader of the quorum would
start the same work and lose its leadership in turn (measured: elections every 4 s, for as long as
the broker asked to shut down). A controlled shutdown answers ShouldShutDown only after the last
slice; a session expiry writes the fencing record with the last slice, so a fenced broker is never
left in an ISR. Up to one slice, the records are those of Kafka's single step.

Heartbeats also carry unclean recovery's log reports (kraft's tagged field 10000), handed to the
``UncleanRecoveryManager``, which is soft state of the active controller too.

Broker states derive from the image: FENCED (registered, fenced), UNFENCED, CONTROLLED_SHUTDOWN
(in_controlled_shutdown), and SHUTDOWN_NOW (an answer, not a state: the broker is fenced by it).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kraft.controller.features import elr_enabled
from kraft.controller.replication_control import ChangeStats, ReplicationControl
from kraft.controller.result import ControllerResult, result
from kraft.controller.unclean_recovery import UncleanRecoveryManager
from kraft.metadata.image import BrokerRegistration, MetadataImage, TopicIdPartition
from kraft.metadata.records import (
    ApiMessageAndVersion,
    MetadataRecordType,
    MetadataVersion,
    make_record,
    record_version,
)
from kraft.metadata.replica_log_info import from_heartbeat
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import broker_heartbeat, broker_registration, unregister_broker

Record = ApiMessageAndVersion
_RESERVED_DIRS = frozenset({uuid.UUID(int=0), uuid.UUID(int=1), uuid.UUID(int=2)})


def _cls(struct_type: Any) -> Any:
    return struct_type.cls


# Partitions one controller step takes a broker out of (about 0.25 s of Python on the leader, see
# the module docstring).
ISR_REMOVAL_SLICE = 5_000


@dataclass(slots=True)
class IsrRemoval:
    """A broker's ISR removals still to write: ``fence`` for a session expiry (the fencing record
    comes with the last slice), else a controlled shutdown."""

    remaining: tuple[TopicIdPartition, ...]
    fence: bool
    # The last offset of the previous slice: the next one waits until it is committed, so a
    # broker's removals go at the pace of replication and never pile up in the log unreplicated.
    after_offset: int = -1


@dataclass(slots=True)
class BrokerHeartbeats:
    """The active controller's soft state about broker sessions.

    ``last_contact_ms`` is the session clock that fencing reads: the last heartbeat, or the
    activation time for a broker not heard since (spec 2.4). ``heard`` holds the brokers whose
    current incarnation this controller heard itself in its term (a heartbeat or a registration);
    only those count as live processes for DUPLICATE_BROKER_REGISTRATION (module docstring).
    Invariant: ``heard`` is cleared on activation and a broker leaves it with ``forget`` (a new
    incarnation), so it never vouches for an incarnation this controller did not hear.
    """

    session_timeout_ms: int
    last_contact_ms: dict[int, int] = field(default_factory=dict)
    reported_offset: dict[int, int] = field(default_factory=dict)
    controlled_shutdown_offset: dict[int, int] = field(default_factory=dict)
    isr_removals: dict[int, IsrRemoval] = field(default_factory=dict)
    heard: set[int] = field(default_factory=set)

    def touch(self, broker_id: int, now_ms: int, metadata_offset: int | None = None) -> None:
        """A heartbeat of the broker's current incarnation: its session is live and heard."""
        self.last_contact_ms[broker_id] = now_ms
        self.heard.add(broker_id)
        if metadata_offset is not None:
            self.reported_offset[broker_id] = metadata_offset

    def heard_registration(self, broker_id: int) -> None:
        """A registration of the broker's current (or new) incarnation reached this controller.
        It does not move the session clock: fencing stays as it was (spec 2.4)."""
        self.heard.add(broker_id)

    def forget(self, broker_id: int) -> None:
        self.last_contact_ms.pop(broker_id, None)
        self.reported_offset.pop(broker_id, None)
        self.controlled_shutdown_offset.pop(broker_id, None)
        self.isr_removals.pop(broker_id, None)
        self.heard.discard(broker_id)

    def has_live_session(self, broker_id: int, now_ms: int) -> bool:
        """Heard by this controller in its term, and within the session timeout (spec 2.1 step 2).
        A session only started at activation does not count: nobody has heard that process."""
        last = self.last_contact_ms.get(broker_id)
        return broker_id in self.heard and last is not None and now_ms - last < self.session_timeout_ms

    def start_sessions(self, image: MetadataImage, now_ms: int) -> None:
        """A new active controller: every unfenced broker's session starts now (spec 2.4), so a
        broker that stays silent is fenced a session timeout later; none is heard yet."""
        self.last_contact_ms.clear()
        self.reported_offset.clear()
        self.controlled_shutdown_offset.clear()
        self.isr_removals.clear()
        self.heard.clear()
        for b in image.brokers.values():
            if not b.fenced:
                self.last_contact_ms[b.id] = now_ms

    def next_expiry_ms(self, image: MetadataImage) -> int | None:
        times = [
            t for b, t in self.last_contact_ms.items() if b in image.brokers and not image.brokers[b].fenced
        ]
        return min(times) + self.session_timeout_ms if times else None

    def expired_broker(self, image: MetadataImage, now_ms: int) -> int | None:
        """The unfenced broker whose session expired longest ago, if any (one per tick, spec 2.4)."""
        best: tuple[int, int] | None = None
        for b in sorted(image.brokers):
            reg = image.brokers[b]
            if reg.fenced:
                continue
            last = self.last_contact_ms.get(b)
            if last is None:
                # Unfenced without a session (e.g. replayed while we were standby): start one now.
                self.last_contact_ms[b] = now_ms
                continue
            if now_ms - last >= self.session_timeout_ms and (best is None or last < best[1]):
                best = (b, last)
        return None if best is None else best[0]


class ClusterControl:
    def __init__(
        self,
        *,
        cluster_id: str,
        node_id: int,
        replication: ReplicationControl,
        heartbeats: BrokerHeartbeats,
        recovery: UncleanRecoveryManager | None = None,
    ) -> None:
        self.cluster_id = cluster_id
        self.node_id = node_id
        self.replication = replication
        self.heartbeats = heartbeats
        # Unclean recovery's reports come in heartbeats (soft state, like the sessions).
        self.recovery = recovery

    # ------------------------------------------------------------------------------ helpers

    @staticmethod
    def is_active_fn(image: MetadataImage, excluding: int | None = None) -> Callable[[int], bool]:
        brokers = image.brokers

        def active(r: int) -> bool:
            b = brokers.get(r)
            return b is not None and r != excluding and b.is_active

        return active

    @staticmethod
    def registration_change(
        image: MetadataImage,
        broker: BrokerRegistration,
        *,
        fenced: int = 0,
        in_controlled_shutdown: int = 0,
        log_dirs: list[uuid.UUID] | None = None,
    ) -> Record:
        mv = image.metadata_version
        if mv < MetadataVersion.IBP_3_3_IV2 and fenced:
            kind = MetadataRecordType.FENCE_BROKER if fenced == 1 else MetadataRecordType.UNFENCE_BROKER
            return make_record(kind, id=broker.id, epoch=broker.epoch)
        if log_dirs is not None:
            version = 2
        elif in_controlled_shutdown:
            version = 1
        else:
            version = 0
        version = min(version, record_version(MetadataRecordType.BROKER_REGISTRATION_CHANGE, mv))
        fields: dict[str, Any] = {"broker_id": broker.id, "broker_epoch": broker.epoch, "fenced": fenced}
        if version >= 1:
            fields["in_controlled_shutdown"] = in_controlled_shutdown
        if version >= 2 and log_dirs is not None:
            fields["log_dirs"] = list(log_dirs)
        return make_record(MetadataRecordType.BROKER_REGISTRATION_CHANGE, version, **fields)

    def fence_records(self, image: MetadataImage, broker_id: int, stats: ChangeStats) -> list[Record]:
        """Spec 2.4 fence path: b out of every ISR, then the fencing record."""
        broker = image.brokers[broker_id]
        records: list[Record] = []
        self.replication.remove_broker_from_isrs(
            image, broker_id, records, stats, is_active=self.is_active_fn(image, excluding=broker_id)
        )
        records.append(self.registration_change(image, broker, fenced=1))
        return records

    # ------------------------------------------------------------------------------ BrokerRegistration

    def register_broker(
        self, image: MetadataImage, request: Any, version: int, now_ms: int, next_offset: int
    ) -> ControllerResult[Any]:
        cls = _cls(broker_registration.RESPONSE)

        def fail(code: ErrorCode) -> ControllerResult[Any]:
            return result([], cls(throttle_time_ms=0, error_code=int(code), broker_epoch=-1))

        if request.cluster_id != self.cluster_id:
            return fail(ErrorCode.INCONSISTENT_CLUSTER_ID)
        broker_id = request.broker_id
        existing = image.brokers.get(broker_id)
        same_incarnation = existing is not None and existing.incarnation_id == request.incarnation_id
        if (
            existing is not None
            and not same_incarnation
            and not existing.fenced
            and not existing.in_controlled_shutdown
            and self.heartbeats.has_live_session(broker_id, now_ms)
        ):
            return fail(ErrorCode.DUPLICATE_BROKER_REGISTRATION)
        if version >= 1 and request.is_migrating_zk_broker:
            return fail(ErrorCode.BROKER_ID_NOT_REGISTERED)
        mv = image.metadata_version
        log_dirs = list(request.log_dirs) if version >= 2 else []
        if mv >= MetadataVersion.IBP_3_7_IV2:
            if (
                not log_dirs
                or len(set(log_dirs)) != len(log_dirs)
                or any(d in _RESERVED_DIRS for d in log_dirs)
            ):
                return fail(ErrorCode.INVALID_REGISTRATION)
            for other in image.brokers.values():
                if other.id != broker_id and any(d in other.directories for d in log_dirs):
                    return fail(ErrorCode.INVALID_REGISTRATION)
        ranges = {f.name: (f.min_supported_version, f.max_supported_version) for f in request.features}
        for name, level in image.features.items():
            if level == 0:
                continue
            low, high = ranges.get(name, (1, 1) if name == "metadata.version" else (0, 0))
            if not low <= level <= high:
                return fail(ErrorCode.UNSUPPORTED_VERSION)

        records: list[Record] = []
        stats = ChangeStats()
        self.heartbeats.isr_removals.pop(broker_id, None)  # a (re)starting broker: nothing to finish
        if same_incarnation and existing is not None:
            self.heartbeats.heard_registration(broker_id)
            epoch = existing.epoch
            fenced = existing.fenced
            in_cs = False  # [4.0+] a starting broker clears InControlledShutdown
        else:
            if existing is not None:
                self.heartbeats.forget(broker_id)
                if self.recovery is not None:
                    self.recovery.forget(broker_id)
                clean = version >= 3 and request.previous_broker_epoch == existing.epoch
                active = self.is_active_fn(image, excluding=broker_id)
                if elr_enabled(image) and not clean:
                    self.replication.handle_unclean_reregistration(
                        image, broker_id, records, stats, is_active=active
                    )
                else:
                    self.replication.remove_broker_from_isrs(
                        image, broker_id, records, stats, is_active=active
                    )
            self.heartbeats.heard_registration(broker_id)
            epoch = next_offset + len(records)
            fenced = True
            in_cs = False
        rv = record_version(MetadataRecordType.REGISTER_BROKER, mv)
        fields: dict[str, Any] = {
            "broker_id": broker_id,
            "incarnation_id": request.incarnation_id,
            "broker_epoch": epoch,
            "end_points": [
                {"name": li.name, "host": li.host, "port": li.port, "security_protocol": li.security_protocol}
                for li in request.listeners
            ],
            "features": [
                {
                    "name": f.name,
                    "min_supported_version": f.min_supported_version,
                    "max_supported_version": f.max_supported_version,
                }
                for f in request.features
            ],
            "rack": request.rack,
            "fenced": fenced,
        }
        record = make_record(MetadataRecordType.REGISTER_BROKER, rv, **_structured(fields))
        if rv >= 1:
            record.data.in_controlled_shutdown = in_cs
        if rv >= 2:
            record.data.is_migrating_zk_broker = False
        if rv >= 3:
            record.data.log_dirs = log_dirs
        records.append(record)
        return result(records, cls(throttle_time_ms=0, error_code=0, broker_epoch=epoch), stats.as_dict())

    # ------------------------------------------------------------------------------ BrokerHeartbeat

    def heartbeat(
        self, image: MetadataImage, request: Any, version: int, now_ms: int, next_offset: int
    ) -> ControllerResult[Any]:
        """Spec 2.3's table. The response reflects the state after the records commit."""
        cls = _cls(broker_heartbeat.RESPONSE)
        broker = image.brokers.get(request.broker_id)
        if broker is None or broker.epoch != request.broker_epoch:
            return result(
                [],
                cls(
                    throttle_time_ms=0,
                    error_code=int(ErrorCode.STALE_BROKER_EPOCH),
                    is_caught_up=False,
                    is_fenced=True,
                    should_shut_down=False,
                ),
            )
        b = broker.id
        offset = request.current_metadata_offset
        self.heartbeats.touch(b, now_ms, offset)
        if self.recovery is not None:
            # kraft's tagged field: what the broker's logs hold of partitions nobody can lead.
            self.recovery.record(b, broker.epoch, from_heartbeat(request))
        pending = self.heartbeats.isr_removals.get(b)
        if pending is not None and pending.fence:
            del self.heartbeats.isr_removals[b]  # its session is alive again: no fencing to finish
        caught_up = offset >= broker.registration_offset
        records: list[Record] = []
        stats = ChangeStats()
        if broker.fenced:
            if request.want_shut_down:
                next_state = "SHUTDOWN_NOW"
                # Already fenced: nothing to move (Kafka's fence path is idempotent here).
            elif not request.want_fence and caught_up:
                next_state = "UNFENCED"
                records.append(self.registration_change(image, broker, fenced=-1))
                self.replication.elect_for_unfenced_broker(
                    image, b, records, stats, is_active=self.is_active_fn(image)
                )
            else:
                next_state = "FENCED"
        elif not broker.in_controlled_shutdown:
            if request.want_fence:
                next_state = "SHUTDOWN_NOW" if request.want_shut_down else "FENCED"
                records = self.fence_records(image, b, stats)
            elif request.want_shut_down:
                if image.partitions_led_by(b):
                    next_state = "CONTROLLED_SHUTDOWN"
                    records.append(self.registration_change(image, broker, in_controlled_shutdown=1))
                    self._remove_from_isrs(image, b, records, stats, fence=False)
                    self.heartbeats.controlled_shutdown_offset[b] = next_offset + len(records) - 1
                    if b in self.heartbeats.isr_removals:
                        self.heartbeats.isr_removals[b].after_offset = next_offset + len(records) - 1
                else:
                    next_state = "SHUTDOWN_NOW"
                    records = self.fence_records(image, b, stats)
            else:
                next_state = "UNFENCED"
        elif b in self.heartbeats.isr_removals or image.partitions_led_by(b):
            # Slices still to write (a controller that became active in the middle of a sliced
            # shutdown finds leaderships left, and picks the work up on its timers).
            next_state = "CONTROLLED_SHUTDOWN"
            if b not in self.heartbeats.isr_removals:
                self.heartbeats.isr_removals[b] = IsrRemoval(image.partitions_with_isr_member(b), fence=False)
        else:
            cs_offset = self.heartbeats.controlled_shutdown_offset.get(b, image.provenance.last_offset)
            lagging = any(
                self.heartbeats.reported_offset.get(other.id, -1) < cs_offset
                for other in image.brokers.values()
                if other.is_active and other.id != b
            )
            if lagging:
                next_state = "CONTROLLED_SHUTDOWN"
            else:
                next_state = "SHUTDOWN_NOW"
                records = self.fence_records(image, b, stats)
        return result(
            records,
            cls(
                throttle_time_ms=0,
                error_code=0,
                is_caught_up=caught_up,
                is_fenced=next_state in ("FENCED", "SHUTDOWN_NOW"),
                should_shut_down=next_state == "SHUTDOWN_NOW",
            ),
            stats.as_dict(),
        )

    # ------------------------------------------------------------------------------ session expiry

    def maybe_fence_stale_broker(
        self, image: MetadataImage, now_ms: int, committed_offset: int
    ) -> tuple[int, list[Record], ChangeStats] | None:
        b = self.heartbeats.expired_broker(image, now_ms)
        if b is None:
            return None
        pending = self.heartbeats.isr_removals.get(b)
        if pending is not None and pending.fence and pending.after_offset > committed_offset:
            return None  # its previous slice is not committed yet
        stats = ChangeStats()
        records: list[Record] = []
        if self._next_slice(image, b, records, stats, fence=True):
            return b, records, stats  # more slices before the fencing record
        records.append(self.registration_change(image, image.brokers[b], fenced=1))
        self.heartbeats.last_contact_ms.pop(b, None)
        return b, records, stats

    def continue_controlled_shutdown(
        self, image: MetadataImage, committed_offset: int
    ) -> tuple[int, list[Record], ChangeStats] | None:
        """The next slice of a controlled shutdown's ISR removals, if one is pending and the
        previous one is committed."""
        for b, work in list(self.heartbeats.isr_removals.items()):
            if work.fence or work.after_offset > committed_offset:
                continue  # fence: continued by maybe_fence_stale_broker while the session stays expired
            broker = image.brokers.get(b)
            if broker is None or broker.fenced or not broker.in_controlled_shutdown:
                del self.heartbeats.isr_removals[b]
                continue
            stats = ChangeStats()
            records: list[Record] = []
            self._next_slice(image, b, records, stats, fence=False)
            if records:
                return b, records, stats
        return None

    def _next_slice(
        self, image: MetadataImage, b: int, records: list[Record], stats: ChangeStats, *, fence: bool
    ) -> bool:
        """Slices until one writes a record or none remain (a slice of partitions that need no
        change writes nothing); True when more slices remain."""
        while True:
            more = self._remove_from_isrs(image, b, records, stats, fence=fence)
            if records or not more:
                return more

    def _remove_from_isrs(
        self, image: MetadataImage, b: int, records: list[Record], stats: ChangeStats, *, fence: bool
    ) -> bool:
        """Takes ``b`` out of the ISR of the next slice of its partitions (all of them when they fit
        in one slice, in the image's order, as Kafka does); True when more slices remain."""
        work = self.heartbeats.isr_removals.get(b)
        if work is None or work.fence != fence:
            work = IsrRemoval(image.partitions_with_isr_member(b), fence)
        head, rest = work.remaining[:ISR_REMOVAL_SLICE], work.remaining[ISR_REMOVAL_SLICE:]
        self.replication.remove_broker_from_isrs(
            image, b, records, stats, is_active=self.is_active_fn(image, excluding=b), partitions=head
        )
        if rest:
            self.heartbeats.isr_removals[b] = IsrRemoval(rest, fence)
        else:
            self.heartbeats.isr_removals.pop(b, None)
        return bool(rest)

    # ------------------------------------------------------------------------------ UnregisterBroker

    def unregister_broker(self, image: MetadataImage, request: Any, version: int) -> ControllerResult[Any]:
        cls = _cls(unregister_broker.RESPONSE)
        broker = image.brokers.get(request.broker_id)
        if broker is None:
            return result(
                [],
                cls(
                    throttle_time_ms=0,
                    error_code=int(ErrorCode.BROKER_ID_NOT_REGISTERED),
                    error_message=f"Broker ID {request.broker_id} is not currently registered",
                ),
            )
        records: list[Record] = []
        stats = ChangeStats()
        # Spec 5.3 rule 7 (DECISION): leaving for good is treated like an unclean shutdown, so the
        # broker leaves every ELR too.
        self.replication.handle_unclean_reregistration(
            image, broker.id, records, stats, is_active=self.is_active_fn(image, excluding=broker.id)
        )
        records.append(
            make_record(MetadataRecordType.UNREGISTER_BROKER, broker_id=broker.id, broker_epoch=broker.epoch)
        )
        self.heartbeats.forget(broker.id)
        if self.recovery is not None:
            self.recovery.forget(broker.id)
        return result(records, cls(throttle_time_ms=0, error_code=0, error_message=None), stats.as_dict())


def _structured(fields: dict[str, Any]) -> dict[str, Any]:
    """Turn the nested dicts of RegisterBrokerRecord's arrays into their struct values."""
    from kraft.metadata.records import REGISTER_BROKER_RECORD

    cls: Any = REGISTER_BROKER_RECORD.cls
    out = dict(fields)
    out["end_points"] = [cls.BrokerEndpoint(**e) for e in fields["end_points"]]
    out["features"] = [cls.BrokerFeature(**f) for f in fields["features"]]
    return out
