"""The metadata image as a tree of named nodes, as Kafka's metadata shell shows it (spec 8.2).

Pure: no I/O, no clock. ``kraft metadata-shell`` navigates it; brokers and ``kraft.spark`` can
reuse the same paths and strings. The layout and the text of every leaf are Kafka's
(``org.apache.kafka.image.node.*`` and ``org.apache.kafka.shell.node.*`` in our snapshot)::

    /local/version                       kraft's version
    /local/commitId                      the build's commit id ("unknown" when not known)
    /image/provenance                    offset 42, epoch 3, time 2024-10-25T03:33:01.123Z[UTC]
    /image/features/metadataVersion      4.0-IV3
    /image/features/zkMigrationState     NONE
    /image/features/finalized_<name>     the level of each other finalized feature
    /image/cluster/brokers/<id>          BrokerRegistration(id=1, epoch=5, ...)
    /image/cluster/controllers/<id>      ControllerRegistration(id=3000, ...)
    /image/topics/byName/<name>/name     the topic name
    /image/topics/byName/<name>/id       the topic id (Kafka's base64 form)
    /image/topics/byName/<name>/<p>      PartitionRegistration(replicas=[1, 2], ...)
    /image/topics/byId/<id>/...          the same topic, by id
    /image/configs/<TYPE>[:<name>]/<key> a config value; TOPIC:orders, BROKER:1 and, for the
                                         cluster default broker resource, BROKER
    /image/producerIds/nextProducerId    the next producer id (-1 before the first block)

Additions (kraft only): ``/image/features/<name>`` also resolves, for any finalized feature
including ``metadata.version``, to its level as a number (it is not listed, so ``ls``, ``tree``
and ``find`` show exactly Kafka's children). Not shown: client quotas, ACLs, SCRAM credentials and
delegation tokens, which kraft does not model (spec 1.3).

Paths resolve as in Kafka's shell: relative to a working directory, ``.`` and ``..`` folded, and
each component may be a glob (``*``, ``?``, ``{a,b}``, ``\\`` escapes; Kafka's ``GlobComponent``).
Children are listed sorted as strings (so partition 10 comes before 2, as in Kafka).
"""

from __future__ import annotations

import datetime
import re
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from kraft.common.uuids import uuid_from_base64, uuid_to_base64
from kraft.metadata.image import (
    INITIAL_PRODUCER_IDS,
    METADATA_VERSION_FEATURE,
    BrokerRegistration,
    ControllerRegistration,
    Endpoint,
    MetadataImage,
    MetadataProvenance,
    TopicImage,
)
from kraft.metadata.partition import LeaderRecoveryState, PartitionRegistration
from kraft.metadata.records import MIGRATING_DIR_ID_INT, ConfigResourceType, MetadataVersion, SecurityProtocol
from kraft.metadata.scram import ScramMechanism

__all__ = [
    "Directory",
    "Leaf",
    "Node",
    "NodeMatch",
    "broker_registration_string",
    "config_resource_name",
    "controller_registration_string",
    "find_lines",
    "metadata_version_string",
    "node_to_json",
    "normalize_path",
    "partition_registration_string",
    "provenance_string",
    "resolve",
    "root_node",
    "tree_lines",
]

# Kafka's ZkMigrationState names by value.
_ZK_MIGRATION_STATES = {0: "NONE", 1: "MIGRATION", 2: "PRE_MIGRATION", 3: "POST_MIGRATION", 4: "ZK"}
# Kafka's DirectoryId.MIGRATING, which it fills in for a PartitionRecord without directories.
_MIGRATING_DIR = uuid.UUID(int=MIGRATING_DIR_ID_INT)
_INT16_MAX = 0x7FFF
# ConfigResource.Type in Kafka's declaration order: resourceFromName tries them in this order.
_CONFIG_TYPES = (
    ConfigResourceType.GROUP,
    ConfigResourceType.CLIENT_METRICS,
    ConfigResourceType.BROKER_LOGGER,
    ConfigResourceType.BROKER,
    ConfigResourceType.TOPIC,
    ConfigResourceType.UNKNOWN,
)
FINALIZED_PREFIX = "finalized_"


# ---------------------------------------------------------------------------------------------------
# Nodes


