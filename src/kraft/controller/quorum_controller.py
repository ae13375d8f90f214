"""The quorum controller: a sans-IO state machine on top of the raft core (Kafka's QuorumController).

Every controller replays committed batches into its committed image (it is a ``RaftListener``).
The active controller (the raft leader, once its listener has caught up to the epoch start) also
owns the write path:

1. a request is queued (``handle``) and handled in order on the next ``poll``: the handler computes
   records and a response from the *latest* image (committed + our uncommitted writes) and
   mutates nothing;
2. the records are replayed into a delta first (a record that does not replay is never written),
   appended through the core as one atomic batch, and the latest image advances at once;
3. the response is released only when the committed offset reaches the batch's last offset;
4. on leadership loss, the latest image reverts to the committed one and every pending request
   is answered NOT_CONTROLLER. Standbys replay continuously, so a new active controller needs no
   reload; heartbeat sessions and unclean recovery's log reports (soft state) start fresh on
   activation (spec 2.4; ``kraft.controller.unclean_recovery``).

With an authorizer (``ControllerConfig.authorizer``), a request from a client connection is first
checked by ``kraft.security.request_authz`` against the committed ACLs (Kafka's ``ControllerApis``):
refused whole, or run without its refused resources, whose rows are merged into the answer.
Requests from this node's own parts (source ids >= 0) are the node's and are not checked.

Nothing here reads a clock, a socket or a file: time comes in as ``now_ms``, randomness from the
injected ``rng``, storage only through the injected raft client.
"""

from __future__ import annotations

import contextlib
import logging
import random
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from kraft.common.errors import FatalError, KraftError, NotLeaderError
from kraft.controller.acl_control import AclControl
from kraft.controller.cluster_control import BrokerHeartbeats, ClusterControl
from kraft.controller.config_control import ConfigControl
from kraft.controller.features import (
    KRAFT_VERSION,
    SUPPORTED_FEATURES,
    FeatureUpdate,
    UpgradeType,
    elr_enabled,
    validate_updates,
)
from kraft.controller.metrics import ControllerMetrics
from kraft.controller.producer_ids import allocate_producer_id_block
from kraft.controller.replication_control import ReplicationControl
from kraft.controller.result import ControllerResult
from kraft.controller.scram_control import alter_credentials as alter_scram
from kraft.controller.unclean_recovery import DEFAULT_TIMEOUT_MS as DEFAULT_RECOVERY_TIMEOUT_MS
from kraft.controller.unclean_recovery import UncleanRecoveryManager, UncleanRecoveryStrategy
from kraft.metadata.configs import ConfigResolver
from kraft.metadata.image import (
    MetadataDelta,
    MetadataImage,
    MetadataLoader,
    MetadataProvenance,
    ReplayError,
    image_differences,
    image_equal,
)
from kraft.metadata.records import (
    ApiMessageAndVersion,
    MetadataRecordType,
    MetadataVersion,
    encode_record,
    make_record,
)
from kraft.metadata.snapshot_scheduler import SnapshotScheduler
from kraft.protocol.api import Api
from kraft.protocol.envelope import ApiRequest, ApiResponse, ControllerEnvelope
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.error_responses import error_response
from kraft.protocol.messages import (
    allocate_producer_ids,
    alter_partition,
    alter_user_scram_credentials,
    broker_heartbeat,
    broker_registration,
    create_acls,
    create_partitions,
    create_topics,
    delete_acls,
    delete_topics,
    describe_acls,
    describe_configs,
    elect_leaders,
    incremental_alter_configs,
    unregister_broker,
    update_features,
)
from kraft.raft.listener import CommittedBatch, SnapshotReader
from kraft.raft.types import LeaderAndEpoch, OffsetAndEpoch
from kraft.security.acl_apis import NO_AUTHORIZER_MESSAGE, acl_api_error, describe_acls_response
from kraft.security.authorizer import AuthorizerConfig
from kraft.security.request_authz import UNKNOWN_HOST, Proceed, RequestAuthorizer

log = logging.getLogger("kraft.controller")

Record = ApiMessageAndVersion

# The APIs the controller serves (spec 6.2, 6.8), by key.
CONTROLLER_APIS: Mapping[int, Api] = {
    m.API.key: m.API
    for m in (
        create_topics,
        delete_topics,
        describe_configs,
        create_partitions,
        elect_leaders,
        incremental_alter_configs,
        alter_partition,
        update_features,
        broker_registration,
        broker_heartbeat,
        unregister_broker,
        allocate_producer_ids,
        alter_user_scram_credentials,
        create_acls,
        delete_acls,
        describe_acls,
    )
}
# Read-only APIs any controller (active or not) answers from its committed image.
READ_ONLY_APIS = frozenset({describe_configs.API.key, describe_acls.API.key})


