"""The immutable metadata image, the delta that replays records into it, and the loader (spec 1.6).

What this module owns:

* ``MetadataImage``: everything the metadata log says, as of one offset: finalized features,
  brokers, controllers, topics (by id and by name, with their partitions), configs, ACLs (by id),
  producer ids, SCRAM credentials (``kraft.metadata.scram``), the ZooKeeper-migration state and the
  provenance (offset, epoch, append time of the last record applied). It never changes once built;
  every field is a read-only view.
* ``MetadataDelta``: records replayed on top of one image. ``replay`` validates one record against
  the image-plus-delta and raises ``ReplayError`` (naming the offset, the record and the rule) when
  the log breaks a rule; ``apply`` builds the next image.
* ``MetadataLoader``: decodes committed batches, handles metadata transactions (KIP-868) and
  publishes one image per batch, as Kafka's ``MetadataLoader``/``MetadataBatchLoader`` do.

What it must not do: I/O, clocks, randomness, controller decisions. Replay depends on nothing but
the records and their offsets, so every replica of the log builds equal images (spec 1.1).

Main invariant: ``delta.apply`` costs O(changed topics + number of topics + brokers + config
resources), never O(all partitions): the partition maps of untouched topics are shared with the
previous image, the changed topics' maps are copied once, and the partition counters are updated
from the before/after of each changed partition (Kafka's ``ControllerMetricsChanges``).
"""

from __future__ import annotations

import dataclasses
import enum
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Final

from kraft.common.errors import CorruptRecordError, KraftError
from kraft.common.fast_init import speed_up_inits
from kraft.metadata.acls import StandardAcl
from kraft.metadata.partition import NO_LEADER, PartitionChange, PartitionRegistration
from kraft.metadata.records import (
    ApiMessageAndVersion,
    ConfigResourceType,
    MetadataRecordType,
    UnmodelledRecordError,
    decode_record,
)
from kraft.metadata.scram import ScramCredential, ScramImage, ScramMechanism

METADATA_VERSION_FEATURE: Final = "metadata.version"

_T = MetadataRecordType
_TRANSACTION_MARKERS: Final = frozenset({_T.BEGIN_TRANSACTION, _T.END_TRANSACTION, _T.ABORT_TRANSACTION})


class ReplayError(KraftError):
    """A committed record breaks a replay rule: the log (or its writer) is wrong, not the caller.

    Attributes:
        offset: the log offset of the offending record (for snapshot records, the offset they are
            replayed at: the snapshot's last contained offset).
        record_type: Kafka's record name, e.g. ``PartitionChangeRecord``.
    """

    def __init__(self, offset: int, record_type: str, rule: str) -> None:
        super().__init__(f"cannot replay {record_type} at offset {offset}: {rule}")
        self.offset = offset
        self.record_type = record_type
        self.rule = rule


# ---------------------------------------------------------------------------------------------------
# Value types


@dataclass(frozen=True, slots=True, kw_only=True)
class Endpoint:
    """One listener of a broker or controller; ``security_protocol`` is a ``SecurityProtocol`` value."""

    name: str
    host: str
    port: int
    security_protocol: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerRegistration:
    """A registered broker, as of its last RegisterBrokerRecord and the changes since.

    ``registration_offset`` is the offset of that RegisterBrokerRecord (for a registration loaded
    from a snapshot, the snapshot's last contained offset, as Kafka does); a fenced broker is
    unfenced only once it has replayed that far (spec 2.3).
    """

    id: int
    epoch: int
    incarnation_id: uuid.UUID
    listeners: tuple[Endpoint, ...]
    supported_features: tuple[tuple[str, int, int], ...]  # (name, min, max), as registered
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool
    is_migrating_zk_broker: bool
    directories: tuple[uuid.UUID, ...]
    registration_offset: int

    @property
    def is_active(self) -> bool:
        """Registered, unfenced and not in controlled shutdown (the spec's "active")."""
        return not self.fenced and not self.in_controlled_shutdown

    def listener(self, name: str) -> Endpoint | None:
        for endpoint in self.listeners:
            if endpoint.name == name:
                return endpoint
        return None

    def supported_range(self, feature: str) -> tuple[int, int] | None:
        """The (min, max) this broker registered for ``feature``; None when it did not list it."""
        for name, low, high in self.supported_features:
            if name == feature:
                return (low, high)
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class ControllerRegistration:
    id: int
    incarnation_id: uuid.UUID
    zk_migration_ready: bool
    listeners: tuple[Endpoint, ...]
    supported_features: tuple[tuple[str, int, int], ...]

    def listener(self, name: str) -> Endpoint | None:
        for endpoint in self.listeners:
            if endpoint.name == name:
                return endpoint
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicImage:
    """A topic and its partitions; ``partitions`` is a read-only view shared between images."""

    name: str
    id: uuid.UUID
    partitions: Mapping[int, PartitionRegistration]


@dataclass(frozen=True, slots=True)
class TopicIdPartition:
    topic_id: uuid.UUID
    partition_id: int

    # Written out for speed (the broker keys its partitions, waiting requests and changes by them):
    # the generated ones call UUID.__hash__ and UUID.__eq__, Python methods (4-5 % of a broker in a
    # 100,000-partition controlled shutdown). The hash is the generated one's value (a UUID hashes
    # as its int), so sets of them iterate in the same order; the order is ``order=True``'s (a UUID
    # orders by its int), written out too: mypyc (the long sweeps' build) compiles ``__eq__`` into
    # the class's comparison slot, and the dataclass then refuses to add ``__lt__`` beside it.
    def __hash__(self) -> int:
        return hash((self.topic_id.int, self.partition_id))

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not TopicIdPartition:
            return NotImplemented
        return self.partition_id == other.partition_id and self.topic_id.int == other.topic_id.int

    def _key(self) -> tuple[int, int]:
        return self.topic_id.int, self.partition_id

    def __lt__(self, other: TopicIdPartition) -> bool:
        if other.__class__ is not TopicIdPartition:
            return NotImplemented
        return self._key() < other._key()

    def __le__(self, other: TopicIdPartition) -> bool:
        if other.__class__ is not TopicIdPartition:
            return NotImplemented
        return self._key() <= other._key()

    def __gt__(self, other: TopicIdPartition) -> bool:
        if other.__class__ is not TopicIdPartition:
            return NotImplemented
        return self._key() > other._key()

    def __ge__(self, other: TopicIdPartition) -> bool:
        if other.__class__ is not TopicIdPartition:
            return NotImplemented
        return self._key() >= other._key()


@dataclass(frozen=True, slots=True, kw_only=True)
class MetadataProvenance:
    """Where an image comes from: the last offset, its epoch and append time it includes."""

    last_offset: int
    last_epoch: int
    last_append_ms: int


# Not a ClassVar of the dataclass: compiled by mypyc (the long sweeps' build), it became a field.
EMPTY_PROVENANCE: Final = MetadataProvenance(last_offset=-1, last_epoch=-1, last_append_ms=-1)

INITIAL_PRODUCER_IDS: Final = (-1, -1, 0)


def _preferred_replica(p: PartitionRegistration) -> int:
    return p.replicas[0] if p.replicas else NO_LEADER