@dataclass(frozen=True, slots=True)
class Leaf:
    """A file: ``text`` is what ``cat`` prints (Kafka's string), ``value`` its JSON form."""

    text: str
    value: Any

    @property
    def is_directory(self) -> bool:
        return False


class Directory:
    """A directory whose children are computed on demand (an image can hold 100k partitions).

    Args:
        names: the listed child names (any order; callers sort).
        lookup: the child called ``name``, or None. May resolve names that ``names`` does not list.
    """

    __slots__ = ("_lookup", "_names")

    def __init__(self, names: Callable[[], Sequence[str]], lookup: Callable[[str], Node | None]) -> None:
        self._names = names
        self._lookup = lookup

    @property
    def is_directory(self) -> bool:
        return True

    def child_names(self) -> list[str]:
        """The children, sorted as Kafka's shell sorts them (``String::compareTo``)."""
        return sorted(self._names())

    def child(self, name: str) -> Node | None:
        return self._lookup(name)


Node = Leaf | Directory


def _fixed(children: dict[str, Callable[[], Node]]) -> Directory:
    def lookup(name: str) -> Node | None:
        make = children.get(name)
        return None if make is None else make()

    return Directory(lambda: list(children), lookup)


def root_node(image: MetadataImage, *, version: str, commit_id: str = "unknown") -> Directory:
    """``/``: ``local`` (this tool) and ``image`` (the metadata image)."""
    return _fixed(
        {
            "local": lambda: _fixed(
                {
                    "version": lambda: Leaf(version, version),
                    "commitId": lambda: Leaf(commit_id, commit_id),
                }
            ),
            "image": lambda: image_node(image),
        }
    )


def image_node(image: MetadataImage) -> Directory:
    """``/image`` (Kafka's ``MetadataImageNode``, without the parts kraft does not model)."""
    return _fixed(
        {
            "provenance": lambda: Leaf(
                provenance_string(image.provenance), _provenance_json(image.provenance)
            ),
            "features": lambda: _features_node(image),
            "cluster": lambda: _fixed(
                {
                    "brokers": lambda: _brokers_node(image),
                    "controllers": lambda: _controllers_node(image),
                }
            ),
            "topics": lambda: _fixed(
                {
                    "byName": lambda: _topics_by_name_node(image),
                    "byId": lambda: _topics_by_id_node(image),
                }
            ),
            "configs": lambda: _configs_node(image),
            "producerIds": lambda: _fixed({"nextProducerId": lambda: _next_producer_id(image)}),
            "scram": lambda: _scram_node(image),
        }
    )


# Kafka's ScramCredentialDataNode as its shell prints it (strict redaction): no salt, key or count.
SCRAM_CREDENTIAL_TEXT = (
    "ScramCredentialData(salt=[redacted], storedKey=[redacted], serverKey=[redacted], iterations=[redacted])"
)


def _scram_node(image: MetadataImage) -> Directory:
    """``/image/scram/<mechanism>/<user>`` (Kafka's ``ScramImageNode``): every mechanism is listed,
    each user's credential prints redacted."""
    mechanisms = [m for m in ScramMechanism if m is not ScramMechanism.UNKNOWN]

    def users_node(m: ScramMechanism) -> Directory:
        users = image.scram.mechanisms.get(m, {})

        def user(name: str) -> Node | None:
            return Leaf(SCRAM_CREDENTIAL_TEXT, SCRAM_CREDENTIAL_TEXT) if name in users else None

        return Directory(lambda: list(users), user)

    def lookup(name: str) -> Node | None:
        m = ScramMechanism.from_name(name)
        return None if m is None else users_node(m)

    return Directory(lambda: [m.mechanism_name for m in mechanisms], lookup)


def _next_producer_id(image: MetadataImage) -> Leaf:
    # Kafka's ProducerIdsImage.EMPTY has nextProducerId -1.
    next_id = -1 if image.producer_ids == INITIAL_PRODUCER_IDS else image.producer_ids[2]
    return Leaf(str(next_id), next_id)