class RaftClient(Protocol):
    """What the controller needs of the raft core (``kraft.raft.node.RaftNode`` has all of it)."""

    def schedule_append(self, epoch: int, records: Sequence[bytes]) -> int: ...

    def next_append_offset(self) -> int | None: ...

    def create_snapshot(self, snapshot_id: OffsetAndEpoch, last_contained_log_timestamp_ms: int) -> Any: ...

    def resign(self, epoch: int) -> None: ...

    def upgrade_kraft_version(self, version: int, *, validate_only: bool, now_ms: int) -> int | None: ...

    @property
    def kraft_version(self) -> int: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerConfig:
    """The controller's settings (Kafka property names in comments)."""

    session_timeout_ms: int = 9000  # broker.session.timeout.ms
    heartbeat_interval_ms: int = 2000  # broker.heartbeat.interval.ms
    default_replication_factor: int = 1  # default.replication.factor
    num_partitions: int = 1  # num.partitions
    delete_topic_enable: bool = True  # delete.topic.enable
    auto_leader_rebalance_enable: bool = True  # auto.leader.rebalance.enable
    leader_imbalance_check_interval_ms: int = 300_000  # leader.imbalance.check.interval.seconds * 1000
    unclean_election_interval_ms: int = 300_000  # unclean.leader.election.interval.ms
    max_idle_interval_ms: int = 500  # metadata.max.idle.interval.ms (0 disables NoOp records)
    snapshot_max_bytes: int = 20 * 1024 * 1024  # metadata.log.max.record.bytes.between.snapshots
    snapshot_interval_ms: int = 3_600_000  # metadata.log.max.snapshot.interval.ms (0 disables)
    last_known_leader_mode: bool = True  # spec 5.4; False = KIP mode (Kafka tests only)
    # KIP-966 part 2 (kraft.controller.unclean_recovery). kraft's defaults: on, Balanced (the KIP
    # has the manager off); unclean.recovery.manager.enabled / .strategy / .timeout.ms.
    unclean_recovery_manager_enabled: bool = True
    unclean_recovery_strategy: UncleanRecoveryStrategy = UncleanRecoveryStrategy.BALANCED
    unclean_recovery_timeout_ms: int = DEFAULT_RECOVERY_TIMEOUT_MS
    # The active controller adopts the image it built when writing a batch, once that batch
    # commits, instead of replaying its own records again. True: replay anyway and fail loudly if
    # the two differ (tests and the simulator).
    verify_leader_replay: bool = False
    static_configs: dict[str, str] = field(default_factory=dict)  # static broker-level configs
    # authorizer.class.name, super.users, allow.everyone.if.no.acl.found; None: no authorizer, every
    # request is allowed and the ACL APIs answer SECURITY_DISABLED (as Kafka without one).
    authorizer: AuthorizerConfig | None = None


@dataclass(frozen=True, slots=True)
class _Written:
    """One batch this active controller wrote, not yet committed: the image after it and the delta
    that made that image (published as is when the batch commits), and whether it may be adopted
    instead of replayed (not when it holds transaction markers)."""

    last_offset: int
    image: MetadataImage
    delta: MetadataDelta
    adoptable: bool


@dataclass(slots=True)
class _Pending:
    offset: int
    envelope: ControllerEnvelope