def is_imbalanced(p: PartitionRegistration) -> bool:
    """Kafka's ``!hasPreferredLeader()``: leader != replicas[0] (-1 when there are no replicas).

    So a leaderless partition with replicas counts as imbalanced (as well as offline), exactly as
    ``ControllerMetricsChanges`` counts ``PreferredReplicaImbalanceCount``.
    """
    return p.leader != _preferred_replica(p)


# ---------------------------------------------------------------------------------------------------
# Indexes (built lazily, once per set of topics)


class _IndexKind(enum.Enum):
    ISR = enum.auto()
    LEADER = enum.auto()
    ELR = enum.auto()
    LEADERLESS = enum.auto()
    IMBALANCED = enum.auto()
    REASSIGNING = enum.auto()


class _Indexes:
    """Index cache shared by every image with the same topics (a provenance-only or broker-only
    change keeps the object). Each index is built on first use by one pass over all partitions."""

    __slots__ = ("by_broker", "lists")

    def __init__(self) -> None:
        self.by_broker: dict[_IndexKind, dict[int, tuple[TopicIdPartition, ...]]] = {}
        self.lists: dict[_IndexKind, tuple[TopicIdPartition, ...]] = {}


_EMPTY_TIPS: tuple[TopicIdPartition, ...] = ()


# ---------------------------------------------------------------------------------------------------
# The image