def _features_node(image: MetadataImage) -> Directory:
    features = image.features
    others = [n for n in features if n != METADATA_VERSION_FEATURE]

    def names() -> list[str]:
        return ["metadataVersion", "zkMigrationState", *(FINALIZED_PREFIX + n for n in others)]

    def lookup(name: str) -> Node | None:
        if name == "metadataVersion":
            text = metadata_version_string(image.metadata_version)
            return Leaf(text, text)
        if name == "zkMigrationState":
            state = image.zk_migration_state
            text = _ZK_MIGRATION_STATES.get(state, str(state))
            return Leaf(text, text)
        if name.startswith(FINALIZED_PREFIX) and name[len(FINALIZED_PREFIX) :] in others:
            level = features[name[len(FINALIZED_PREFIX) :]]
            return Leaf(str(level), level)
        if name in features:  # kraft's unlisted alias: the level by the feature's own name
            return Leaf(str(features[name]), features[name])
        return None

    return Directory(names, lookup)


def _parse_int(name: str) -> int | None:
    # Java's Integer.valueOf: optional sign, decimal digits only.
    if not re.fullmatch(r"[+-]?[0-9]+", name):
        return None
    return int(name)


def _brokers_node(image: MetadataImage) -> Directory:
    def lookup(name: str) -> Node | None:
        broker_id = _parse_int(name)
        broker = None if broker_id is None else image.brokers.get(broker_id)
        if broker is None:
            return None
        return Leaf(broker_registration_string(broker), _broker_json(broker))

    return Directory(lambda: [str(b) for b in image.brokers], lookup)


def _controllers_node(image: MetadataImage) -> Directory:
    def lookup(name: str) -> Node | None:
        controller_id = _parse_int(name)
        controller = None if controller_id is None else image.controllers.get(controller_id)
        if controller is None:
            return None
        return Leaf(controller_registration_string(controller), _controller_json(controller))

    return Directory(lambda: [str(c) for c in image.controllers], lookup)


def _topic_node(topic: TopicImage) -> Directory:
    def names() -> list[str]:
        return ["name", "id", *(str(p) for p in topic.partitions)]

    def lookup(name: str) -> Node | None:
        if name == "name":
            return Leaf(topic.name, topic.name)
        if name == "id":
            text = uuid_to_base64(topic.id)
            return Leaf(text, text)
        partition_id = _parse_int(name)
        p = None if partition_id is None else topic.partitions.get(partition_id)
        if p is None:
            return None
        return Leaf(partition_registration_string(p), _partition_json(p))

    return Directory(names, lookup)


def _topics_by_name_node(image: MetadataImage) -> Directory:
    def lookup(name: str) -> Node | None:
        topic = image.topics_by_name.get(name)
        return None if topic is None else _topic_node(topic)

    return Directory(lambda: list(image.topics_by_name), lookup)


def _topics_by_id_node(image: MetadataImage) -> Directory:
    def lookup(name: str) -> Node | None:
        try:
            topic_id = uuid_from_base64(name)
        except ValueError:
            return None
        topic = image.topics_by_id.get(topic_id)
        return None if topic is None else _topic_node(topic)

    return Directory(lambda: [uuid_to_base64(t) for t in image.topics_by_id], lookup)


def config_resource_name(resource_type: int, resource_name: str) -> str:
    """Kafka's child name of a config resource: ``TOPIC:orders``, ``BROKER:1``, and the bare type
    (``BROKER``) for a default resource (empty name)."""
    try:
        type_name = ConfigResourceType(resource_type).name
    except ValueError:
        type_name = ConfigResourceType.UNKNOWN.name
    return type_name if not resource_name else f"{type_name}:{resource_name}"


def _config_resource_from_name(name: str) -> tuple[int, str] | None:
    # Kafka's ConfigurationsImageNode.resourceFromName: "BROKER" and "BROKER:" are both the default.
    for t in _CONFIG_TYPES:
        if name.startswith(t.name):
            rest = name[len(t.name) :]
            if not rest:
                return int(t), ""
            if rest.startswith(":"):
                return int(t), rest[1:]
            return None
    return None


def _configs_node(image: MetadataImage) -> Directory:
    def lookup(name: str) -> Node | None:
        key = _config_resource_from_name(name)
        entries = None if key is None else image.configs.get(key)
        if entries is None:
            return None
        found = entries

        def value(config_key: str) -> Node | None:
            v = found.get(config_key)
            return None if v is None else Leaf(v, v)

        return Directory(lambda: list(found), value)

    return Directory(lambda: [config_resource_name(t, n) for t, n in image.configs], lookup)