class QuorumController:
    """One controller node's state machine. Register it on the raft node (``node.register``) and
    call ``poll`` after every raft poll; feed requests with ``handle``."""

    def __init__(
        self,
        *,
        node_id: int,
        cluster_id: str,
        raft: RaftClient,
        rng: random.Random,
        config: ControllerConfig | None = None,
        bootstrap_features: dict[str, int] | None = None,
        bootstrap_records: Sequence[ApiMessageAndVersion] = (),
        snapshot_encoder: Callable[[MetadataImage], Future[list[bytes]]] | None = None,
    ) -> None:
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.raft = raft
        self.config = config or ControllerConfig()
        self.rng = rng
        self.bootstrap_features = dict(
            bootstrap_features
            or {"metadata.version": int(MetadataVersion.IBP_4_0_IV3), "eligible.leader.replicas.version": 1}
        )
        # Records ``kraft storage format`` added to the bootstrap metadata (``--add-scram``).
        self.bootstrap_records = tuple(bootstrap_records)
        self.loader = MetadataLoader()
        self.metrics = ControllerMetrics()
        self.resolver = ConfigResolver(self.config.static_configs, node_id)
        self.replication = ReplicationControl(
            self.resolver,
            rng,
            default_replication_factor=self.config.default_replication_factor,
            default_num_partitions=self.config.num_partitions,
            delete_topic_enable=self.config.delete_topic_enable,
            last_known_leader_mode=self.config.last_known_leader_mode,
        )
        self.heartbeats = BrokerHeartbeats(self.config.session_timeout_ms)
        self.unclean_recovery = UncleanRecoveryManager(
            self.config.unclean_recovery_strategy
            if self.config.unclean_recovery_manager_enabled
            else UncleanRecoveryStrategy.NONE,
            self.config.unclean_recovery_timeout_ms,
        )
        self.cluster = ClusterControl(
            cluster_id=cluster_id,
            node_id=node_id,
            replication=self.replication,
            heartbeats=self.heartbeats,
            recovery=self.unclean_recovery,
        )
        self.configs = ConfigControl(self.resolver)
        self.acls = AclControl(rng)
        self.authz = None if self.config.authorizer is None else RequestAuthorizer(self.config.authorizer)
        self.leader = LeaderAndEpoch(None, 0)
        self.active_epoch: int | None = None
        self._latest: MetadataImage = self.loader.image
        self._queue: deque[tuple[ControllerEnvelope, int]] = deque()
        self._pending: deque[_Pending] = deque()
        # Our uncommitted writes, oldest first.
        self._written: deque[_Written] = deque()
        self._outbound: list[ControllerEnvelope] = []
        self._committed_offset = -1
        self._needs_activation = False
        self._next_noop_ms: int | None = None
        self._next_rebalance_ms: int | None = None
        self._next_unclean_check_ms: int | None = None
        self.snapshots = SnapshotScheduler(
            max_bytes=self.config.snapshot_max_bytes,
            interval_ms=self.config.snapshot_interval_ms,
            encode=snapshot_encoder,
        )
        self.on_commit: Callable[[MetadataImage], None] | None = None  # observers (tests, simulator)

    # ---------------------------------------------------------------------------------- state

    @property
    def image(self) -> MetadataImage:
        """The committed image."""
        return self.loader.image

    @property
    def latest_image(self) -> MetadataImage:
        """Committed + this active controller's uncommitted writes (= ``image`` on standbys)."""
        return self._latest if self.is_active else self.loader.image

    @property
    def is_active(self) -> bool:
        return self.active_epoch is not None

    @property
    def has_queued_requests(self) -> bool:
        return bool(self._queue)

    # ---------------------------------------------------------------------------------- RaftListener

    def handle_commit(self, batch: CommittedBatch) -> None:
        if batch.is_control or not batch.records:
            self.loader.handle_control_batch(batch.last_offset, batch.epoch, batch.append_timestamp_ms)
        else:
            written = None
            while self._written and self._written[0].last_offset <= batch.last_offset:
                written = self._written.popleft()
            mine = written is not None and written.last_offset == batch.last_offset and written.adoptable
            try:
                if (
                    written is not None
                    and mine
                    and not self.loader.in_transaction
                    and not self.config.verify_leader_replay
                ):
                    provenance = MetadataProvenance(
                        last_offset=batch.last_offset,
                        last_epoch=batch.epoch,
                        last_append_ms=batch.append_timestamp_ms,
                    )
                    self.loader.adopt(written.image.with_provenance(provenance), written.delta)
                else:
                    self.loader.handle_batch(
                        batch.base_offset, batch.epoch, batch.append_timestamp_ms, batch.records
                    )
                    if written is not None and mine:
                        self._check_replay_matches(written.image)
            except ReplayError as e:
                # The committed log is the truth: an image that cannot follow it must not serve.
                self.metrics.metadata_error_count += 1
                log.error("controller %d: cannot replay committed metadata: %s", self.node_id, e)
                raise
        self.snapshots.committed(
            batch.last_offset, batch.epoch, batch.append_timestamp_ms, sum(len(r) for r in batch.records)
        )
        self._committed_offset = batch.last_offset
        self.metrics.last_committed_offset = batch.last_offset
        self.metrics.last_applied_offset = batch.last_offset
        self.metrics.last_applied_timestamp_ms = batch.append_timestamp_ms
        self._release_committed()
        if self.is_active and not self._written:
            # Every write of ours is committed: the committed image is the latest one. Not when
            # only the responses are released: timer writes (session-expiry fencing, rebalance,
            # NoOp, bootstrap) have no pending response but are in ``_latest`` until they commit.
            self._latest = self.loader.image
        if self.on_commit is not None:
            self.on_commit(self.loader.image)

    def _check_replay_matches(self, written: MetadataImage) -> None:
        if not image_equal(written, self.loader.image):
            differences = "; ".join(image_differences(written, self.loader.image))
            raise FatalError(
                f"controller {self.node_id}: the image written at offset "
                f"{written.provenance.last_offset} differs from its replay: {differences}"
            )

    def handle_load_snapshot(self, reader: SnapshotReader) -> None:
        snapshot_id = reader.snapshot_id
        self.loader.load_snapshot(
            snapshot_id.offset, snapshot_id.epoch, reader.last_contained_log_timestamp, list(reader.records())
        )
        self._committed_offset = snapshot_id.offset - 1
        self.snapshots.loaded(snapshot_id.offset)
        if self.on_commit is not None:
            self.on_commit(self.loader.image)

    def handle_leader_change(self, leader: LeaderAndEpoch) -> None:
        self.leader = leader
        # The core names this node leader once its listener has caught up to the epoch start, but
        # also when a former leader restarts: it is then resigned in that epoch and can never append
        # in it (``next_append_offset`` is None). Only a core that can append makes us active.
        if leader.leader_id == self.node_id and self.raft.next_append_offset() is not None:
            if self.active_epoch != leader.epoch:
                self.active_epoch = leader.epoch
                self._needs_activation = True
        elif self.active_epoch is not None:
            self._deactivate("leadership moved to " + str(leader.leader_id))

    # ---------------------------------------------------------------------------------- requests

    def handle(self, envelope: ControllerEnvelope, now_ms: int) -> None:
        """Queue a request; its response comes out of a later ``poll``."""
        self._queue.append((envelope, now_ms))

    def poll(self, now_ms: int) -> tuple[list[ControllerEnvelope], int | None]:
        """Run queued requests and timers. Returns responses to send and the next wake-up time."""
        if self._needs_activation and self.is_active:
            self._needs_activation = False
            self._activate(now_ms)
        while self._queue:
            envelope, queued_ms = self._queue[0]
            if not self._run_request(envelope, now_ms):
                break  # the core's buffer is full: try again next poll
            self._queue.popleft()
            self.metrics.record_queue_time(now_ms - queued_ms)
        wake: list[int] = []
        if self.is_active:
            self._run_timers(now_ms, wake)
        self._maybe_snapshot(now_ms)
        self.metrics.active = self.is_active
        self.metrics.observe(self.latest_image if self.is_active else self.image)
        out, self._outbound = self._outbound, []
        return out, min(wake) if wake else None

    def _run_request(self, envelope: ControllerEnvelope, now_ms: int) -> bool:
        request = envelope.body
        assert isinstance(request, ApiRequest)
        key, version, body = request.api.key, request.version, request.body
        merge = None
        if self.authz is not None and not self.authz.trusted(envelope.source):
            # ControllerApis: each API checks its operation before it runs (see request_authz).
            verdict = self.authz.check(
                self.image,
                envelope.principal,
                envelope.host or UNKNOWN_HOST,
                key,
                request.api.name,
                version,
                body,
                now_ms,
            )
            if not isinstance(verdict, Proceed):
                self._outbound.append(envelope.reply(verdict.response))
                return True
            body, merge = verdict.body, verdict.merge
        outcome = self._run_authorized(key, version, body, now_ms)
        if outcome is None:
            return False
        if merge is not None and outcome.response is not None:
            outcome = replace(outcome, response=merge(outcome.response))
        reply = envelope.reply(outcome.response)
        if outcome.commit_offset is None:
            self._outbound.append(reply)
        else:
            self._pending.append(_Pending(outcome.commit_offset, reply))
        return True

    def _run_authorized(self, key: int, version: int, body: Any, now_ms: int) -> ControllerResult[Any] | None:
        """Run one (authorised) request: its answer, to send now (``commit_offset`` None) or once
        that offset commits; None when the core's buffer is full (try again next poll)."""
        if key in READ_ONLY_APIS:
            return ControllerResult((), self._read_only(key, version, body))
        if not self.is_active or self._needs_activation:
            return ControllerResult((), error_response(key, version, body, ErrorCode.NOT_CONTROLLER))
        try:
            outcome = self._dispatch(key, version, body, now_ms)
        except _BufferFull:
            return None
        if outcome is None:
            return ControllerResult((), error_response(key, version, body, ErrorCode.INVALID_REQUEST))
        if not outcome.records:
            return outcome
        try:
            last = self._append(list(outcome.records), now_ms)
        except _BufferFull:
            return None
        except ReplayError as e:
            self.metrics.metadata_error_count += 1
            log.error("controller %d: refusing to write records that do not replay: %s", self.node_id, e)
            return ControllerResult((), error_response(key, version, body, ErrorCode.UNKNOWN_SERVER_ERROR))
        self.metrics.add_stats(outcome.stats)
        return replace(outcome, commit_offset=last)

    def _dispatch(self, key: int, version: int, body: Any, now_ms: int) -> ControllerResult[Any] | None:
        image = self._latest
        next_offset = self._next_offset()
        active = self.cluster.is_active_fn(image)
        match key:
            case broker_heartbeat.API.key:
                return self.cluster.heartbeat(image, body, version, now_ms, next_offset)
            case broker_registration.API.key:
                return self.cluster.register_broker(image, body, version, now_ms, next_offset)
            case unregister_broker.API.key:
                return self.cluster.unregister_broker(image, body, version)
            case alter_partition.API.key:
                return self.replication.alter_partition(image, body, version, is_active=active)
            case create_topics.API.key:
                return self.replication.create_topics(image, body, version, is_active=active)
            case create_partitions.API.key:
                return self.replication.create_partitions(image, body, version, is_active=active)
            case delete_topics.API.key:
                return self.replication.delete_topics(image, body, version)
            case elect_leaders.API.key:
                return self.replication.elect_leaders(image, body, version, is_active=active)
            case incremental_alter_configs.API.key:
                return self.configs.incremental_alter_configs(image, body, version)
            case update_features.API.key:
                return self._update_features(image, body, version, now_ms)
            case allocate_producer_ids.API.key:
                return allocate_producer_id_block(image, body, version)
            case alter_user_scram_credentials.API.key:
                return alter_scram(image, body, version)
            case create_acls.API.key | delete_acls.API.key if self.authz is None:
                return ControllerResult(
                    (), acl_api_error(key, body, ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER_MESSAGE)
                )
            case create_acls.API.key:
                return self.acls.create_acls(image, body, version)
            case delete_acls.API.key:
                return self.acls.delete_acls(image, body, version)
        return None

    def _read_only(self, key: int, version: int, body: Any) -> Any:
        if key == describe_configs.API.key:
            return self.configs.describe_configs(self.image, body, version)
        if key == describe_acls.API.key:
            if self.authz is None:
                return acl_api_error(key, body, ErrorCode.SECURITY_DISABLED, NO_AUTHORIZER_MESSAGE)
            return describe_acls_response(self.image.acls, body, version)
        raise KraftError(f"API {key} is not read-only")

    def _update_features(
        self, image: MetadataImage, body: Any, version: int, now_ms: int
    ) -> ControllerResult[Any]:
        cls: Any = update_features.RESPONSE.cls
        updates = []
        for u in body.feature_updates:
            if version == 0:
                kind = UpgradeType.SAFE_DOWNGRADE if u.allow_downgrade else UpgradeType.UPGRADE
            else:
                kind = UpgradeType(u.upgrade_type) if u.upgrade_type in (1, 2, 3) else UpgradeType.UNKNOWN
            updates.append(
                FeatureUpdate(u.feature, u.max_version_level if u.max_version_level > 0 else 0, kind)
            )
        # kraft.version at the level in force changes nothing (``--release-version`` sends it with
        # every other feature); any other level is the raft layer's.
        if any(u.feature == KRAFT_VERSION and u.level != self.raft.kraft_version for u in updates):
            return self._update_kraft_version(updates, bool(getattr(body, "validate_only", False)), now_ms)
        # kraft.version 1 already in force: nothing to write, and not a feature record either.
        unchanged = [u for u in updates if u.feature == KRAFT_VERSION and u.level > 0]
        outcome = validate_updates(image, self.node_id, [u for u in updates if u not in unchanged])
        response = cls(
            throttle_time_ms=0,
            error_code=outcome.error_code,
            error_message=outcome.error_message,
            results=[
                cls.UpdatableFeatureResult(feature=f, error_code=c, error_message=m)
                for f, c, m in outcome.per_feature
            ]
            + [
                cls.UpdatableFeatureResult(feature=u.feature, error_code=0, error_message=None)
                for u in unchanged
            ],
        )
        records = () if getattr(body, "validate_only", False) else outcome.records
        return ControllerResult(tuple(records), response, {})

    def _update_kraft_version(
        self, updates: list[FeatureUpdate], validate_only: bool, now_ms: int
    ) -> ControllerResult[Any]:
        """kraft.version lives in the raft log, not in a FeatureLevelRecord: the raft leader
        writes it (``kraft.raft.reconfig.upgrade_kraft_version``), and the answer waits for that
        write to commit, as Kafka 4.1's FeatureControlManager hands it to the raft client."""
        cls: Any = update_features.RESPONSE.cls

        def respond(code: int, message: str | None, offset: int | None = None) -> ControllerResult[Any]:
            return ControllerResult(
                (),
                cls(
                    throttle_time_ms=0,
                    error_code=code,
                    error_message=message,
                    results=[
                        cls.UpdatableFeatureResult(feature=u.feature, error_code=code, error_message=message)
                        for u in updates
                    ],
                ),
                {},
                offset,
            )

        if len(updates) != 1:
            return respond(
                ErrorCode.INVALID_REQUEST,
                f"{KRAFT_VERSION} must be updated on its own: the raft layer writes it, not a feature record",
            )
        update = updates[0]
        if update.upgrade_type == UpgradeType.UNKNOWN:
            return respond(
                ErrorCode.INVALID_UPDATE_VERSION, f"Unknown upgrade type for feature {KRAFT_VERSION}."
            )
        try:
            offset = self.raft.upgrade_kraft_version(update.level, validate_only=validate_only, now_ms=now_ms)
        except NotLeaderError as e:
            return respond(ErrorCode.NOT_CONTROLLER, str(e))
        except KraftError as e:
            return respond(ErrorCode.INVALID_UPDATE_VERSION, str(e))
        return respond(ErrorCode.NONE, None, offset)

    # ---------------------------------------------------------------------------------- write path

    def _next_offset(self) -> int:
        offset = self.raft.next_append_offset()
        if offset is None:
            raise _BufferFull()  # not leader any more in the core: handled as a retry
        return offset

    def _append(self, records: list[Record], now_ms: int) -> int:
        """Replay ``records`` into the latest image, then append them as one batch."""
        assert self.active_epoch is not None
        base = self._next_offset()
        delta = MetadataDelta(self._latest)
        for i, r in enumerate(records):
            if r.type in _TRANSACTION_MARKERS:
                continue  # one batch is atomic already; the loader handles the markers on commit
            delta.replay(r, base + i)
        encoded = [encode_record(r) for r in records]
        from kraft.raft.accumulator import BufferFullError

        try:
            last = self.raft.schedule_append(self.active_epoch, encoded)
        except BufferFullError:
            raise _BufferFull() from None
        if last != base + len(records) - 1:
            raise KraftError(f"append landed at {last - len(records) + 1}, expected {base}")
        self._latest = delta.apply(
            MetadataProvenance(last_offset=last, last_epoch=self.active_epoch, last_append_ms=now_ms)
        )
        markers = any(r.type in _TRANSACTION_MARKERS for r in records)
        self._written.append(_Written(last, self._latest, delta, not markers))
        self.metrics.last_applied_offset = last
        return last

    def _release_committed(self) -> None:
        while self._pending and self._pending[0].offset <= self._committed_offset:
            self._outbound.append(self._pending.popleft().envelope)

    # ---------------------------------------------------------------------------------- activation

    def _activate(self, now_ms: int) -> None:
        self.metrics.new_active_controllers += 1
        self._latest = self.loader.image
        self._pending.clear()
        self._written.clear()
        self.heartbeats.start_sessions(self._latest, now_ms)
        self.unclean_recovery.reset()  # soft state: relearnt from the next heartbeats
        self._next_noop_ms = (
            now_ms + self.config.max_idle_interval_ms if self.config.max_idle_interval_ms else None
        )
        self._next_rebalance_ms = now_ms + self.config.leader_imbalance_check_interval_ms
        self._next_unclean_check_ms = now_ms + self.config.unclean_election_interval_ms
        log.info(
            "controller %d: active in epoch %s at offset %d",
            self.node_id,
            self.active_epoch,
            self._committed_offset,
        )
        records: list[Record] = []
        if self.loader.in_transaction:
            records.append(make_record(MetadataRecordType.ABORT_TRANSACTION, reason="Controller failover"))
        if "metadata.version" not in self.loader.image.features:
            records.extend(self._bootstrap_records())
        if records:
            try:
                self._append(records, now_ms)
            except _BufferFull:
                self._needs_activation = True

    def _bootstrap_records(self) -> list[Record]:
        features = dict(self.bootstrap_features)
        mv = features.get("metadata.version", int(MetadataVersion.IBP_4_0_IV3))
        levels = [make_record(MetadataRecordType.FEATURE_LEVEL, name="metadata.version", feature_level=mv)]
        for name in sorted(features):
            if name != "metadata.version" and features[name] > 0:
                levels.append(
                    make_record(MetadataRecordType.FEATURE_LEVEL, name=name, feature_level=features[name])
                )
        # As Kafka's ActivationRecordsGenerator: the bootstrap metadata's other records (SCRAM
        # credentials) follow its feature levels.
        levels.extend(self.bootstrap_records)
        levels.append(make_record(MetadataRecordType.ZK_MIGRATION_STATE, zk_migration_state=0))
        if mv >= MetadataVersion.IBP_3_6_IV1:
            return [
                make_record(MetadataRecordType.BEGIN_TRANSACTION, name="Bootstrap records"),
                *levels,
                make_record(MetadataRecordType.END_TRANSACTION),
            ]
        return levels

    def _deactivate(self, reason: str) -> None:
        log.info(
            "controller %d: no longer active (%s); %d request(s) get NOT_CONTROLLER",
            self.node_id,
            reason,
            len(self._pending),
        )
        self.active_epoch = None
        self._needs_activation = False
        for p in self._pending:
            answer = p.envelope.body
            assert isinstance(answer, ApiResponse)
            # The original request is gone; answer with the API's NOT_CONTROLLER shape.
            code = ErrorCode.NOT_CONTROLLER
            body = error_response(answer.api.key, answer.version, None, code, like=answer.body)
            self._outbound.append(replace(p.envelope, body=replace(answer, body=body)))
        self._pending.clear()
        self._written.clear()
        self._latest = self.loader.image
        self.unclean_recovery.reset()

    # ---------------------------------------------------------------------------------- timers

    def _run_timers(self, now_ms: int, wake: list[int]) -> None:
        image = self._latest
        # Session expiry: one stale broker per tick (spec 2.4).
        removals = dict(self.heartbeats.isr_removals)  # restored if an append does not fit
        fenced = self.cluster.maybe_fence_stale_broker(image, now_ms, self._committed_offset)
        if fenced is not None:
            broker_id, records, stats = fenced
            try:
                last = self._append(records, now_ms)
                self.metrics.add_stats(stats.as_dict())
                if broker_id in self.heartbeats.isr_removals:
                    self.heartbeats.isr_removals[broker_id].after_offset = last
                    log.info(
                        "controller %d: broker %d's session expired; %d partition(s) changed, "
                        "more to go before it is fenced",
                        self.node_id,
                        broker_id,
                        len(records),
                    )
                else:
                    log.info("controller %d: fenced broker %d (session expired)", self.node_id, broker_id)
            except _BufferFull:
                self.heartbeats.last_contact_ms[broker_id] = now_ms - self.config.session_timeout_ms
                self.heartbeats.isr_removals = removals
            wake.append(now_ms + 1)
        removals = dict(self.heartbeats.isr_removals)
        shutdown = self.cluster.continue_controlled_shutdown(self._latest, self._committed_offset)
        if shutdown is not None:
            broker_id, records, stats = shutdown
            try:
                last = self._append(records, now_ms)
                self.heartbeats.controlled_shutdown_offset[broker_id] = last
                pending = self.heartbeats.isr_removals.get(broker_id)
                if pending is not None:
                    pending.after_offset = last
                self.metrics.add_stats(stats.as_dict())
                # Progress of a long shutdown: a line per slice after the first (the heartbeat wrote it).
                log.info(
                    "controller %d: controlled shutdown of broker %d: %d partition(s) changed, "
                    "%d more to look at",
                    self.node_id,
                    broker_id,
                    len(records),
                    0 if pending is None else len(pending.remaining),
                )
            except _BufferFull:
                self.heartbeats.isr_removals = removals
            wake.append(now_ms + 1)
        expiry = self.heartbeats.next_expiry_ms(self._latest)
        if expiry is not None:
            wake.append(max(expiry, now_ms + 1))
        if self._next_noop_ms is not None:
            if now_ms >= self._next_noop_ms:
                if self._latest.metadata_version >= MetadataVersion.IBP_3_3_IV1 and not self._pending:
                    with contextlib.suppress(_BufferFull):  # the next tick writes one
                        self._append([make_record(MetadataRecordType.NO_OP)], now_ms)
                self._next_noop_ms = now_ms + self.config.max_idle_interval_ms
            wake.append(self._next_noop_ms)
        if self._next_rebalance_ms is not None and self.config.auto_leader_rebalance_enable:
            if now_ms >= self._next_rebalance_ms:
                records, capped, stats = self.replication.rebalance_imbalanced(
                    self._latest, is_active=self.cluster.is_active_fn(self._latest)
                )
                if records:
                    try:
                        self._append(records, now_ms)
                        self.metrics.add_stats(stats.as_dict())
                    except _BufferFull:
                        capped = True
                self._next_rebalance_ms = now_ms + (
                    10 if capped else self.config.leader_imbalance_check_interval_ms
                )
            wake.append(self._next_rebalance_ms)
        self._run_unclean_recovery(now_ms, wake)
        if self._next_unclean_check_ms is not None:
            if now_ms >= self._next_unclean_check_ms:
                records, stats = self.replication.unclean_check(
                    self._latest, is_active=self.cluster.is_active_fn(self._latest)
                )
                if records:
                    try:
                        self._append(records, now_ms)
                        self.metrics.add_stats(stats.as_dict())
                    except _BufferFull:
                        pass
                self._next_unclean_check_ms = now_ms + self.config.unclean_election_interval_ms
            wake.append(self._next_unclean_check_ms)

    def _run_unclean_recovery(self, now_ms: int, wake: list[int]) -> None:
        """KIP-966 part 2: elect the most complete log where the reports allow it (module
        ``unclean_recovery``); the manager keeps nothing it decided, so a write that does not fit
        is decided again at the next tick."""
        image = self._latest
        active = self.cluster.is_active_fn(image)
        resolver = self.resolver

        def eligible_topic(name: str) -> bool:
            # Topics that allow unclean election keep Kafka's immediate one (spec 4.3, 4.6).
            return elr_enabled(image) and not resolver.topic_unclean_enabled(image, name)

        elections, next_timeout = self.unclean_recovery.poll(
            image, now_ms, is_acceptable=active, eligible_topic=eligible_topic
        )
        if next_timeout is not None:
            wake.append(max(next_timeout, now_ms + 1))
        if not elections:
            return
        records, stats = self.replication.elect_by_unclean_recovery(
            image, [(e.tp, e.leader) for e in elections], is_active=active
        )
        if not records:
            return
        try:
            self._append(records, now_ms)
        except _BufferFull:
            wake.append(now_ms + 1)  # decided again at the next tick
            return
        self.metrics.add_stats(stats.as_dict())
        for e in elections:
            topic = image.topics_by_id[e.tp.topic_id].name
            log.warning(
                "controller %d: unclean recovery elected broker %d for %s-%d (last written epoch %d, "
                "log end offset %d%s)",
                self.node_id,
                e.leader,
                topic,
                e.tp.partition_id,
                e.report.last_epoch,
                e.report.log_end_offset,
                ", after the timeout" if e.timed_out else "",
            )

    # ---------------------------------------------------------------------------------- snapshots

    def _maybe_snapshot(self, now_ms: int) -> None:
        """Spec 1.7: at a batch boundary once enough bytes were replayed, or the interval passed."""
        done = self.snapshots.poll(self.raft)  # one encoded in the background
        if done is not None:
            self.metrics.snapshots_written += 1
            log.info("controller %d: wrote snapshot %s", self.node_id, done)
        if not self.loader.in_transaction and self.snapshots.is_due(now_ms):
            self.write_snapshot(now_ms)

    def write_snapshot(self, now_ms: int) -> OffsetAndEpoch | None:
        """Write the committed image as a snapshot at the last committed batch boundary."""
        snapshot_id = self.snapshots.write(self.raft, self.loader.image, now_ms)
        if snapshot_id is not None:
            self.metrics.snapshots_written += 1
            log.info("controller %d: wrote snapshot %s", self.node_id, snapshot_id)
        return snapshot_id

    def supported_features(self) -> dict[str, tuple[int, int]]:
        return dict(SUPPORTED_FEATURES)


_TRANSACTION_MARKERS = frozenset(
    {
        MetadataRecordType.BEGIN_TRANSACTION,
        MetadataRecordType.END_TRANSACTION,
        MetadataRecordType.ABORT_TRANSACTION,
    }
)


class _BufferFull(Exception):
    """The core cannot take more records now; the request is retried on the next poll."""