class MetadataImage:
    """An immutable snapshot of the cluster metadata at ``provenance``.

    Built by ``MetadataDelta.apply`` (or directly, for tests). Images share structure: a topic
    that a delta did not touch is the same ``TopicImage`` object in both images, which also makes
    ``==`` between related images cheap (dict equality checks identity first).

    Equality (``==``) compares every field including provenance; ``image_equal`` can ignore the
    provenance and the brokers' registration offsets (which snapshots do not carry exactly).
    """

    __slots__ = (
        "_acls",
        "_brokers",
        "_configs",
        "_controllers",
        "_features",
        "_indexes",
        "_no_electable_leader_count",
        "_offline_partition_count",
        "_partition_count",
        "_preferred_imbalance_count",
        "_producer_ids",
        "_provenance",
        "_scram",
        "_topics_by_id",
        "_topics_by_name",
        "_zk_migration_state",
    )

    EMPTY: ClassVar[MetadataImage]

    _features: Mapping[str, int]
    _brokers: Mapping[int, BrokerRegistration]
    _controllers: Mapping[int, ControllerRegistration]
    _topics_by_id: Mapping[uuid.UUID, TopicImage]
    _topics_by_name: Mapping[str, TopicImage]
    _configs: Mapping[tuple[int, str], Mapping[str, str]]
    _producer_ids: tuple[int, int, int]
    _scram: ScramImage
    _zk_migration_state: int
    _acls: Mapping[uuid.UUID, StandardAcl]
    _provenance: MetadataProvenance
    _partition_count: int
    _offline_partition_count: int
    _preferred_imbalance_count: int
    _no_electable_leader_count: int
    _indexes: _Indexes

    def __init__(
        self,
        *,
        features: Mapping[str, int] | None = None,
        brokers: Mapping[int, BrokerRegistration] | None = None,
        controllers: Mapping[int, ControllerRegistration] | None = None,
        topics: Iterable[TopicImage] = (),
        configs: Mapping[tuple[int, str], Mapping[str, str]] | None = None,
        producer_ids: tuple[int, int, int] = INITIAL_PRODUCER_IDS,
        zk_migration_state: int = 0,
        acls: Mapping[uuid.UUID, StandardAcl] | None = None,
        provenance: MetadataProvenance = EMPTY_PROVENANCE,
        scram: ScramImage | None = None,
    ) -> None:
        """Build an image from parts (copied), counting partitions from scratch: O(partitions).

        Replay builds images through ``MetadataDelta.apply`` instead, which is incremental.
        """
        by_id: dict[uuid.UUID, TopicImage] = {}
        by_name: dict[str, TopicImage] = {}
        for t in topics:
            t = TopicImage(name=t.name, id=t.id, partitions=MappingProxyType(dict(t.partitions)))
            by_id[t.id] = t
            by_name[t.name] = t
        if len(by_id) != len(by_name):
            raise ValueError("topic names and ids must be unique")
        counts = [0, 0, 0, 0]
        for t in by_id.values():
            for p in t.partitions.values():
                _count(counts, p, 1)
        self._init(
            features=MappingProxyType(dict(features or {})),
            brokers=MappingProxyType(dict(brokers or {})),
            controllers=MappingProxyType(dict(controllers or {})),
            topics_by_id=MappingProxyType(by_id),
            topics_by_name=MappingProxyType(by_name),
            configs=MappingProxyType({k: MappingProxyType(dict(v)) for k, v in (configs or {}).items() if v}),
            producer_ids=producer_ids,
            scram=ScramImage.EMPTY if scram is None else scram,
            zk_migration_state=zk_migration_state,
            acls=MappingProxyType(dict(acls or {})),
            provenance=provenance,
            counts=counts,
            indexes=_Indexes(),
        )

    def _init(
        self,
        *,
        features: Mapping[str, int],
        brokers: Mapping[int, BrokerRegistration],
        controllers: Mapping[int, ControllerRegistration],
        topics_by_id: Mapping[uuid.UUID, TopicImage],
        topics_by_name: Mapping[str, TopicImage],
        configs: Mapping[tuple[int, str], Mapping[str, str]],
        producer_ids: tuple[int, int, int],
        scram: ScramImage,
        zk_migration_state: int,
        acls: Mapping[uuid.UUID, StandardAcl],
        provenance: MetadataProvenance,
        counts: Sequence[int],
        indexes: _Indexes,
    ) -> None:
        object.__setattr__(self, "_features", features)
        object.__setattr__(self, "_brokers", brokers)
        object.__setattr__(self, "_controllers", controllers)
        object.__setattr__(self, "_topics_by_id", topics_by_id)
        object.__setattr__(self, "_topics_by_name", topics_by_name)
        object.__setattr__(self, "_configs", configs)
        object.__setattr__(self, "_producer_ids", producer_ids)
        object.__setattr__(self, "_scram", scram)
        object.__setattr__(self, "_zk_migration_state", zk_migration_state)
        object.__setattr__(self, "_acls", acls)
        object.__setattr__(self, "_provenance", provenance)
        object.__setattr__(self, "_partition_count", counts[0])
        object.__setattr__(self, "_offline_partition_count", counts[1])
        object.__setattr__(self, "_preferred_imbalance_count", counts[2])
        object.__setattr__(self, "_no_electable_leader_count", counts[3])
        object.__setattr__(self, "_indexes", indexes)

    @staticmethod
    def _build(**parts: Any) -> MetadataImage:
        # Named, not ``cls.__new__(cls)``: mypyc (the long sweeps' build) fails on the latter.
        image = MetadataImage.__new__(MetadataImage)
        image._init(**parts)
        return image

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"MetadataImage is immutable (cannot set {name})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"MetadataImage is immutable (cannot delete {name})")

    # -- fields -------------------------------------------------------------------------------------

    @property
    def features(self) -> Mapping[str, int]:
        """Finalized feature levels; a feature at level 0 is absent."""
        return self._features

    @property
    def brokers(self) -> Mapping[int, BrokerRegistration]:
        return self._brokers

    @property
    def controllers(self) -> Mapping[int, ControllerRegistration]:
        return self._controllers

    @property
    def topics_by_id(self) -> Mapping[uuid.UUID, TopicImage]:
        return self._topics_by_id

    @property
    def topics_by_name(self) -> Mapping[str, TopicImage]:
        return self._topics_by_name

    @property
    def configs(self) -> Mapping[tuple[int, str], Mapping[str, str]]:
        """(ConfigResourceType value, resource name) -> non-empty {key: value}."""
        return self._configs

    @property
    def producer_ids(self) -> tuple[int, int, int]:
        """(broker id, broker epoch, next producer id) of the last ProducerIdsRecord."""
        return self._producer_ids

    @property
    def scram(self) -> ScramImage:
        """SCRAM credentials: mechanism -> user -> (salt, stored key, server key, iterations)."""
        return self._scram

    @property
    def zk_migration_state(self) -> int:
        return self._zk_migration_state

    @property
    def acls(self) -> Mapping[uuid.UUID, StandardAcl]:
        """ACL id -> ACL (AccessControlEntryRecords not yet removed)."""
        return self._acls

    @property
    def provenance(self) -> MetadataProvenance:
        return self._provenance

    @property
    def partition_count(self) -> int:
        return self._partition_count

    @property
    def offline_partition_count(self) -> int:
        """Partitions with leader -1 (OfflinePartitionsCount)."""
        return self._offline_partition_count

    @property
    def preferred_imbalance_count(self) -> int:
        """Partitions whose leader is not replicas[0], leaderless ones included (``is_imbalanced``)."""
        return self._preferred_imbalance_count

    @property
    def no_electable_leader_count(self) -> int:
        """Partitions with no electable leader: ISR and ELR both empty (KIP-966's "electable
        leaders" = |ISR| + |ELR| is 0), so only an unclean election can give them a leader."""
        return self._no_electable_leader_count

    # -- helpers ------------------------------------------------------------------------------------

    @property
    def metadata_version(self) -> int:
        """The finalized metadata.version level; 0 when absent."""
        return self._features.get(METADATA_VERSION_FEATURE, 0)

    @property
    def topic_count(self) -> int:
        return len(self._topics_by_id)

    @property
    def fenced_broker_count(self) -> int:
        return sum(1 for b in self._brokers.values() if b.fenced)

    @property
    def active_broker_count(self) -> int:
        """Unfenced brokers, controlled shutdown included (Kafka's ActiveBrokerCount)."""
        return sum(1 for b in self._brokers.values() if not b.fenced)

    @property
    def controlled_shutdown_broker_count(self) -> int:
        return sum(1 for b in self._brokers.values() if b.in_controlled_shutdown)

    def partition(self, topic_id: uuid.UUID, partition_id: int) -> PartitionRegistration | None:
        topic = self._topics_by_id.get(topic_id)
        return None if topic is None else topic.partitions.get(partition_id)

    def topic(self, name: str) -> TopicImage | None:
        return self._topics_by_name.get(name)

    @property
    def is_empty(self) -> bool:
        """No state at all (provenance aside)."""
        return (
            not self._features
            and not self._brokers
            and not self._controllers
            and not self._topics_by_id
            and not self._configs
            and self._producer_ids == INITIAL_PRODUCER_IDS
            and self._scram.is_empty
            and self._zk_migration_state == 0
            and not self._acls
        )

    def with_provenance(self, provenance: MetadataProvenance) -> MetadataImage:
        """This image at another provenance (a control batch): shares everything, indexes too."""
        return self._replace(provenance=provenance)

    def _replace(self, **changes: Any) -> MetadataImage:
        parts: dict[str, Any] = {
            "features": self._features,
            "brokers": self._brokers,
            "controllers": self._controllers,
            "topics_by_id": self._topics_by_id,
            "topics_by_name": self._topics_by_name,
            "configs": self._configs,
            "producer_ids": self._producer_ids,
            "scram": self._scram,
            "zk_migration_state": self._zk_migration_state,
            "acls": self._acls,
            "provenance": self._provenance,
            "counts": (
                self._partition_count,
                self._offline_partition_count,
                self._preferred_imbalance_count,
                self._no_electable_leader_count,
            ),
            "indexes": self._indexes,
        }
        parts.update(changes)
        return MetadataImage._build(**parts)

    def iter_partitions(self) -> Iterator[tuple[TopicImage, int, PartitionRegistration]]:
        """Every partition, by topic name then partition id."""
        by_name = self._topics_by_name
        for name in sorted(by_name):
            topic = by_name[name]
            parts = topic.partitions
            for pid in sorted(parts):
                yield topic, pid, parts[pid]

    # -- indexes (spec 1.6) -------------------------------------------------------------------------
    #
    # Built lazily: the first query of a kind after the topics changed costs one pass over all
    # partitions (O(P), about 0.1 s per 100k partitions); later queries on the same image, or on
    # an image that differs only in brokers, features, configs or provenance, are dict lookups.
    # Results are sorted by topic name, then partition id.

    def partitions_with_isr_member(self, broker_id: int) -> tuple[TopicIdPartition, ...]:
        return self._by_broker(_IndexKind.ISR).get(broker_id, _EMPTY_TIPS)

    def partitions_led_by(self, broker_id: int) -> tuple[TopicIdPartition, ...]:
        return self._by_broker(_IndexKind.LEADER).get(broker_id, _EMPTY_TIPS)

    def partitions_with_elr_member(self, broker_id: int) -> tuple[TopicIdPartition, ...]:
        return self._by_broker(_IndexKind.ELR).get(broker_id, _EMPTY_TIPS)

    def leaderless_partitions(self) -> tuple[TopicIdPartition, ...]:
        """Partitions with leader -1 (with or without an ELR to wait for)."""
        return self._list(_IndexKind.LEADERLESS, lambda p: p.leader == NO_LEADER)

    def imbalanced_partitions(self) -> tuple[TopicIdPartition, ...]:
        """Partitions with leader != replicas[0], leaderless ones included (``is_imbalanced``)."""
        return self._list(_IndexKind.IMBALANCED, is_imbalanced)

    def reassigning_partitions(self) -> tuple[TopicIdPartition, ...]:
        """Partitions with adding or removing replicas."""
        return self._list(_IndexKind.REASSIGNING, lambda p: bool(p.adding_replicas or p.removing_replicas))

    def _by_broker(self, kind: _IndexKind) -> dict[int, tuple[TopicIdPartition, ...]]:
        cache = self._indexes.by_broker
        found = cache.get(kind)
        if found is not None:
            return found
        # One pass builds the three broker indexes together: the controller usually needs more
        # than one of them for the same image (fencing: ISR and ELR; shutdown: leader and ISR).
        isr: dict[int, list[TopicIdPartition]] = {}
        led: dict[int, list[TopicIdPartition]] = {}
        elr: dict[int, list[TopicIdPartition]] = {}
        for topic, pid, p in self.iter_partitions():
            tip = TopicIdPartition(topic.id, pid)
            for b in p.isr:
                isr.setdefault(b, []).append(tip)
            for b in p.elr:
                elr.setdefault(b, []).append(tip)
            if p.leader >= 0:
                led.setdefault(p.leader, []).append(tip)
        for k, lists in ((_IndexKind.ISR, isr), (_IndexKind.LEADER, led), (_IndexKind.ELR, elr)):
            cache[k] = {b: tuple(v) for b, v in lists.items()}
        return cache[kind]

    def _list(
        self, kind: _IndexKind, keep: Callable[[PartitionRegistration], bool]
    ) -> tuple[TopicIdPartition, ...]:
        cache = self._indexes.lists
        found = cache.get(kind)
        if found is None:
            found = tuple(TopicIdPartition(t.id, pid) for t, pid, p in self.iter_partitions() if keep(p))
            cache[kind] = found
        return found

    # -- equality -----------------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, MetadataImage):
            return NotImplemented
        return self._provenance == other._provenance and image_equal(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"MetadataImage(offset={self._provenance.last_offset}, epoch={self._provenance.last_epoch}, "
            f"mv={self.metadata_version}, brokers={sorted(self._brokers)}, "
            f"controllers={sorted(self._controllers)}, topics={len(self._topics_by_id)}, "
            f"partitions={self._partition_count}, configs={len(self._configs)})"
        )