# ---------------------------------------------------------------------------------------------------
# Kafka's strings


def metadata_version_string(level: int) -> str:
    """``MetadataVersion.toString``: ``4.0-IV3``. An image without metadata.version shows Kafka's
    default (``FeaturesImage.EMPTY``: 3.0-IV1); an unknown level shows as a number."""
    if level == 0:
        level = int(MetadataVersion.IBP_3_0_IV1)
    try:
        return MetadataVersion(level).release
    except ValueError:
        return str(level)


def _bool(v: bool) -> str:
    return "true" if v else "false"


def _protocol_name(security_protocol: int) -> str:
    try:
        return SecurityProtocol(security_protocol).name
    except ValueError:
        return "null"  # Kafka's SecurityProtocol.forId of an unknown id


def _endpoint_string(e: Endpoint) -> str:
    # org.apache.kafka.common.Endpoint.toString
    return (
        f"Endpoint(listenerName='{e.name}', securityProtocol={_protocol_name(e.security_protocol)}, "
        f"host='{e.host}', port={e.port})"
    )


def _range_string(low: int, high: int) -> str:
    # VersionRange.toString
    if low == high:
        return str(low)
    if high == _INT16_MAX:
        return f"{low}+"
    return f"{low}-{high}"


def _listeners_string(listeners: Sequence[Endpoint]) -> str:
    by_name = {e.name: e for e in listeners}
    return ", ".join(_endpoint_string(by_name[n]) for n in sorted(by_name))


def _features_string(features: Sequence[tuple[str, int, int]]) -> str:
    by_name = {name: (low, high) for name, low, high in features}
    return ", ".join(f"{n}: {_range_string(*by_name[n])}" for n in sorted(by_name))


def _uuid_order(u: uuid.UUID) -> tuple[int, int]:
    # Kafka's Uuid.compareTo: the two halves as signed 64-bit numbers.
    def signed(x: int) -> int:
        return x - (1 << 64) if x >= 1 << 63 else x

    return signed(u.int >> 64), signed(u.int & ((1 << 64) - 1))


def _uuid_list(values: Sequence[uuid.UUID]) -> str:
    return "[" + ", ".join(uuid_to_base64(u) for u in values) + "]"


def _int_list(values: Sequence[int]) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def broker_registration_string(b: BrokerRegistration) -> str:
    """Kafka's ``BrokerRegistration.toString`` (listeners and features sorted by name, directories
    sorted as Kafka's ``Uuid`` compares, rack as a Java ``Optional``)."""
    rack = "Optional.empty" if b.rack is None else f"Optional[{b.rack}]"
    directories = sorted(b.directories, key=_uuid_order)
    return (
        f"BrokerRegistration(id={b.id}, epoch={b.epoch}, incarnationId={uuid_to_base64(b.incarnation_id)}, "
        f"listeners=[{_listeners_string(b.listeners)}], "
        f"supportedFeatures={{{_features_string(b.supported_features)}}}, rack={rack}, "
        f"fenced={_bool(b.fenced)}, inControlledShutdown={_bool(b.in_controlled_shutdown)}, "
        f"isMigratingZkBroker={_bool(b.is_migrating_zk_broker)}, directories={_uuid_list(directories)})"
    )


def controller_registration_string(c: ControllerRegistration) -> str:
    """Kafka's ``ControllerRegistration.toString``."""
    return (
        f"ControllerRegistration(id={c.id}, incarnationId={uuid_to_base64(c.incarnation_id)}, "
        f"zkMigrationReady={_bool(c.zk_migration_ready)}, "
        f"listeners=[{_listeners_string(c.listeners)}], "
        f"supportedFeatures={{{_features_string(c.supported_features)}}})"
    )


def _partition_directories(p: PartitionRegistration) -> tuple[uuid.UUID, ...]:
    # Kafka fills MIGRATING ids in for a partition recorded before directory assignment.
    return p.directories if p.directories else (_MIGRATING_DIR,) * len(p.replicas)


def _recovery_state_name(value: int) -> str:
    try:
        return LeaderRecoveryState(value).name
    except ValueError:
        return str(value)


