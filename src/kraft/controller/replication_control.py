"""Topics and partitions: CreateTopics, CreatePartitions, DeleteTopics, AlterPartition, ElectLeaders,
and the partition changes that broker lifecycle events cause (Kafka's ReplicationControlManager).

Every handler is a function of (image, request) that returns records and a response and mutates
nothing (STYLE 5). Leader/ISR/ELR choices all go through ``build_partition_change`` (spec 4.2),
with the callers' parameters of spec 4.3. Several changes to one partition in one batch see each
other through ``_Working`` (the image plus the changes emitted so far).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kraft.common.uuids import ZERO_UUID, random_uuid
from kraft.controller.features import elr_enabled
from kraft.controller.partition_change import Election, PartitionChangeResult, build_partition_change
from kraft.controller.result import ControllerResult, result
from kraft.metadata.configs import (
    TOPIC,
    ConfigResolver,
    InvalidConfigError,
    effective_min_isr,
    validate_value,
)
from kraft.metadata.image import MetadataImage, TopicIdPartition
from kraft.metadata.partition import PartitionChange, PartitionRegistration
from kraft.metadata.records import (
    ApiMessageAndVersion,
    MetadataRecordType,
    make_record,
    record_version,
)
from kraft.metadata.topic_names import collision_key, topic_name_problem
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import (
    alter_partition,
    create_partitions,
    create_topics,
    delete_topics,
    elect_leaders,
)
from kraft.raft.types import METADATA_TOPIC

Record = ApiMessageAndVersion
# Kafka's cap on the records one user operation may produce (QuorumController MAX_RECORDS_PER_USER_OP).
MAX_RECORDS_PER_USER_OP = 10_000
UNASSIGNED_DIR = uuid.UUID(int=1)


def _cls(struct_type: Any) -> Any:
    return struct_type.cls


def partition_change_record(change: PartitionChange, metadata_version: int) -> Record:
    """The PartitionChangeRecord carrying ``change`` at the version ``metadata_version`` writes."""
    version = record_version(MetadataRecordType.PARTITION_CHANGE, metadata_version)

    def lst(v: Sequence[Any] | None) -> list[Any] | None:
        return None if v is None else list(v)

    fields: dict[str, Any] = {
        "partition_id": change.partition_id,
        "topic_id": change.topic_id,
        "isr": lst(change.isr),
        "leader": change.leader,
        "replicas": lst(change.replicas),
        "removing_replicas": lst(change.removing_replicas),
        "adding_replicas": lst(change.adding_replicas),
        "leader_recovery_state": change.leader_recovery_state,
    }
    if version >= 1:
        fields["directories"] = lst(change.directories)
    if version >= 2:
        fields["eligible_leader_replicas"] = lst(change.elr)
        fields["last_known_elr"] = lst(change.last_known_elr)
    return make_record(MetadataRecordType.PARTITION_CHANGE, version, **fields)


def partition_record(
    topic_id: uuid.UUID, partition_id: int, p: PartitionRegistration, metadata_version: int
) -> Record:
    """A PartitionRecord of ``p`` (new partitions and snapshots); ELR/LKE only when non-empty."""
    version = record_version(MetadataRecordType.PARTITION, metadata_version)
    fields: dict[str, Any] = {
        "partition_id": partition_id,
        "topic_id": topic_id,
        "replicas": list(p.replicas),
        "isr": list(p.isr),
        "removing_replicas": list(p.removing_replicas),
        "adding_replicas": list(p.adding_replicas),
        "leader": p.leader,
        "leader_recovery_state": p.leader_recovery_state,
        "leader_epoch": p.leader_epoch,
        "partition_epoch": p.partition_epoch,
    }
    if version >= 1:
        fields["directories"] = list(p.directories) if p.directories else [UNASSIGNED_DIR] * len(p.replicas)
    if version >= 2:
        fields["eligible_leader_replicas"] = list(p.elr) if p.elr else None
        fields["last_known_elr"] = list(p.last_known_elr) if p.last_known_elr else None
    return make_record(MetadataRecordType.PARTITION, version, **fields)


@dataclass(slots=True)
class _Working:
    """The image plus the partition changes already emitted in this operation."""

    image: MetadataImage
    changed: dict[TopicIdPartition, PartitionRegistration]
    # Per topic name: its min.insync.replicas and unclean.leader.election.enable, as the image has
    # them (it does not change during the operation). Resolving them per partition was a tenth of
    # a controlled shutdown's controller time.
    topic_settings: dict[str, tuple[int, bool]] = field(default_factory=dict)

    def get(self, tp: TopicIdPartition) -> PartitionRegistration | None:
        found = self.changed.get(tp)
        if found is not None:
            return found
        return self.image.partition(tp.topic_id, tp.partition_id)


@dataclass(slots=True)
class ChangeStats:
    unclean_elections: int = 0
    elections_from_elr: int = 0
    unclean_recovery_elections: int = 0  # also counted in unclean_elections

    def as_dict(self) -> dict[str, int]:
        return {
            "unclean_elections": self.unclean_elections,
            "elections_from_elr": self.elections_from_elr,
            "unclean_recovery_elections": self.unclean_recovery_elections,
        }


class ReplicationControl:
    """Topic and partition handlers. ``rng`` (seeded by the caller) picks topic ids and placement
    offsets; ``resolver`` resolves configs; ``last_known_leader_mode`` is spec 5.4's flag."""

    def __init__(
        self,
        resolver: ConfigResolver,
        rng: random.Random,
        *,
        default_replication_factor: int = 1,
        default_num_partitions: int = 1,
        delete_topic_enable: bool = True,
        last_known_leader_mode: bool = True,
    ) -> None:
        self.resolver = resolver
        self.rng = rng
        self.default_replication_factor = default_replication_factor
        self.default_num_partitions = default_num_partitions
        self.delete_topic_enable = delete_topic_enable
        self.last_known_leader_mode = last_known_leader_mode

    # ------------------------------------------------------------------------------ shared rules

    def change_partition(
        self,
        work: _Working,
        tp: TopicIdPartition,
        records: list[Record],
        stats: ChangeStats,
        *,
        is_acceptable: Callable[[int], bool],
        election: Election | None = None,
        target_isr: Sequence[int] | None = None,
        target_lrs: int | None = None,
        unclean_shutdown: Iterable[int] = (),
    ) -> PartitionChangeResult | None:
        """Run the partition-change algorithm on one partition and emit its record, if any."""
        part = work.get(tp)
        if part is None:
            return None
        image = work.image
        name = image.topics_by_id[tp.topic_id].name
        settings = work.topic_settings.get(name)
        if settings is None:
            resolver = self.resolver
            settings = (resolver.topic_min_isr(image, name), resolver.topic_unclean_enabled(image, name))
            work.topic_settings[name] = settings
        if election is None:  # spec 4.3: automatic paths elect uncleanly when the topic allows it
            election = Election.UNCLEAN if settings[1] else Election.ONLINE
        outcome = build_partition_change(
            part,
            topic_id=tp.topic_id,
            partition_id=tp.partition_id,
            is_acceptable_leader=is_acceptable,
            min_isr=effective_min_isr(settings[0], len(part.replicas)),
            elr_enabled=elr_enabled(image),
            election=election,
            target_isr=target_isr,
            target_leader_recovery_state=target_lrs,
            unclean_shutdown_replicas=tuple(unclean_shutdown),
            last_known_leader_mode=self.last_known_leader_mode,
            metadata_version=image.metadata_version,
        )
        if outcome.change is None:
            return outcome
        records.append(partition_change_record(outcome.change, image.metadata_version))
        work.changed[tp] = part.merge(outcome.change)
        if outcome.elected_leader is not None:
            if outcome.unclean:
                stats.unclean_elections += 1
            if outcome.from_elr:
                stats.elections_from_elr += 1
        return outcome

    # ------------------------------------------------------------------------------ broker events

    def remove_broker_from_isrs(
        self,
        image: MetadataImage,
        broker_id: int,
        records: list[Record],
        stats: ChangeStats,
        *,
        is_active: Callable[[int], bool],
        partitions: Sequence[TopicIdPartition] | None = None,
    ) -> dict[TopicIdPartition, PartitionRegistration]:
        """Fence, controlled shutdown, dir failure: ISR - b, b never acceptable (spec 4.3). Over
        ``partitions`` (a slice of them, see cluster_control) or every partition with b in ISR."""
        work = _Working(image, {})
        for tp in image.partitions_with_isr_member(broker_id) if partitions is None else partitions:
            part = work.get(tp)
            if part is None:
                continue
            self.change_partition(
                work,
                tp,
                records,
                stats,
                is_acceptable=lambda r: r != broker_id and is_active(r),
                target_isr=[r for r in part.isr if r != broker_id],
            )
        return work.changed

    def handle_unclean_reregistration(
        self,
        image: MetadataImage,
        broker_id: int,
        records: list[Record],
        stats: ChangeStats,
        *,
        is_active: Callable[[int], bool],
    ) -> None:
        """Spec 2.5: b leaves every ISR and ELR, never acceptable (U = {b}); and, a departure from
        Kafka, a leaderless partition whose last known leader is b forgets it (partition_change)."""
        work = _Working(image, {})
        targets = list(image.partitions_with_isr_member(broker_id))
        targets += [tp for tp in image.partitions_with_elr_member(broker_id) if tp not in targets]
        if self.last_known_leader_mode and elr_enabled(image):
            seen = set(targets)
            for tp in image.leaderless_partitions():
                part = image.partition(tp.topic_id, tp.partition_id)
                if tp not in seen and part is not None and part.last_known_elr == (broker_id,):
                    targets.append(tp)
        for tp in targets:
            part = work.get(tp)
            if part is None:
                continue
            self.change_partition(
                work,
                tp,
                records,
                stats,
                is_acceptable=lambda r: r != broker_id and is_active(r),
                target_isr=[r for r in part.isr if r != broker_id],
                unclean_shutdown=(broker_id,),
            )

    def elect_for_unfenced_broker(
        self,
        image: MetadataImage,
        broker_id: int,
        records: list[Record],
        stats: ChangeStats,
        *,
        is_active: Callable[[int], bool],
    ) -> None:
        """Unfence of b: an election on every leaderless partition, b acceptable (spec 4.3)."""
        work = _Working(image, {})
        for tp in image.leaderless_partitions():
            part = work.get(tp)
            if part is None or broker_id not in part.replicas:
                continue
            self.change_partition(
                work, tp, records, stats, is_acceptable=lambda r: r == broker_id or is_active(r)
            )

    def elect_by_unclean_recovery(
        self,
        image: MetadataImage,
        elections: Iterable[tuple[TopicIdPartition, int]],
        *,
        is_active: Callable[[int], bool],
    ) -> tuple[list[Record], ChangeStats]:
        """Unclean recovery's choices (``kraft.controller.unclean_recovery``), each written as an
        unclean election of that one broker: ISR = [it], ELR and LastKnownElr emptied, RECOVERING,
        leader epoch + 1 (spec 4.2 step 3 with only the winner acceptable). A winner no longer
        active in ``image`` is skipped (the manager chooses again at its next report)."""
        records: list[Record] = []
        stats = ChangeStats()
        work = _Working(image, {})
        for tp, leader in elections:
            part = work.get(tp)
            if part is None or part.leader != -1 or leader not in part.replicas or not is_active(leader):
                continue
            outcome = self.change_partition(
                work, tp, records, stats, is_acceptable=_only(leader), election=Election.UNCLEAN
            )
            if outcome is not None and outcome.elected_leader == leader:
                stats.unclean_recovery_elections += 1
        return records, stats

    # ------------------------------------------------------------------------------ CreateTopics

    def create_topics(
        self, image: MetadataImage, request: Any, version: int, *, is_active: Callable[[int], bool]
    ) -> ControllerResult[Any]:
        cls = _cls(create_topics.RESPONSE)
        records: list[Record] = []
        results: list[Any] = []
        names = [t.name for t in request.topics]
        duplicates = {n for n in names if names.count(n) > 1}
        created_keys: dict[str, str] = {}  # collision key -> name, for topics created by this request
        existing_keys = {collision_key(n): n for n in image.topics_by_name}
        validate_only = bool(getattr(request, "validate_only", False))
        mv = image.metadata_version
        active = sorted(b.id for b in image.brokers.values() if b.is_active)

        def fail(name: str, code: ErrorCode, message: str) -> None:
            results.append(cls.CreatableTopicResult(name=name, error_code=int(code), error_message=message))

        for t in request.topics:
            name = t.name
            if name in duplicates:
                fail(name, ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
                continue
            if name == METADATA_TOPIC:
                fail(name, ErrorCode.INVALID_REQUEST, f"Creation of internal topic {name} is prohibited.")
                continue
            problem = topic_name_problem(name)
            if problem is not None:
                fail(name, ErrorCode.INVALID_TOPIC_EXCEPTION, problem)
                continue
            if name in image.topics_by_name:
                fail(name, ErrorCode.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
                continue
            key = collision_key(name)
            other = existing_keys.get(key) or created_keys.get(key)
            if other is not None:
                fail(
                    name,
                    ErrorCode.INVALID_TOPIC_EXCEPTION,
                    f"Topic '{name}' collides with existing topic: {other}",
                )
                continue
            configs: dict[str, str] = {}
            config_error = None
            for c in t.configs:
                try:
                    validate_value(TOPIC, c.name, c.value)
                except InvalidConfigError as e:
                    config_error = (
                        f"Invalid config value for resource ConfigResource(type=TOPIC, name='{name}'): {e}"
                    )
                    break
                configs[c.name] = c.value
            if config_error is not None:
                fail(name, ErrorCode.INVALID_CONFIG, config_error)
                continue
            placement = self._placement(image, t, active, is_active)
            if isinstance(placement, tuple):
                fail(name, placement[0], placement[1])
                continue
            rf = len(placement[0]) if placement else 0
            topic_id = random_uuid(self.rng)
            topic_records: list[Record] = [
                make_record(MetadataRecordType.TOPIC, name=name, topic_id=topic_id)
            ]
            for k in sorted(configs):
                topic_records.append(
                    make_record(
                        MetadataRecordType.CONFIG,
                        resource_type=TOPIC,
                        resource_name=name,
                        name=k,
                        value=configs[k],
                    )
                )
            partition_records = self._new_partition_records(image, topic_id, 0, placement, is_active, mv)
            if partition_records is None:
                fail(
                    name,
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    f"Unable to replicate the partition {rf} time(s): All brokers are currently fenced or in "
                    "controlled shutdown.",
                )
                continue
            topic_records.extend(partition_records)
            if len(records) + len(topic_records) > MAX_RECORDS_PER_USER_OP:
                fail(
                    name,
                    ErrorCode.POLICY_VIOLATION,
                    f"Excessively large number of partitions per request: one request may create at most "
                    f"{MAX_RECORDS_PER_USER_OP} records.",
                )
                continue
            records.extend(topic_records)
            created_keys[key] = name
            effective = self._topic_configs(image, name, configs)
            results.append(
                cls.CreatableTopicResult(
                    name=name,
                    topic_id=topic_id,
                    error_code=0,
                    error_message=None,
                    num_partitions=len(placement),
                    replication_factor=rf,
                    configs=[
                        cls.CreatableTopicResult.CreatableTopicConfigs(
                            name=n, value=v, read_only=False, config_source=src, is_sensitive=False
                        )
                        for n, v, src in effective
                    ]
                    if version >= 5
                    else [],
                )
            )
        if validate_only:
            records = []
        return result(records, cls(throttle_time_ms=0, topics=results))

    def _topic_configs(
        self, image: MetadataImage, name: str, pending: dict[str, str]
    ) -> list[tuple[str, str | None, int]]:
        from kraft.metadata.configs import TOPIC_CONFIG_NAMES, ConfigSource

        out: list[tuple[str, str | None, int]] = []
        for key in TOPIC_CONFIG_NAMES:
            if key in pending:
                out.append((key, pending[key], int(ConfigSource.DYNAMIC_TOPIC_CONFIG)))
            else:
                r = self.resolver.resolve(image, TOPIC, name, key)
                out.append((key, r.value, int(r.source)))
        return out

    @classmethod
    def _new_partition_records(
        cls,
        image: MetadataImage,
        topic_id: uuid.UUID,
        first_index: int,
        placement: list[list[int]],
        is_active: Callable[[int], bool],
        mv: int,
    ) -> list[Record] | None:
        """The PartitionRecords of new partitions ``first_index``... placed on ``placement``, each led
        by its first active replica with its active replicas as the ISR; None when a partition has
        no active replica (CreateTopics and CreatePartitions then refuse the topic)."""
        out: list[Record] = []
        for i, replicas in enumerate(placement):
            isr = [r for r in replicas if is_active(r)]
            if not isr:
                return None
            part = PartitionRegistration(
                replicas=tuple(replicas),
                isr=tuple(isr),
                leader=isr[0],
                leader_epoch=0,
                partition_epoch=0,
                directories=tuple(cls._directory_of(image, r) for r in replicas),
            )
            out.append(partition_record(topic_id, first_index + i, part, mv))
        return out

    @staticmethod
    def _directory_of(image: MetadataImage, broker_id: int) -> uuid.UUID:
        broker = image.brokers.get(broker_id)
        if broker is not None and broker.directories:
            return broker.directories[0]
        return UNASSIGNED_DIR

    def _placement(
        self, image: MetadataImage, t: Any, active: list[int], is_active: Callable[[int], bool]
    ) -> list[list[int]] | tuple[ErrorCode, str]:
        """Replica lists for a new topic, or (error code, message). Spec 3.1 steps 5-6, 3.3."""
        if t.assignments:
            if t.num_partitions != -1 or t.replication_factor != -1:
                return (
                    ErrorCode.INVALID_REQUEST,
                    "Both numPartitions or replicationFactor and replicasAssignments were set. "
                    "Both cannot be used at the same time.",
                )
            by_index: dict[int, list[int]] = {}
            for a in t.assignments:
                if a.partition_index in by_index:
                    return (
                        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                        f"Found multiple manual partition assignments for partition {a.partition_index}",
                    )
                by_index[a.partition_index] = list(a.broker_ids)
            out: list[list[int]] = []
            size = None
            for i in range(len(by_index)):
                if i not in by_index:
                    return (
                        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                        f"partitions should be a consecutive 0-based integer sequence, but {i} is missing",
                    )
                replicas = by_index[i]
                problem = self._check_replicas(image, replicas, is_active)
                if problem is not None:
                    return (ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem)
                if size is not None and len(replicas) != size:
                    return (
                        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                        "All partitions must have the same number of replicas",
                    )
                size = len(replicas)
                out.append(replicas)
            return out
        rf = t.replication_factor
        n = t.num_partitions
        if rf == -1:
            rf = self.default_replication_factor
        elif rf <= 0:
            return (
                ErrorCode.INVALID_REPLICATION_FACTOR,
                "Replication factor must be larger than 0, or -1 to use the default value.",
            )
        if n == -1:
            n = self.default_num_partitions
        elif n <= 0:
            return (
                ErrorCode.INVALID_PARTITIONS,
                "Number of partitions was set to an invalid non-positive value.",
            )
        return self.place(image, n, rf, active)

    def place(
        self, image: MetadataImage, count: int, rf: int, active: list[int], first_partition: int = 0
    ) -> list[list[int]] | tuple[ErrorCode, str]:
        """Spec 3.3 (DECISION, plus racks): active brokers, rack-interleaved when racks are set, each
        rack's brokers by id; partition p takes ``list[(s + p + i) mod n]`` from a seeded start s."""
        if not active:
            return (
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {rf} time(s): All brokers are currently fenced.",
            )
        if rf > len(active):
            registered = len(image.brokers)
            detail = (
                f"only {registered} broker(s) are registered"
                if registered < rf
                else f"only {len(active)} broker(s) are unfenced and not in controlled shutdown"
            )
            return (
                ErrorCode.INVALID_REPLICATION_FACTOR,
                f"Unable to replicate the partition {rf} time(s): The target replication factor of {rf} "
                f"cannot be reached because {detail}.",
            )
        ring = self._rack_interleaved(image, active)
        n = len(ring)
        start = self.rng.randrange(n)
        racks = {b: (image.brokers[b].rack if b in image.brokers else None) for b in ring}
        out = []
        for p in range(first_partition, first_partition + count):
            order = [ring[(start + p + i) % n] for i in range(n)]
            chosen = [order[0]]
            used = {racks[order[0]]}
            # Prefer brokers on racks not used yet, in ring order; then fill in ring order.
            for b in order[1:]:
                if len(chosen) == rf:
                    break
                if racks[b] not in used:
                    chosen.append(b)
                    used.add(racks[b])
            for b in order[1:]:
                if len(chosen) == rf:
                    break
                if b not in chosen:
                    chosen.append(b)
            out.append(chosen)
        return out

    @staticmethod
    def _rack_interleaved(image: MetadataImage, ids: list[int]) -> list[int]:
        racks: dict[str, list[int]] = {}
        for b in sorted(ids):
            rack = image.brokers[b].rack if b in image.brokers else None
            racks.setdefault(rack or "", []).append(b)
        if len(racks) <= 1:
            return sorted(ids)
        # Round-robin over racks (sorted by name), so consecutive replicas sit on different racks.
        ordered = [racks[k] for k in sorted(racks)]
        out: list[int] = []
        depth = max(len(v) for v in ordered)
        for i in range(depth):
            for members in ordered:
                if i < len(members):
                    out.append(members[i])
        return out

    @staticmethod
    def _check_replicas(
        image: MetadataImage, replicas: Sequence[int], is_active: Callable[[int], bool]
    ) -> str | None:
        if not replicas:
            return "The manual partition assignment includes an empty replica list."
        if len(set(replicas)) != len(replicas):
            return f"The manual partition assignment includes duplicate replicas: {list(replicas)}"
        for r in replicas:
            if r not in image.brokers:
                return (
                    f"The manual partition assignment includes broker {r}, but no such broker is registered."
                )
        if not any(is_active(r) for r in replicas):
            return (
                f"All brokers specified in the manual partition assignment {list(replicas)} are fenced or in "
                "controlled shutdown."
            )
        return None

    # ------------------------------------------------------------------------------ CreatePartitions

    def create_partitions(
        self, image: MetadataImage, request: Any, version: int, *, is_active: Callable[[int], bool]
    ) -> ControllerResult[Any]:
        cls = _cls(create_partitions.RESPONSE)
        records: list[Record] = []
        results: list[Any] = []
        names = [t.name for t in request.topics]
        active = sorted(b.id for b in image.brokers.values() if b.is_active)
        mv = image.metadata_version

        def fail(name: str, code: ErrorCode, message: str) -> None:
            results.append(
                cls.CreatePartitionsTopicResult(name=name, error_code=int(code), error_message=message)
            )

        for t in request.topics:
            if names.count(t.name) > 1:
                fail(t.name, ErrorCode.INVALID_REQUEST, "Duplicate topic name.")
                continue
            topic = image.topics_by_name.get(t.name)
            if topic is None:
                fail(t.name, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Unable to find topic {t.name}")
                continue
            current = len(topic.partitions)
            if t.count < current:
                fail(
                    t.name,
                    ErrorCode.INVALID_PARTITIONS,
                    f"The topic {t.name} currently has {current} partition(s); "
                    f"{t.count} would not be an increase.",
                )
                continue
            if t.count == current:
                fail(t.name, ErrorCode.INVALID_PARTITIONS, f"Topic already has {current} partition(s).")
                continue
            rf = len(topic.partitions[0].replicas) if topic.partitions else 1
            added = t.count - current
            placement: list[list[int]] | tuple[ErrorCode, str]
            if t.assignments is not None:
                if len(t.assignments) != added:
                    fail(
                        t.name,
                        ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                        f"Attempted to add {added} additional partition(s), but only {len(t.assignments)} "
                        "assignment(s) were specified.",
                    )
                    continue
                placement = []
                problem = None
                for a in t.assignments:
                    problem = self._check_replicas(image, a.broker_ids, is_active)
                    if problem is None and len(a.broker_ids) != rf:
                        problem = (
                            f"The manual partition assignment includes a partition with {len(a.broker_ids)} "
                            f"replica(s), but this is not consistent with previous partitions, which have "
                            f"{rf} replica(s)."
                        )
                    if problem is not None:
                        break
                    placement.append(list(a.broker_ids))
                if problem is not None:
                    fail(t.name, ErrorCode.INVALID_REPLICA_ASSIGNMENT, problem)
                    continue
            else:
                placement = self.place(image, added, rf, active, first_partition=current)
                if isinstance(placement, tuple):
                    fail(t.name, placement[0], placement[1])
                    continue
            new_records = self._new_partition_records(image, topic.id, current, placement, is_active, mv)
            if new_records is None:
                fail(
                    t.name,
                    ErrorCode.INVALID_REPLICATION_FACTOR,
                    f"Unable to replicate the partition {rf} time(s): All brokers are currently fenced or in "
                    "controlled shutdown.",
                )
                continue
            if len(records) + len(new_records) > MAX_RECORDS_PER_USER_OP:
                fail(
                    t.name, ErrorCode.POLICY_VIOLATION, "Excessively large number of partitions per request."
                )
                continue
            records.extend(new_records)
            results.append(cls.CreatePartitionsTopicResult(name=t.name, error_code=0, error_message=None))
        if request.validate_only:
            records = []
        return result(records, cls(throttle_time_ms=0, results=results))

    # ------------------------------------------------------------------------------ DeleteTopics

    def delete_topics(self, image: MetadataImage, request: Any, version: int) -> ControllerResult[Any]:
        cls = _cls(delete_topics.RESPONSE)
        records: list[Record] = []
        results: list[Any] = []
        if version >= 6:
            wanted = [(t.name, t.topic_id) for t in request.topics]
        else:
            wanted = [(n, ZERO_UUID) for n in request.topic_names]
        seen_names = [n for n, _ in wanted if n is not None]
        seen_ids = [i for n, i in wanted if n is None and i != ZERO_UUID]
        removed: set[uuid.UUID] = set()
        for name, topic_id in wanted:

            def fail(
                code: ErrorCode, message: str, name: str | None = name, topic_id: uuid.UUID = topic_id
            ) -> None:
                results.append(
                    cls.DeletableTopicResult(
                        name=name, topic_id=topic_id, error_code=int(code), error_message=message
                    )
                )

            if (name is not None and topic_id != ZERO_UUID) or (name is None and topic_id == ZERO_UUID):
                fail(
                    ErrorCode.INVALID_REQUEST,
                    "Neither topic name nor id were specified."
                    if name is None
                    else "You may not specify both topic name and topic id.",
                )
                continue
            if (name is not None and seen_names.count(name) > 1) or (
                name is None and seen_ids.count(topic_id) > 1
            ):
                fail(
                    ErrorCode.INVALID_REQUEST,
                    "Duplicate topic name." if name is not None else "Duplicate topic id.",
                )
                continue
            if not self.delete_topic_enable:
                fail(ErrorCode.TOPIC_DELETION_DISABLED, "Topic deletion is disabled.")
                continue
            if name is not None:
                topic = image.topics_by_name.get(name)
                if topic is None:
                    fail(
                        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                        "This server does not host this topic-partition.",
                    )
                    continue
            else:
                topic = image.topics_by_id.get(topic_id)
                if topic is None:
                    fail(ErrorCode.UNKNOWN_TOPIC_ID, "This server does not host this topic ID.")
                    continue
            if topic.id in removed:
                fail(ErrorCode.INVALID_REQUEST, "Duplicate topic.")
                continue
            removed.add(topic.id)
            records.append(make_record(MetadataRecordType.REMOVE_TOPIC, topic_id=topic.id))
            results.append(
                cls.DeletableTopicResult(
                    name=topic.name,
                    topic_id=topic.id if version >= 6 else ZERO_UUID,
                    error_code=0,
                    error_message=None,
                )
            )
        return result(records, cls(throttle_time_ms=0, responses=results))

    # ------------------------------------------------------------------------------ AlterPartition

    def alter_partition(
        self, image: MetadataImage, request: Any, version: int, *, is_active: Callable[[int], bool]
    ) -> ControllerResult[Any]:
        """Spec 4.5: checks in Kafka's order, then the partition-change algorithm."""
        cls = _cls(alter_partition.RESPONSE)
        broker = image.brokers.get(request.broker_id)
        if broker is None or broker.epoch != request.broker_epoch:
            return result(
                [], cls(throttle_time_ms=0, error_code=int(ErrorCode.STALE_BROKER_EPOCH), topics=[])
            )
        records: list[Record] = []
        stats = ChangeStats()
        work = _Working(image, {})
        topics_out: list[Any] = []
        for t in request.topics:
            if version >= 2:
                topic = image.topics_by_id.get(t.topic_id)
                unknown = ErrorCode.UNKNOWN_TOPIC_ID
            else:
                topic = image.topics_by_name.get(t.topic_name)
                unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            parts_out: list[Any] = []
            for p in t.partitions:
                # answer() runs within this iteration only, so binding parts_out late is safe.

                def answer(
                    code: ErrorCode,
                    part: PartitionRegistration | None = None,
                    pid: int = p.partition_index,
                    rows: list[Any] = parts_out,
                ) -> None:
                    if part is None:
                        rows.append(cls.TopicData.PartitionData(partition_index=pid, error_code=int(code)))
                    else:
                        rows.append(
                            cls.TopicData.PartitionData(
                                partition_index=pid,
                                error_code=int(code),
                                leader_id=part.leader,
                                leader_epoch=part.leader_epoch,
                                isr=list(part.isr),
                                leader_recovery_state=part.leader_recovery_state,
                                partition_epoch=part.partition_epoch,
                            )
                        )

                if topic is None:
                    answer(unknown)
                    continue
                tp = TopicIdPartition(topic.id, p.partition_index)
                part = work.get(tp)
                if part is None:
                    answer(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)
                    continue
                if version >= 3:
                    new_isr = [s.broker_id for s in p.new_isr_with_epochs]
                    epochs = {s.broker_id: s.broker_epoch for s in p.new_isr_with_epochs}
                else:
                    new_isr = list(p.new_isr)
                    epochs = {}
                code = self._check_alter_partition(
                    image, request.broker_id, part, p, new_isr, epochs, version
                )
                if code is not None:
                    answer(code)
                    continue
                outcome = self.change_partition(
                    work,
                    tp,
                    records,
                    stats,
                    is_acceptable=is_active,
                    target_isr=new_isr,
                    target_lrs=p.leader_recovery_state if version >= 1 else None,
                )
                after = work.get(tp)
                assert after is not None
                if outcome is not None and outcome.change is not None and after.leader != request.broker_id:
                    answer(ErrorCode.NEW_LEADER_ELECTED if version >= 2 else ErrorCode.FENCED_LEADER_EPOCH)
                    continue
                answer(ErrorCode.NONE, after)
            topics_out.append(
                cls.TopicData(
                    topic_name=getattr(t, "topic_name", ""), topic_id=t.topic_id, partitions=parts_out
                )
            )
        return result(records, cls(throttle_time_ms=0, error_code=0, topics=topics_out), stats.as_dict())

    @staticmethod
    def _check_alter_partition(
        image: MetadataImage,
        sender: int,
        part: PartitionRegistration,
        p: Any,
        new_isr: list[int],
        epochs: dict[int, int],
        version: int,
    ) -> ErrorCode | None:
        if p.leader_epoch > part.leader_epoch or p.partition_epoch > part.partition_epoch:
            return ErrorCode.NOT_CONTROLLER
        if p.leader_epoch < part.leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if sender != part.leader:
            return ErrorCode.INVALID_REQUEST
        if p.partition_epoch < part.partition_epoch:
            return ErrorCode.INVALID_UPDATE_VERSION
        if (
            len(set(new_isr)) != len(new_isr)
            or any(r not in part.replicas for r in new_isr)
            or sender not in new_isr
        ):
            return ErrorCode.INVALID_REQUEST
        lrs = p.leader_recovery_state if version >= 1 else 0
        if lrs == 1 and len(new_isr) > 1:
            return ErrorCode.INVALID_REQUEST
        if part.leader_recovery_state == 0 and lrs == 1:
            return ErrorCode.INVALID_REQUEST
        ineligible = ErrorCode.INELIGIBLE_REPLICA if version >= 2 else ErrorCode.OPERATION_NOT_ATTEMPTED
        for r in new_isr:
            if r in part.isr:
                continue  # only members being added must be eligible (Kafka's isEligibleReplica)
            b = image.brokers.get(r)
            if b is None or b.fenced or b.in_controlled_shutdown:
                return ineligible
            want = epochs.get(r, -1)
            if want != -1 and want != b.epoch:
                return ineligible
        return None

    # ------------------------------------------------------------------------------ ElectLeaders

    def elect_leaders(
        self, image: MetadataImage, request: Any, version: int, *, is_active: Callable[[int], bool]
    ) -> ControllerResult[Any]:
        cls = _cls(elect_leaders.RESPONSE)
        election = Election.UNCLEAN if version >= 1 and request.election_type == 1 else Election.PREFERRED
        records: list[Record] = []
        stats = ChangeStats()
        work = _Working(image, {})
        out: dict[str, list[Any]] = {}
        explicit = request.topic_partitions is not None
        if explicit:
            wanted: list[tuple[str, int]] = [
                (t.topic, p) for t in request.topic_partitions for p in t.partitions
            ]
        else:
            wanted = [
                (topic.name, pid)
                for topic in sorted(image.topics_by_name.values(), key=lambda x: x.name)
                for pid in sorted(topic.partitions)
            ]
        for name, pid in wanted:
            topic = image.topics_by_name.get(name)
            part = None if topic is None else work.get(TopicIdPartition(topic.id, pid))
            rows = out.setdefault(name, [])
            if topic is None or part is None:
                rows.append(
                    cls.ReplicaElectionResult.PartitionResult(
                        partition_id=pid,
                        error_code=int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
                        error_message=f"No such topic partition {name}-{pid}",
                    )
                )
                continue
            if (election is Election.PREFERRED and part.leader == part.preferred_leader) or (
                election is Election.UNCLEAN and part.leader != -1
            ):
                if explicit:
                    rows.append(
                        cls.ReplicaElectionResult.PartitionResult(
                            partition_id=pid,
                            error_code=int(ErrorCode.ELECTION_NOT_NEEDED),
                            error_message="Leader election not needed for topic partition",
                        )
                    )
                continue
            tp = TopicIdPartition(topic.id, pid)
            outcome = self.change_partition(
                work, tp, records, stats, is_acceptable=is_active, election=election
            )
            after = work.get(tp)
            elected = (
                outcome is not None
                and outcome.change is not None
                and after is not None
                and (
                    (election is Election.PREFERRED and after.leader == after.preferred_leader)
                    or (election is Election.UNCLEAN and after.leader != -1)
                )
            )
            if not elected:
                code = (
                    ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
                    if election is Election.PREFERRED
                    else ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
                )
                strategy = (
                    "PreferredReplicaPartitionLeaderElectionStrategy"
                    if election is Election.PREFERRED
                    else "UncleanLeaderElection"
                )
                msg = f"Failed to elect leader for partition {name}-{pid} under strategy {strategy}"
                rows.append(
                    cls.ReplicaElectionResult.PartitionResult(
                        partition_id=pid, error_code=int(code), error_message=msg
                    )
                )
                continue
            rows.append(
                cls.ReplicaElectionResult.PartitionResult(partition_id=pid, error_code=0, error_message=None)
            )
        results = [
            cls.ReplicaElectionResult(topic=name, partition_result=rows) for name, rows in out.items() if rows
        ]
        return result(
            records, cls(throttle_time_ms=0, error_code=0, replica_election_results=results), stats.as_dict()
        )

    def rebalance_imbalanced(
        self, image: MetadataImage, *, is_active: Callable[[int], bool], limit: int = 1000
    ) -> tuple[list[Record], bool, ChangeStats]:
        """Auto leader rebalance (spec 4.6): PREFERRED elections over imbalanced partitions, at most
        ``limit``; returns (records, capped, stats)."""
        records: list[Record] = []
        stats = ChangeStats()
        work = _Working(image, {})
        candidates = [tp for tp in image.imbalanced_partitions()]
        for tp in candidates[:limit]:
            part = work.get(tp)
            if part is None or not is_active(part.preferred_leader):
                continue
            self.change_partition(
                work, tp, records, stats, is_acceptable=is_active, election=Election.PREFERRED
            )
        return records, len(candidates) > limit, stats

    def unclean_check(
        self, image: MetadataImage, *, is_active: Callable[[int], bool]
    ) -> tuple[list[Record], ChangeStats]:
        """The periodic unclean election of spec 4.6 over leaderless partitions of topics that allow it."""
        records: list[Record] = []
        stats = ChangeStats()
        work = _Working(image, {})
        for tp in image.leaderless_partitions():
            topic = image.topics_by_id[tp.topic_id]
            if not self.resolver.topic_unclean_enabled(image, topic.name):
                continue
            self.change_partition(
                work, tp, records, stats, is_acceptable=is_active, election=Election.UNCLEAN
            )
        return records, stats


def _only(broker_id: int) -> Callable[[int], bool]:
    """An acceptable-leader test that accepts ``broker_id`` alone."""
    return lambda r: r == broker_id