def _count(counts: list[int], p: PartitionRegistration, sign: int) -> None:
    counts[0] += sign
    if p.leader == NO_LEADER:
        counts[1] += sign
    if p.leader != (p.replicas[0] if p.replicas else NO_LEADER):
        counts[2] += sign
    if not p.isr and not p.elr:
        counts[3] += sign


MetadataImage.EMPTY = MetadataImage()


def _without_registration_offsets(brokers: Mapping[int, BrokerRegistration]) -> dict[int, BrokerRegistration]:
    return {k: dataclasses.replace(b, registration_offset=-1) for k, b in brokers.items()}


def image_equal(
    a: MetadataImage,
    b: MetadataImage,
    *,
    ignore_provenance: bool = True,
    ignore_registration_offsets: bool = False,
) -> bool:
    """Whether two images hold the same metadata.

    Args:
        ignore_provenance: do not compare the provenance (offset, epoch, append time).
        ignore_registration_offsets: do not compare brokers' registration offsets. Set it when one
            side was loaded from a snapshot: a snapshot cannot say at which offset a broker
            registered, so its brokers take the snapshot's last contained offset (as in Kafka).

    Cost: O(topics) when the images share structure (topic images are compared by identity first),
    else O(partitions), about 0.1 s for two unrelated images of 100k partitions.
    """
    if a is b:
        return True
    if not ignore_provenance and a.provenance != b.provenance:
        return False
    if (
        a.partition_count != b.partition_count
        or a.producer_ids != b.producer_ids
        or a.zk_migration_state != b.zk_migration_state
        or a.features != b.features
        or a.controllers != b.controllers
        or a.configs != b.configs
        or a.scram != b.scram
        or a.acls != b.acls
    ):
        return False
    if ignore_registration_offsets:
        if _without_registration_offsets(a.brokers) != _without_registration_offsets(b.brokers):
            return False
    elif a.brokers != b.brokers:
        return False
    return a.topics_by_id == b.topics_by_id


def image_differences(
    a: MetadataImage,
    b: MetadataImage,
    *,
    ignore_provenance: bool = True,
    ignore_registration_offsets: bool = False,
    limit: int = 20,
) -> list[str]:
    """Human-readable differences between two images (at most ``limit``), for invariant reports."""
    out: list[str] = []

    def diff_maps(what: str, x: Mapping[Any, Any], y: Mapping[Any, Any]) -> None:
        for key in sorted(set(x) | set(y), key=repr):
            if len(out) >= limit:
                return
            vx, vy = x.get(key), y.get(key)
            if vx != vy:
                out.append(f"{what}[{key!r}]: {vx!r} != {vy!r}")

    if not ignore_provenance and a.provenance != b.provenance:
        out.append(f"provenance: {a.provenance!r} != {b.provenance!r}")
    diff_maps("features", a.features, b.features)
    if ignore_registration_offsets:
        diff_maps(
            "brokers", _without_registration_offsets(a.brokers), _without_registration_offsets(b.brokers)
        )
    else:
        diff_maps("brokers", a.brokers, b.brokers)
    diff_maps("controllers", a.controllers, b.controllers)
    diff_maps("configs", a.configs, b.configs)
    diff_maps("acls", a.acls, b.acls)
    if a.producer_ids != b.producer_ids:
        out.append(f"producer_ids: {a.producer_ids} != {b.producer_ids}")
    if a.scram != b.scram:
        out.append(f"scram: {a.scram!r} != {b.scram!r}")
    if a.zk_migration_state != b.zk_migration_state:
        out.append(f"zk_migration_state: {a.zk_migration_state} != {b.zk_migration_state}")
    for tid in sorted(set(a.topics_by_id) | set(b.topics_by_id)):
        if len(out) >= limit:
            break
        ta, tb = a.topics_by_id.get(tid), b.topics_by_id.get(tid)
        if ta is tb or ta == tb:
            continue
        if ta is None or tb is None or ta.name != tb.name:
            name_a = None if ta is None else ta.name
            name_b = None if tb is None else tb.name
            out.append(f"topic {tid}: {name_a!r} != {name_b!r}")
            continue
        diff_maps(f"topic {ta.name!r} partition", ta.partitions, tb.partitions)
    return out[:limit]


# ---------------------------------------------------------------------------------------------------
# Record -> value conversions


def _endpoints(endpoints: Iterable[Any]) -> tuple[Endpoint, ...]:
    return tuple(
        Endpoint(name=e.name, host=e.host, port=e.port, security_protocol=e.security_protocol)
        for e in endpoints
    )


def _features(features: Iterable[Any]) -> tuple[tuple[str, int, int], ...]:
    return tuple((f.name, f.min_supported_version, f.max_supported_version) for f in features)


# Equal tuples (replica lists, ISRs, directory lists) shared between partitions: memory only, never
# behaviour. A typical cluster has few distinct replica sets, and each decoded directory uuid is
# otherwise its own ~100-byte object, so sharing cuts an image's size per partition about in half.
TupleCache = dict[tuple[Any, ...], tuple[Any, ...]]
_TUPLE_CACHE_LIMIT: Final = 1 << 16


def _share(cache: TupleCache, values: Iterable[Any]) -> tuple[Any, ...]:
    t = tuple(values)
    if not t:
        return ()
    return cache.setdefault(t, t)


def _share_opt(cache: TupleCache, values: Iterable[Any] | None) -> tuple[Any, ...] | None:
    return None if values is None else _share(cache, values)