def partition_registration_string(p: PartitionRegistration) -> str:
    """Kafka's ``PartitionRegistration.toString``."""
    return (
        f"PartitionRegistration(replicas={_int_list(p.replicas)}, "
        f"directories={_uuid_list(_partition_directories(p))}, isr={_int_list(p.isr)}, "
        f"removingReplicas={_int_list(p.removing_replicas)}, addingReplicas={_int_list(p.adding_replicas)}, "
        f"elr={_int_list(p.elr)}, lastKnownElr={_int_list(p.last_known_elr)}, leader={p.leader}, "
        f"leaderRecoveryState={_recovery_state_name(p.leader_recovery_state)}, "
        f"leaderEpoch={p.leader_epoch}, partitionEpoch={p.partition_epoch})"
    )


def _iso_zoned_utc(ms: int) -> str:
    """Java's ``ISO_ZONED_DATE_TIME`` of an epoch-millisecond instant in zone "UTC"."""
    try:
        t = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC) + datetime.timedelta(milliseconds=ms)
    except OverflowError:
        return f"{ms} ms"
    text = t.strftime("%Y-%m-%dT%H:%M:%S")
    millis = t.microsecond // 1000
    if millis:
        text += "." + f"{millis:03d}".rstrip("0")
    return text + "Z[UTC]"


def provenance_string(provenance: MetadataProvenance) -> str:
    """Kafka's ``ProvenanceNode``: ``offset 42, epoch 3, time 2024-10-25T03:33:01.123Z[UTC]``."""
    return (
        f"offset {provenance.last_offset}, epoch {provenance.last_epoch}, "
        f"time {_iso_zoned_utc(provenance.last_append_ms)}"
    )


# ---------------------------------------------------------------------------------------------------
# JSON forms of the leaves


def _endpoint_json(e: Endpoint) -> dict[str, Any]:
    return {
        "name": e.name,
        "securityProtocol": _protocol_name(e.security_protocol),
        "host": e.host,
        "port": e.port,
    }


def _features_json(features: Sequence[tuple[str, int, int]]) -> dict[str, Any]:
    return {n: {"minVersion": lo, "maxVersion": hi} for n, lo, hi in sorted(features)}


def _broker_json(b: BrokerRegistration) -> dict[str, Any]:
    return {
        "id": b.id,
        "epoch": b.epoch,
        "incarnationId": uuid_to_base64(b.incarnation_id),
        "listeners": [_endpoint_json(e) for e in sorted(b.listeners, key=lambda e: e.name)],
        "supportedFeatures": _features_json(b.supported_features),
        "rack": b.rack,
        "fenced": b.fenced,
        "inControlledShutdown": b.in_controlled_shutdown,
        "isMigratingZkBroker": b.is_migrating_zk_broker,
        "directories": [uuid_to_base64(u) for u in sorted(b.directories, key=_uuid_order)],
    }


def _controller_json(c: ControllerRegistration) -> dict[str, Any]:
    return {
        "id": c.id,
        "incarnationId": uuid_to_base64(c.incarnation_id),
        "zkMigrationReady": c.zk_migration_ready,
        "listeners": [_endpoint_json(e) for e in sorted(c.listeners, key=lambda e: e.name)],
        "supportedFeatures": _features_json(c.supported_features),
    }


def _partition_json(p: PartitionRegistration) -> dict[str, Any]:
    return {
        "replicas": list(p.replicas),
        "directories": [uuid_to_base64(u) for u in _partition_directories(p)],
        "isr": list(p.isr),
        "removingReplicas": list(p.removing_replicas),
        "addingReplicas": list(p.adding_replicas),
        "elr": list(p.elr),
        "lastKnownElr": list(p.last_known_elr),
        "leader": p.leader,
        "leaderRecoveryState": _recovery_state_name(p.leader_recovery_state),
        "leaderEpoch": p.leader_epoch,
        "partitionEpoch": p.partition_epoch,
    }


def _provenance_json(provenance: MetadataProvenance) -> dict[str, Any]:
    return {
        "lastContainedOffset": provenance.last_offset,
        "lastContainedEpoch": provenance.last_epoch,
        "lastContainedLogTimeMs": provenance.last_append_ms,
    }


# ---------------------------------------------------------------------------------------------------
# Paths