def partition_from_record(data: Any, cache: TupleCache | None = None) -> PartitionRegistration:
    """The PartitionRegistration a PartitionRecord describes (Kafka's record constructor).

    A record older than directory assignment (v0, or an empty list) leaves ``directories`` empty,
    which ``PartitionRegistration`` documents as "before MV 3.7-IV2" (Kafka fills in MIGRATING
    ids instead; the two are equivalent). A null ELR/LKE is empty.

    Args:
        cache: reuse equal tuples from (and add new ones to) this table.

    Raises:
        ValueError: Directories is non-empty and not one per replica (Kafka's checkDirectories).
    """
    c: TupleCache = {} if cache is None else cache
    replicas = _share(c, data.replicas)
    directories = _share(c, data.directories)
    if directories and len(directories) != len(replicas):
        raise ValueError(f"{len(directories)} directories for {len(replicas)} replicas")
    return PartitionRegistration(
        replicas=replicas,
        directories=directories,
        isr=_share(c, data.isr),
        removing_replicas=_share(c, data.removing_replicas),
        adding_replicas=_share(c, data.adding_replicas),
        elr=_share(c, data.eligible_leader_replicas or ()),
        last_known_elr=_share(c, data.last_known_elr or ()),
        leader=data.leader,
        leader_recovery_state=data.leader_recovery_state,
        leader_epoch=data.leader_epoch,
        partition_epoch=data.partition_epoch,
    )


def partition_change_from_record(data: Any, cache: TupleCache | None = None) -> PartitionChange:
    """The PartitionChange a PartitionChangeRecord carries (list fields as tuples, null = unchanged).

    An empty Directories list also means "unchanged", as Kafka's ``PartitionRegistration.merge``
    reads it (only a non-empty list replaces the directories).
    """
    c: TupleCache = {} if cache is None else cache
    return PartitionChange(
        topic_id=data.topic_id,
        partition_id=data.partition_id,
        isr=_share_opt(c, data.isr),
        leader=data.leader,
        replicas=_share_opt(c, data.replicas),
        removing_replicas=_share_opt(c, data.removing_replicas),
        adding_replicas=_share_opt(c, data.adding_replicas),
        leader_recovery_state=data.leader_recovery_state,
        elr=_share_opt(c, data.eligible_leader_replicas),
        last_known_elr=_share_opt(c, data.last_known_elr),
        directories=_share(c, data.directories) if data.directories else None,
    )


# ---------------------------------------------------------------------------------------------------
# The delta


class _TopicChange:
    """A topic created or changed in a delta: the base topic (None if created here) and the
    partitions set in this delta, which override the base topic's."""

    __slots__ = ("base", "id", "name", "partitions")

    def __init__(self, name: str, topic_id: uuid.UUID, base: TopicImage | None) -> None:
        self.name = name
        self.id = topic_id
        self.base = base
        self.partitions: dict[int, PartitionRegistration] = {}

    def get(self, partition_id: int) -> PartitionRegistration | None:
        p = self.partitions.get(partition_id)
        if p is None and self.base is not None:
            p = self.base.partitions.get(partition_id)
        return p

    def current_ids(self) -> list[int]:
        if self.base is None:
            return sorted(self.partitions)
        return sorted(set(self.base.partitions) | set(self.partitions))


class MetadataDelta:
    """Records replayed on top of ``image``; ``apply`` makes the next image.

    Lifecycle: construct on an image, ``replay`` records in offset order, ``apply`` (any number of
    times; the delta stays usable and ``apply`` never hands out its own mutable state).

    ``replay`` checks a record completely before changing anything, so a ``ReplayError`` leaves
    the delta as it was before that record. Copy-on-write: the brokers, features, controllers and
    configs maps are copied on their first change; a topic's partitions are overlaid per topic.
    """

    def __init__(self, image: MetadataImage, *, tuple_cache: TupleCache | None = None) -> None:
        """Args:
        tuple_cache: a table of shared tuples to reuse across deltas (see ``TupleCache``);
            the loader keeps one. Saves memory only; never changes a result.
        """
        self._image = image
        if tuple_cache is None:
            tuple_cache = {}
        elif len(tuple_cache) > _TUPLE_CACHE_LIMIT:
            tuple_cache.clear()  # bounded: a churned cluster must not grow it forever
        self._tuples = tuple_cache
        self._features: dict[str, int] | None = None
        self._brokers: dict[int, BrokerRegistration] | None = None
        self._controllers: dict[int, ControllerRegistration] | None = None
        self._configs: dict[tuple[int, str], Mapping[str, str]] | None = None
        self._copied_configs: set[tuple[int, str]] = set()
        self._producer_ids = image.producer_ids
        # (mechanism, user) -> new credential, or None for removed.
        self._scram: dict[tuple[ScramMechanism, str], ScramCredential | None] = {}
        self._zk_migration_state = image.zk_migration_state
        self._acls: dict[uuid.UUID, StandardAcl] | None = None
        # Topics created or changed here, by id; base-image topics removed here.
        self._changes: dict[uuid.UUID, _TopicChange] = {}
        self._new_names: dict[str, uuid.UUID] = {}
        self._deleted: set[uuid.UUID] = set()
        # A snapshot load: the delta is built on EMPTY and stands for replacing this image.
        self.replaced: MetadataImage | None = None

    @property
    def image(self) -> MetadataImage:
        """The image this delta applies to."""
        return self._image

    @property
    def previous(self) -> MetadataImage:
        """The image the published result follows: ``replaced`` for a snapshot load, else ``image``."""
        return self._image if self.replaced is None else self.replaced

    @property
    def has_topic_changes(self) -> bool:
        return bool(self._changes or self._deleted or self.replaced is not None)

    @property
    def topic_names_changed(self) -> bool:
        """Whether the result may name other topics than ``previous`` (created, deleted, or a
        snapshot loaded); partition changes alone keep the names."""
        return bool(self._new_names or self._deleted or self.replaced is not None)

    # -- what changed (for publishers: kraft.metadata.publisher) --------------------------------------

    def changed_partitions(self) -> Iterator[tuple[TopicIdPartition, str, PartitionRegistration]]:
        """Every partition set in this delta, as (topic id and partition, topic name, registration),
        in replay order of topics and partition order within a topic. For a snapshot load, every
        partition of the snapshot."""
        for topic_id, change in self._changes.items():
            for partition_id in sorted(change.partitions):
                yield TopicIdPartition(topic_id, partition_id), change.name, change.partitions[partition_id]

    def deleted_topics(self) -> list[TopicImage]:
        """The topics of ``previous`` that the result no longer has (deleted, or absent from a
        loaded snapshot; a topic recreated under the same name has a new id and counts as gone)."""
        if self.replaced is None:
            return [self._image.topics_by_id[t] for t in sorted(self._deleted)]
        return [t for i, t in sorted(self.replaced.topics_by_id.items()) if i not in self._changes]

    # -- current view -------------------------------------------------------------------------------

    def _base_topic(self, topic_id: uuid.UUID) -> TopicImage | None:
        if topic_id in self._deleted:
            return None
        return self._image.topics_by_id.get(topic_id)

    def _topic_name(self, topic_id: uuid.UUID) -> str | None:
        change = self._changes.get(topic_id)
        if change is not None:
            return change.name
        base = self._base_topic(topic_id)
        return None if base is None else base.name

    def _topic_id_by_name(self, name: str) -> uuid.UUID | None:
        topic_id = self._new_names.get(name)
        if topic_id is not None:
            return topic_id
        base = self._image.topics_by_name.get(name)
        if base is None or base.id in self._deleted:
            return None
        return base.id

    def _topic_change(self, topic_id: uuid.UUID) -> _TopicChange | None:
        """The (possibly new) overlay of an existing topic; None if the topic does not exist."""
        change = self._changes.get(topic_id)
        if change is None:
            base = self._base_topic(topic_id)
            if base is None:
                return None
            change = _TopicChange(base.name, topic_id, base)
            self._changes[topic_id] = change
        return change

    def _current_topic_ids(self) -> list[uuid.UUID]:
        ids = [t for t in self._image.topics_by_id if t not in self._deleted and t not in self._changes]
        ids.extend(self._changes)
        return ids

    def _brokers_w(self) -> dict[int, BrokerRegistration]:
        if self._brokers is None:
            self._brokers = dict(self._image.brokers)
        return self._brokers

    def _current_brokers(self) -> Mapping[int, BrokerRegistration]:
        return self._image.brokers if self._brokers is None else self._brokers

    # -- replay -------------------------------------------------------------------------------------

    def replay(self, record: ApiMessageAndVersion, offset: int) -> None:
        """Apply one committed record at ``offset`` to this delta (spec 1.6).

        Raises:
            ReplayError: the record breaks a replay rule (message: offset, record type, rule).
            KraftError: a transaction marker (the loader handles those, never the delta).
        """
        t = record.type
        data = record.data
        if t in _TRANSACTION_MARKERS:
            raise KraftError(f"{t.record_name} at offset {offset} must go to MetadataLoader, not a delta")

        def fail(rule: str) -> ReplayError:
            return ReplayError(offset, t.record_name, rule)

        match t:
            case _T.REGISTER_BROKER:
                self._brokers_w()[data.broker_id] = BrokerRegistration(
                    id=data.broker_id,
                    epoch=data.broker_epoch,
                    incarnation_id=data.incarnation_id,
                    listeners=_endpoints(data.end_points),
                    supported_features=_features(data.features),
                    rack=data.rack,
                    fenced=data.fenced,
                    in_controlled_shutdown=data.in_controlled_shutdown,
                    is_migrating_zk_broker=data.is_migrating_zk_broker,
                    directories=tuple(data.log_dirs),
                    registration_offset=offset,
                )
            case _T.UNREGISTER_BROKER:
                self._registered(data.broker_id, data.broker_epoch, fail)
                del self._brokers_w()[data.broker_id]
            case _T.FENCE_BROKER | _T.UNFENCE_BROKER:
                broker = self._registered(data.id, data.epoch, fail)
                fenced = t is _T.FENCE_BROKER
                self._brokers_w()[data.id] = dataclasses.replace(broker, fenced=fenced)
            case _T.BROKER_REGISTRATION_CHANGE:
                self._replay_broker_change(data, fail)
            case _T.TOPIC:
                self._replay_topic(data, fail)
            case _T.PARTITION:
                change = self._topic_change(data.topic_id)
                if change is None:
                    raise fail(f"unknown topic id {data.topic_id}")
                try:
                    partition = partition_from_record(data, self._tuples)
                except ValueError as e:
                    raise fail(f"partition {data.partition_id} of {change.name!r}: {e}") from None
                change.partitions[data.partition_id] = partition
            case _T.PARTITION_CHANGE:
                change = self._topic_change(data.topic_id)
                if change is None:
                    raise fail(f"unknown topic id {data.topic_id}")
                current = change.get(data.partition_id)
                if current is None:
                    raise fail(f"unknown partition {data.partition_id} of topic {change.name!r}")
                try:
                    merged = current.merge(partition_change_from_record(data, self._tuples))
                except (ValueError, KraftError) as e:
                    raise fail(f"partition {data.partition_id} of {change.name!r}: {e}") from None
                change.partitions[data.partition_id] = merged
            case _T.REMOVE_TOPIC:
                self._replay_remove_topic(data.topic_id, fail)
            case _T.CONFIG:
                self._replay_config(data.resource_type, data.resource_name, data.name, data.value)
            case _T.FEATURE_LEVEL:
                if self._features is None:
                    self._features = dict(self._image.features)
                if data.feature_level == 0:
                    self._features.pop(data.name, None)
                else:
                    self._features[data.name] = data.feature_level
            case _T.PRODUCER_IDS:
                current_next = self._producer_ids[2]
                # Kafka's ProducerIdControlManager.replay: the next id must strictly advance, or
                # two brokers would be handed the same block.
                if data.next_producer_id <= current_next:
                    raise fail(
                        f"next producer id {data.next_producer_id} does not advance past {current_next}"
                    )
                self._producer_ids = (data.broker_id, data.broker_epoch, data.next_producer_id)
            case _T.ZK_MIGRATION_STATE:
                self._zk_migration_state = data.zk_migration_state
            case _T.NO_OP:
                pass
            case _T.REGISTER_CONTROLLER:
                if self._controllers is None:
                    self._controllers = dict(self._image.controllers)
                self._controllers[data.controller_id] = ControllerRegistration(
                    id=data.controller_id,
                    incarnation_id=data.incarnation_id,
                    zk_migration_ready=data.zk_migration_ready,
                    listeners=_endpoints(data.end_points),
                    supported_features=_features(data.features),
                )
            case _T.CLEAR_ELR:
                self._replay_clear_elr(data.topic_name, fail)
            case _T.USER_SCRAM_CREDENTIAL:
                mechanism = self._scram_mechanism(data.mechanism, fail)
                self._scram[(mechanism, data.name)] = ScramCredential(
                    salt=bytes(data.salt),
                    stored_key=bytes(data.stored_key),
                    server_key=bytes(data.server_key),
                    iterations=data.iterations,
                )
            case _T.REMOVE_USER_SCRAM_CREDENTIAL:
                mechanism = self._scram_mechanism(data.mechanism, fail)
                key = (mechanism, data.name)
                existing = self._scram[key] if key in self._scram else self._image.scram.get(*key)
                if existing is None:
                    # Kafka's ScramControlManager.replay refuses it too.
                    raise fail(f"no {mechanism.mechanism_name} credential for user {data.name!r} to remove")
                self._scram[key] = None
            case _T.ACCESS_CONTROL_ENTRY:
                # Kafka's AclsDelta: an id is (re)set; the controller never writes an ACL twice
                # (AclControlManager), and replay, like Kafka's, does not second-guess it.
                self._acls_w()[data.id] = StandardAcl.from_record(data)
            case _T.REMOVE_ACCESS_CONTROL_ENTRY:
                acls = self._acls_w()
                # Kafka's AclsDelta: removing an id that is neither in the image nor the delta breaks the log.
                if data.id not in acls:
                    raise fail(f"no ACL with id {data.id}")
                del acls[data.id]
            case _:  # pragma: no cover - every modelled type is handled above
                raise fail("record type not handled by replay")

    @staticmethod
    def _scram_mechanism(code: int, fail: Callable[[str], ReplayError]) -> ScramMechanism:
        mechanism = ScramMechanism.from_type(code)
        if mechanism is ScramMechanism.UNKNOWN:
            raise fail(f"unknown SCRAM mechanism {code}")
        return mechanism

    def _registered(
        self, broker_id: int, epoch: int, fail: Callable[[str], ReplayError]
    ) -> BrokerRegistration:
        broker = self._current_brokers().get(broker_id)
        if broker is None:
            raise fail(f"broker {broker_id} is not registered")
        if broker.epoch != epoch:
            raise fail(f"broker {broker_id} epoch {epoch} does not match its registered epoch {broker.epoch}")
        return broker

    def _replay_broker_change(self, data: Any, fail: Callable[[str], ReplayError]) -> None:
        broker = self._registered(data.broker_id, data.broker_epoch, fail)
        fenced = broker.fenced
        match data.fenced:
            case -1:
                fenced = False
            case 1:
                fenced = True
            case 0:
                pass
            case other:
                raise fail(f"broker {broker.id}: Fenced={other} (valid: -1 unfence, 0 unchanged, 1 fence)")
        in_controlled_shutdown = broker.in_controlled_shutdown
        match data.in_controlled_shutdown:
            case 1:
                in_controlled_shutdown = True
            case 0:
                pass
            case other:
                raise fail(f"broker {broker.id}: InControlledShutdown={other} (valid: 0 none, 1 entering)")
        directories = tuple(data.log_dirs) if data.log_dirs else broker.directories
        self._brokers_w()[broker.id] = dataclasses.replace(
            broker, fenced=fenced, in_controlled_shutdown=in_controlled_shutdown, directories=directories
        )

    def _replay_topic(self, data: Any, fail: Callable[[str], ReplayError]) -> None:
        name, topic_id = data.name, data.topic_id
        existing = self._topic_id_by_name(name)
        if existing is not None:
            raise fail(f"topic {name!r} already exists (id {existing})")
        other = self._topic_name(topic_id)
        if other is not None:
            raise fail(f"topic id {topic_id} is already used by topic {other!r}")
        self._changes[topic_id] = _TopicChange(name, topic_id, None)
        self._new_names[name] = topic_id

    def _replay_remove_topic(self, topic_id: uuid.UUID, fail: Callable[[str], ReplayError]) -> None:
        name = self._topic_name(topic_id)
        if name is None:
            raise fail(f"unknown topic id {topic_id}")
        change = self._changes.pop(topic_id, None)
        if change is not None and change.base is None:
            del self._new_names[name]
        else:
            self._deleted.add(topic_id)
        # RemoveTopicRecord also drops the topic's configs (Kafka's ConfigurationsDelta does).
        key = (int(ConfigResourceType.TOPIC), name)
        configs = self._image.configs if self._configs is None else self._configs
        if key in configs:
            self._configs_w().pop(key, None)
            self._copied_configs.discard(key)

    def _configs_w(self) -> dict[tuple[int, str], Mapping[str, str]]:
        if self._configs is None:
            self._configs = dict(self._image.configs)
        return self._configs

    def _replay_config(self, resource_type: int, resource_name: str, name: str, value: str | None) -> None:
        configs = self._configs_w()
        key = (resource_type, resource_name)
        current = configs.get(key)
        if key in self._copied_configs:
            assert isinstance(current, dict)
            entries = current
        else:
            if value is None and (current is None or name not in current):
                return
            entries = dict(current or {})
            configs[key] = entries
            self._copied_configs.add(key)
        if value is None:
            entries.pop(name, None)
        else:
            entries[name] = value
        if not entries:
            del configs[key]
            self._copied_configs.discard(key)

    def _acls_w(self) -> dict[uuid.UUID, StandardAcl]:
        if self._acls is None:
            self._acls = dict(self._image.acls)
        return self._acls

    def _replay_clear_elr(self, topic_name: str, fail: Callable[[str], ReplayError]) -> None:
        if topic_name:
            topic_id = self._topic_id_by_name(topic_name)
            if topic_id is None:
                raise fail(f"unknown topic {topic_name!r}")
            topic_ids = [topic_id]
        else:
            topic_ids = self._current_topic_ids()
        for topic_id in topic_ids:
            change = self._changes.get(topic_id)
            if change is None:
                base = self._base_topic(topic_id)
                assert base is not None
                if not any(p.elr or p.last_known_elr for p in base.partitions.values()):
                    continue  # leave untouched topics out of the delta
                change = self._topic_change(topic_id)
                assert change is not None
            for pid in change.current_ids():
                p = change.get(pid)
                assert p is not None
                if p.elr or p.last_known_elr:
                    change.partitions[pid] = p.merge(
                        PartitionChange(topic_id=topic_id, partition_id=pid, elr=(), last_known_elr=())
                    )

    # -- apply --------------------------------------------------------------------------------------

    def apply(self, provenance: MetadataProvenance) -> MetadataImage:
        """The image with every replayed record applied, at ``provenance``.

        Cost: O(changed partitions + topics + brokers + config resources); untouched topics (and
        their partition maps) are shared with the base image.
        """
        base = self._image
        parts: dict[str, Any] = {"provenance": provenance}
        if self._features is not None:
            parts["features"] = MappingProxyType(dict(self._features))
        if self._brokers is not None:
            parts["brokers"] = MappingProxyType(dict(self._brokers))
        if self._controllers is not None:
            parts["controllers"] = MappingProxyType(dict(self._controllers))
        if self._configs is not None:
            parts["configs"] = MappingProxyType(
                {
                    k: MappingProxyType(dict(v)) if k in self._copied_configs else v
                    for k, v in self._configs.items()
                }
            )
        parts["producer_ids"] = self._producer_ids
        if self._scram:
            parts["scram"] = base.scram.with_changes(self._scram)
        parts["zk_migration_state"] = self._zk_migration_state
        if self._acls is not None:
            parts["acls"] = MappingProxyType(dict(self._acls))
        if self._changes or self._deleted:
            counts = [
                base.partition_count,
                base.offline_partition_count,
                base.preferred_imbalance_count,
                base.no_electable_leader_count,
            ]
            by_id = dict(base.topics_by_id)
            by_name = dict(base.topics_by_name)
            for topic_id in self._deleted:
                old = by_id.pop(topic_id)
                del by_name[old.name]
                for p in old.partitions.values():
                    _count(counts, p, -1)
            for topic_id, change in self._changes.items():
                if change.base is None:
                    partitions = dict(change.partitions)
                    for p in partitions.values():
                        _count(counts, p, 1)
                else:
                    partitions = dict(change.base.partitions)
                    for pid, p in change.partitions.items():
                        prev = partitions.get(pid)
                        if prev is not None:
                            _count(counts, prev, -1)
                        _count(counts, p, 1)
                        partitions[pid] = p
                topic = TopicImage(name=change.name, id=topic_id, partitions=MappingProxyType(partitions))
                by_id[topic_id] = topic
                by_name[change.name] = topic
            parts["topics_by_id"] = MappingProxyType(by_id)
            parts["topics_by_name"] = MappingProxyType(by_name)
            parts["counts"] = counts
            parts["indexes"] = _Indexes()
        return base._replace(**parts)