@dataclass(frozen=True, slots=True)
class NodeMatch:
    """A node found by ``resolve``: its absolute path components and the node."""

    components: tuple[str, ...]
    node: Node

    @property
    def path(self) -> str:
        return "/" + "/".join(self.components)

    @property
    def name(self) -> str:
        """Kafka's ``lastPathComponent``: ``/`` for the root."""
        return self.components[-1] if self.components else "/"


def normalize_path(cwd: str, path: str) -> tuple[str, ...]:
    """The components of ``path`` (absolute, or relative to ``cwd``) with ``.``/``..`` folded."""
    full = path if path.startswith("/") else f"{cwd}/{path}"
    out: list[str] = []
    for part in full.split("/"):
        if not part or part == ".":
            continue
        if part == "..":
            if out:
                out.pop()
        else:
            out.append(part)
    return tuple(out)


_REGEX_SPECIAL = set("$()+.[]^{|")
_GLOB_SPECIAL = set("*?\\{}")


def _glob_regex(component: str) -> re.Pattern[str] | None:
    """Kafka's ``GlobComponent.toRegularExpression``: None for a literal component (or an invalid
    glob, which Kafka then also matches literally)."""
    out = ["^"]
    literal = True
    in_group = False
    i = 0
    while i < len(component):
        c = component[i]
        i += 1
        if c == "?":
            literal = False
            out.append(".")
        elif c == "*":
            literal = False
            out.append(".*")
        elif c == "\\":
            if i == len(component):
                out.append("\\\\")
            else:
                nxt = component[i]
                i += 1
                out.append(re.escape(nxt) if nxt in _GLOB_SPECIAL | _REGEX_SPECIAL else nxt)
        elif c == "{":
            if in_group:
                return None
            literal = False
            out.append("(?:(?:")
            in_group = True
        elif c == "," and in_group:
            literal = False
            out.append(")|(?:")
        elif c == "}" and in_group:
            literal = False
            out.append("))")
            in_group = False
        else:
            out.append(re.escape(c) if c in _REGEX_SPECIAL else c)
    if in_group or literal:
        return None
    out.append("$")
    try:
        return re.compile("".join(out))
    except re.error:
        return None


def resolve(root: Directory, cwd: str, path: str) -> list[NodeMatch]:
    """Every node ``path`` names (several when it has globs), in sorted order; [] when none.

    Kafka's ``GlobVisitor``: a literal component is looked up directly (so unlisted aliases work),
    a glob component is matched against the sorted child names.
    """
    components = normalize_path(cwd, path)
    found: list[NodeMatch] = []

    def visit(index: int, node: Node, walked: tuple[str, ...]) -> None:
        if index == len(components):
            found.append(NodeMatch(walked, node))
            return
        if not isinstance(node, Directory):
            return
        component = components[index]
        pattern = _glob_regex(component)
        if pattern is None:
            child = node.child(component)
            if child is not None:
                visit(index + 1, child, (*walked, component))
            return
        for name in node.child_names():
            if pattern.match(name):
                child = node.child(name)
                if child is not None:
                    visit(index + 1, child, (*walked, name))

    visit(0, root, ())
    return found


# ---------------------------------------------------------------------------------------------------
# Renderings


def tree_lines(node: Node, indent: int = 0) -> Iterator[str]:
    """Kafka's ``MetadataNode.print`` through its ``ShellNodePrinter``: a file prints its text; a
    directory prints ``name:`` per child (sorted), then the child two spaces deeper."""
    pad = "  " * indent
    if isinstance(node, Leaf):
        yield pad + node.text
        return
    for name in node.child_names():
        child = node.child(name)
        if child is None:
            continue
        yield f"{pad}{name}:"
        yield from tree_lines(child, indent + 1)


def find_lines(path: str, node: Node) -> Iterator[str]:
    """Kafka's ``find``: ``path``, then every node below it, depth first, children sorted."""
    yield path
    if isinstance(node, Directory):
        for name in node.child_names():
            child = node.child(name)
            if child is not None:
                yield from find_lines(path + name if path == "/" else f"{path}/{name}", child)


def node_to_json(node: Node) -> Any:
    """A file's JSON value, or for a directory an object of its children's (recursively)."""
    if isinstance(node, Leaf):
        return node.value
    out: dict[str, Any] = {}
    for name in node.child_names():
        child = node.child(name)
        if child is not None:
            out[name] = node_to_json(child)
    return out