# ---------------------------------------------------------------------------------------------------
# The loader


# What a loader publishes to (``kraft.metadata.publisher.MetadataPublisher.publish``).
Publisher = Callable[["MetadataDelta", MetadataImage], None]


class MetadataLoader:
    """Turns committed batches into published images (Kafka's ``MetadataLoader``).

    Lifecycle: start from ``image`` (EMPTY by default) or ``load_snapshot``; then one
    ``handle_batch`` / ``handle_control_batch`` per committed batch, in offset order.

    Metadata transactions (KIP-868, MV >= 13): records between BeginTransactionRecord and
    EndTransactionRecord are published together; AbortTransactionRecord discards them. Records of
    the same batch before a Begin are published first (at the offset before the Begin), as Kafka's
    ``MetadataBatchLoader`` does, so an abort never discards them. While a transaction is open no
    image is published and the provenance stays before the transaction.

    A ``ReplayError`` is fatal: the loader refuses further use (the node must stop; Kafka counts a
    MetadataErrorCount and its image is no longer trustworthy either).
    """

    def __init__(self, image: MetadataImage = MetadataImage.EMPTY) -> None:
        self._image = image
        self._transaction: MetadataDelta | None = None
        self._failed: ReplayError | None = None
        self._tuples: TupleCache = {}
        self._publishers: list[Publisher] = []

    def install_publisher(self, publisher: Publisher) -> None:
        """Call ``publisher(delta, image)`` with every image published from now on (Kafka's
        ``MetadataLoader.installPublishers``; ``kraft.metadata.publisher`` says what they may do)."""
        self._publishers.append(publisher)

    def _publish(self, delta: MetadataDelta, image: MetadataImage) -> MetadataImage:
        self._image = image
        for publish in self._publishers:
            publish(delta, image)
        return image

    @property
    def image(self) -> MetadataImage:
        """The last published image."""
        return self._image

    @property
    def in_transaction(self) -> bool:
        return self._transaction is not None

    def _check_usable(self) -> None:
        if self._failed is not None:
            raise KraftError(f"metadata loader stopped after an earlier replay error: {self._failed}")

    def handle_batch(
        self, base_offset: int, epoch: int, append_ms: int, records: Sequence[bytes]
    ) -> MetadataImage | None:
        """Replay one committed data batch; record i is at offset ``base_offset + i``.

        Returns:
            The new image, or None when nothing was published (a transaction is still open and
            nothing before it in this batch, or the batch is empty).

        Raises:
            ReplayError: an undecodable record, a transaction marker out of place, or a record that
                breaks a replay rule. The loader is unusable afterwards.
        """
        self._check_usable()
        if not records:
            return None
        try:
            return self._handle_batch(base_offset, epoch, append_ms, records)
        except ReplayError as e:
            self._failed = e
            raise

    def _handle_batch(
        self, base_offset: int, epoch: int, append_ms: int, records: Sequence[bytes]
    ) -> MetadataImage | None:
        start = self._image
        in_transaction = self._transaction is not None
        delta = self._transaction
        if delta is None:
            delta = MetadataDelta(self._image, tuple_cache=self._tuples)
        for index, raw in enumerate(records):
            offset = base_offset + index
            record = _decode(raw, offset)
            if record is None:
                continue
            match record.type:
                case _T.BEGIN_TRANSACTION:
                    if in_transaction:
                        raise ReplayError(offset, record.type.record_name, "a transaction is already open")
                    if offset > base_offset:
                        self._publish(
                            delta,
                            delta.apply(
                                MetadataProvenance(
                                    last_offset=offset - 1, last_epoch=epoch, last_append_ms=append_ms
                                )
                            ),
                        )
                    delta = MetadataDelta(self._image, tuple_cache=self._tuples)
                    in_transaction = True
                case _T.END_TRANSACTION:
                    if not in_transaction:
                        raise ReplayError(offset, record.type.record_name, "no transaction is open")
                    in_transaction = False
                case _T.ABORT_TRANSACTION:
                    if not in_transaction:
                        raise ReplayError(offset, record.type.record_name, "no transaction is open")
                    in_transaction = False
                    delta = MetadataDelta(self._image, tuple_cache=self._tuples)
                case _:
                    delta.replay(record, offset)
        if in_transaction:
            self._transaction = delta
            return None if self._image is start else self._image
        self._transaction = None
        last_offset = base_offset + len(records) - 1
        return self._publish(
            delta,
            delta.apply(
                MetadataProvenance(last_offset=last_offset, last_epoch=epoch, last_append_ms=append_ms)
            ),
        )

    def handle_control_batch(self, last_offset: int, epoch: int, append_ms: int) -> MetadataImage | None:
        """A control batch (leader change, voters): advances the provenance, unless a metadata
        transaction is open (then nothing is published until it ends)."""
        self._check_usable()
        if self._transaction is not None:
            return None
        provenance = MetadataProvenance(last_offset=last_offset, last_epoch=epoch, last_append_ms=append_ms)
        if not self._publishers:
            self._image = self._image.with_provenance(provenance)
            return self._image
        return self._publish(MetadataDelta(self._image), self._image.with_provenance(provenance))

    def adopt(self, image: MetadataImage, delta: MetadataDelta) -> None:
        """Take ``image`` as the result of the batch that was just committed, without replaying it.

        Only for an active controller whose own records were already replayed into ``image``
        (through ``delta``, built on the image before that batch, which equals the committed one but
        for its provenance) when it wrote them (Kafka's
        controller does not replay its own records either). The caller guarantees the batch held
        no transaction markers.

        Raises:
            KraftError: after an earlier replay error, or inside an open transaction.
        """
        self._check_usable()
        if self._transaction is not None:
            raise KraftError("cannot adopt an image inside an open metadata transaction")
        self._publish(delta, image)

    def load_snapshot(
        self, snapshot_offset: int, epoch: int, append_ms: int, records: Iterable[bytes]
    ) -> MetadataImage:
        """Replace the image with the snapshot ending at ``snapshot_offset`` (exclusive).

        Starts from EMPTY and drops any open transaction. Every record is replayed at the offset
        ``snapshot_offset - 1`` (Kafka's ``lastContainedLogOffset``), which thus becomes the
        registration offset of each broker in the snapshot; the image's provenance is
        (snapshot_offset - 1, epoch, append_ms).

        Raises:
            ReplayError: a record that cannot be decoded or replayed (its index in the snapshot is
                in the message). The loader is unusable afterwards.
        """
        self._check_usable()
        offset = snapshot_offset - 1
        delta = MetadataDelta(MetadataImage.EMPTY, tuple_cache=self._tuples)
        try:
            for index, raw in enumerate(records):
                try:
                    record = _decode(raw, offset)
                    if record is None:
                        continue
                    if record.type in _TRANSACTION_MARKERS:
                        raise ReplayError(offset, record.type.record_name, "transaction marker in a snapshot")
                    delta.replay(record, offset)
                except ReplayError as e:
                    raise ReplayError(
                        offset, e.record_type, f"{e.rule} (record {index} of snapshot {snapshot_offset})"
                    ) from e
        except ReplayError as e:
            self._failed = e
            raise
        self._transaction = None
        delta.replaced = self._image
        return self._publish(
            delta,
            delta.apply(MetadataProvenance(last_offset=offset, last_epoch=epoch, last_append_ms=append_ms)),
        )


def _decode(raw: bytes, offset: int) -> ApiMessageAndVersion | None:
    try:
        return decode_record(raw)
    except UnmodelledRecordError:
        return None  # ACLs, SCRAM, quotas, tokens: not modelled (spec 1.3)
    except CorruptRecordError as e:
        raise ReplayError(offset, "record", f"cannot decode: {e}") from None


# Built for every registration, topic and batch replayed: see kraft.common.fast_init.
speed_up_inits(Endpoint, BrokerRegistration, TopicImage, MetadataProvenance)
