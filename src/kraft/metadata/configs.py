"""Dynamic configuration: the keys kraft knows, their validation, their resolution and DescribeConfigs.

Owns the config schema (a small subset of Kafka's ``KafkaConfigSchema``: the keys that change
controller behaviour plus the common topic keys users set) and DescribeConfigs, which controllers
and brokers answer alike; IncrementalAlterConfigs, which writes, is the controller's
(``kraft.controller.config_control``). Values live in the image as ConfigRecords; nothing here
mutates anything.

Resolution of a topic-level key (spec 4.1): topic config -> node-level dynamic config of this
controller (BROKER "<id>") -> cluster default (BROKER "") -> static config -> Kafka's default.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kraft.common.fast_init import speed_up_inits
from kraft.metadata.image import MetadataImage
from kraft.metadata.records import ConfigResourceType
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import describe_configs as describe_configs_msg

TOPIC = int(ConfigResourceType.TOPIC)
BROKER = int(ConfigResourceType.BROKER)


class ConfigSource(enum.IntEnum):
    """DescribeConfigs ConfigSource values (Kafka's ``DescribeConfigsResponse.ConfigSource``)."""

    UNKNOWN = 0
    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5
    DYNAMIC_BROKER_LOGGER_CONFIG = 6
    CLIENT_METRICS_CONFIG = 7
    GROUP_CONFIG = 8


class ConfigType(enum.IntEnum):
    """DescribeConfigs v3+ ConfigType."""

    UNKNOWN = 0
    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7
    CLASS = 8
    PASSWORD = 9


class ConfigOperation(enum.IntEnum):
    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class InvalidConfigError(ValueError):
    """A value that Kafka's validation refuses (INVALID_CONFIG)."""


def _int_at_least(low: int) -> Callable[[str], None]:
    def check(value: str) -> None:
        try:
            n = int(value.strip())
        except ValueError:
            raise InvalidConfigError(f"value {value!r} is not an integer") from None
        if n < low:
            raise InvalidConfigError(f"value {n} must be at least {low}")

    return check


def _long_at_least(low: int) -> Callable[[str], None]:
    return _int_at_least(low)


def _boolean(value: str) -> None:
    if value.strip().lower() not in ("true", "false"):
        raise InvalidConfigError(f"value {value!r} is not a boolean (true or false)")


def _one_of_list(choices: tuple[str, ...]) -> Callable[[str], None]:
    def check(value: str) -> None:
        items = [v.strip() for v in value.split(",") if v.strip()]
        if not items:
            raise InvalidConfigError(f"value must be a non-empty list of {', '.join(choices)}")
        for item in items:
            if item not in choices:
                raise InvalidConfigError(f"value {item!r} is not one of {', '.join(choices)}")

    return check


def _compression_type(value: str) -> None:
    """Kafka's values but snappy: the broker re-encodes batches to a topic's codec, and kraft has no
    snappy writer (producers' snappy batches are still stored as they come under ``producer``)."""
    _one_of(("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"))(value)
    if value.strip() == "snappy":
        raise InvalidConfigError(
            "kraft cannot write snappy batches, so a topic cannot be re-encoded to snappy; use "
            "producer (keeps the producers' snappy batches), zstd, lz4, gzip or uncompressed"
        )


def _one_of(choices: tuple[str, ...]) -> Callable[[str], None]:
    def check(value: str) -> None:
        if value.strip() not in choices:
            raise InvalidConfigError(f"value {value!r} is not one of {', '.join(choices)}")

    return check


def _any(value: str) -> None:
    return None


@dataclass(frozen=True, slots=True)
class ConfigDef:
    """One known key. ``broker_synonym`` is the broker-level key a topic key falls back to."""

    name: str
    default: str | None
    type: ConfigType
    validate: Callable[[str], None]
    topic: bool = True
    broker: bool = True
    broker_synonym: str | None = None
    is_list: bool = False

    @property
    def is_broker_key(self) -> bool:
        """A key of a BROKER resource. A topic key with a broker synonym (``retention.ms`` ->
        ``log.retention.ms``) is not one: the broker knows it by the synonym, as Kafka does."""
        return self.broker and self.broker_synonym is None


_DEFS: tuple[ConfigDef, ...] = (
    ConfigDef("min.insync.replicas", "1", ConfigType.INT, _int_at_least(1)),
    ConfigDef("unclean.leader.election.enable", "false", ConfigType.BOOLEAN, _boolean),
    ConfigDef(
        "retention.ms", "604800000", ConfigType.LONG, _long_at_least(-1), broker_synonym="log.retention.ms"
    ),
    ConfigDef(
        "retention.bytes", "-1", ConfigType.LONG, _long_at_least(-1), broker_synonym="log.retention.bytes"
    ),
    ConfigDef(
        "cleanup.policy",
        "delete",
        ConfigType.LIST,
        _one_of_list(("delete", "compact")),
        broker_synonym="log.cleanup.policy",
        is_list=True,
    ),
    ConfigDef(
        "segment.bytes", "1073741824", ConfigType.INT, _int_at_least(14), broker_synonym="log.segment.bytes"
    ),
    ConfigDef("segment.ms", "604800000", ConfigType.LONG, _long_at_least(1), broker_synonym="log.roll.ms"),
    # A new segment's .index/.timeindex: an entry every index.interval.bytes, files of at most
    # segment.index.bytes (full: the segment rolls). Segments already written keep theirs, as in Kafka.
    ConfigDef(
        "index.interval.bytes",
        "4096",
        ConfigType.INT,
        _int_at_least(0),
        broker_synonym="log.index.interval.bytes",
    ),
    ConfigDef(
        "segment.index.bytes",
        "10485760",
        ConfigType.INT,
        _int_at_least(4),
        broker_synonym="log.index.size.max.bytes",
    ),
    # Kafka's defaults never fsync on append (Long.MAX_VALUE): durability comes from replication.
    # flush.messages=1 fsyncs every append before it is acknowledged (docs/dataplane.md).
    ConfigDef(
        "flush.messages",
        "9223372036854775807",
        ConfigType.LONG,
        _long_at_least(1),
        broker_synonym="log.flush.interval.messages",
    ),
    ConfigDef(
        "flush.ms",
        "9223372036854775807",
        ConfigType.LONG,
        _long_at_least(0),
        broker_synonym="log.flush.interval.ms",
    ),
    ConfigDef(
        "max.message.bytes", "1048588", ConfigType.INT, _int_at_least(0), broker_synonym="message.max.bytes"
    ),
    ConfigDef(
        "compression.type",
        "producer",
        ConfigType.STRING,
        _compression_type,
    ),
    ConfigDef(
        "message.timestamp.type",
        "CreateTime",
        ConfigType.STRING,
        _one_of(("CreateTime", "LogAppendTime")),
        broker_synonym="log.message.timestamp.type",
    ),
    ConfigDef(
        "min.cleanable.dirty.ratio",
        "0.5",
        ConfigType.DOUBLE,
        _any,
        broker_synonym="log.cleaner.min.cleanable.ratio",
    ),
    # Broker-only keys the controller reads.
    ConfigDef("default.replication.factor", "1", ConfigType.INT, _int_at_least(1), topic=False),
    ConfigDef("num.partitions", "1", ConfigType.INT, _int_at_least(1), topic=False),
    ConfigDef("delete.topic.enable", "true", ConfigType.BOOLEAN, _boolean, topic=False),
    ConfigDef("auto.create.topics.enable", "true", ConfigType.BOOLEAN, _boolean, topic=False),
    ConfigDef("auto.leader.rebalance.enable", "true", ConfigType.BOOLEAN, _boolean, topic=False),
    ConfigDef("log.retention.ms", None, ConfigType.LONG, _long_at_least(-1), topic=False),
    ConfigDef("log.retention.bytes", "-1", ConfigType.LONG, _long_at_least(-1), topic=False),
    ConfigDef(
        "log.cleanup.policy",
        "delete",
        ConfigType.LIST,
        _one_of_list(("delete", "compact")),
        topic=False,
        is_list=True,
    ),
    ConfigDef("log.segment.bytes", "1073741824", ConfigType.INT, _int_at_least(14), topic=False),
    ConfigDef("log.roll.ms", None, ConfigType.LONG, _long_at_least(1), topic=False),
    ConfigDef("log.index.interval.bytes", "4096", ConfigType.INT, _int_at_least(0), topic=False),
    ConfigDef("log.index.size.max.bytes", "10485760", ConfigType.INT, _int_at_least(4), topic=False),
    ConfigDef("message.max.bytes", "1048588", ConfigType.INT, _int_at_least(0), topic=False),
    ConfigDef(
        "log.message.timestamp.type",
        "CreateTime",
        ConfigType.STRING,
        _one_of(("CreateTime", "LogAppendTime")),
        topic=False,
    ),
    ConfigDef("log.cleaner.min.cleanable.ratio", "0.5", ConfigType.DOUBLE, _any, topic=False),
)

CONFIG_DEFS: Mapping[str, ConfigDef] = {d.name: d for d in _DEFS}
TOPIC_CONFIG_NAMES: tuple[str, ...] = tuple(sorted(d.name for d in _DEFS if d.topic))
BROKER_CONFIG_NAMES: tuple[str, ...] = tuple(sorted(d.name for d in _DEFS if d.is_broker_key))
# Broker keys a topic key is the synonym of also count as "broker-level" for the topic key.
_BROKER_SYNONYM_OF: Mapping[str, str] = {d.broker_synonym: d.name for d in _DEFS if d.broker_synonym}


def validate_value(resource_type: int, name: str, value: str | None) -> None:
    """Kafka's validation of one SET value.

    Raises:
        InvalidConfigError: unknown key for the resource type, null value, or a bad value.
    """
    d = CONFIG_DEFS.get(name)
    if (
        d is None
        or (resource_type == TOPIC and not d.topic)
        or (resource_type == BROKER and not d.is_broker_key)
    ):
        kind = "topic" if resource_type == TOPIC else "broker"
        raise InvalidConfigError(f"Unknown {kind} config name: {name}")
    if value is None:
        raise InvalidConfigError(f"Null value not supported for {name}")
    d.validate(value)


@dataclass(frozen=True, slots=True)
class ResolvedConfig:
    name: str
    value: str | None
    source: ConfigSource
    read_only: bool = False
    type: ConfigType = ConfigType.UNKNOWN
    synonyms: tuple[tuple[str, str | None, ConfigSource], ...] = ()


class ConfigResolver:
    """Resolves effective values against an image and this controller's static config."""

    def __init__(self, static: Mapping[str, str], node_id: int) -> None:
        self.static = dict(static)
        self.node_id = node_id

    def _chain(
        self, image: MetadataImage, resource_type: int, resource_name: str, name: str
    ) -> list[tuple[str, str | None, ConfigSource]]:
        """Every place ``name`` is set, strongest first, ending with Kafka's default."""
        out: list[tuple[str, str | None, ConfigSource]] = []
        d = CONFIG_DEFS.get(name)
        if resource_type == TOPIC:
            v = image.configs.get((TOPIC, resource_name), {}).get(name)
            if v is not None:
                out.append((name, v, ConfigSource.DYNAMIC_TOPIC_CONFIG))
            broker_keys = [name] if d is None or d.broker_synonym is None else [d.broker_synonym, name]
            node = str(self.node_id)
        else:
            broker_keys = [name]
            node = resource_name
        for key in broker_keys:
            if node:
                v = image.configs.get((BROKER, node), {}).get(key)
                if v is not None:
                    out.append((key, v, ConfigSource.DYNAMIC_BROKER_CONFIG))
        for key in broker_keys:
            v = image.configs.get((BROKER, ""), {}).get(key)
            if v is not None:
                out.append((key, v, ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG))
        for key in broker_keys:
            if key in self.static:
                out.append((key, self.static[key], ConfigSource.STATIC_BROKER_CONFIG))
        if d is not None:
            out.append((name, d.default, ConfigSource.DEFAULT_CONFIG))
        return out

    def resolve(
        self, image: MetadataImage, resource_type: int, resource_name: str, name: str
    ) -> ResolvedConfig:
        chain = self._chain(image, resource_type, resource_name, name)
        d = CONFIG_DEFS.get(name)
        ctype = d.type if d is not None else ConfigType.UNKNOWN
        if not chain:
            return ResolvedConfig(name, None, ConfigSource.UNKNOWN, type=ctype)
        _, value, source = chain[0]
        return ResolvedConfig(name, value, source, type=ctype, synonyms=tuple(chain))

    def value(self, image: MetadataImage, resource_type: int, resource_name: str, name: str) -> str | None:
        return self.resolve(image, resource_type, resource_name, name).value

    # ---- the values the controller acts on

    def topic_min_isr(self, image: MetadataImage, topic: str) -> int:
        try:
            return max(1, int(self.value(image, TOPIC, topic, "min.insync.replicas") or "1"))
        except ValueError:
            return 1

    def topic_unclean_enabled(self, image: MetadataImage, topic: str) -> bool:
        return (
            self.value(image, TOPIC, topic, "unclean.leader.election.enable") or "false"
        ).lower() == "true"

    def cluster_bool(self, image: MetadataImage, name: str) -> bool:
        return (self.value(image, BROKER, "", name) or "false").lower() == "true"

    def cluster_int(self, image: MetadataImage, name: str) -> int:
        return int(self.value(image, BROKER, "", name) or "0")


def effective_min_isr(configured: int, replication_factor: int) -> int:
    """m = min(min.insync.replicas, replication factor), at least 1 (spec 4.1)."""
    return max(1, min(configured, max(1, replication_factor)))


# Built for every config the controller resolves: see kraft.common.fast_init.
speed_up_inits(ResolvedConfig)


def describe_configs(resolver: ConfigResolver, image: MetadataImage, request: Any, version: int) -> Any:
    """DescribeConfigs over ``image`` (spec 6.6), answered the same by controllers and brokers: each
    key resolved by ``resolver`` (whose static configs and node id are the answering node's)."""
    cls: Any = describe_configs_msg.RESPONSE.cls
    results = []
    for res in request.resources:
        rtype, rname = res.resource_type, res.resource_name
        error: tuple[ErrorCode, str] | None = None
        if rtype == TOPIC:
            keys = TOPIC_CONFIG_NAMES
            if rname not in image.topics_by_name:
                error = (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{rname}' does not exist.")
        elif rtype == BROKER:
            keys = BROKER_CONFIG_NAMES
            if rname and not rname.isdigit():
                error = (ErrorCode.INVALID_REQUEST, f"Invalid broker name {rname!r}")
        else:
            error = (ErrorCode.INVALID_REQUEST, f"Unsupported resource type {rtype}")
        if error is not None:
            code, message = error
            results.append(
                cls.DescribeConfigsResult(
                    error_code=int(code),
                    error_message=message,
                    resource_type=rtype,
                    resource_name=rname,
                    configs=[],
                )
            )
            continue
        wanted = (
            # Null or empty ConfigurationKeys: every key (Kafka's controller and broker alike).
            keys if not res.configuration_keys else [k for k in res.configuration_keys if k in keys]
        )
        rows = []
        for key in wanted:
            r = resolver.resolve(image, rtype, rname, key)
            if (
                rtype == BROKER
                and rname == ""
                and r.source not in (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,)
            ):
                # The cluster-default resource lists only what is set at that level (Kafka).
                continue
            synonyms = []
            if version >= 1 and request.include_synonyms:
                synonyms = [
                    cls.DescribeConfigsResult.DescribeConfigsResourceResult.DescribeConfigsSynonym(
                        name=n, value=v, source=int(s)
                    )
                    for n, v, s in r.synonyms
                ]
            rows.append(
                cls.DescribeConfigsResult.DescribeConfigsResourceResult(
                    name=key,
                    value=r.value,
                    read_only=False,
                    is_default=version == 0 and r.source == ConfigSource.DEFAULT_CONFIG,
                    config_source=int(r.source),
                    is_sensitive=False,
                    synonyms=synonyms,
                    config_type=int(r.type),
                    documentation=None,
                )
            )
        results.append(
            cls.DescribeConfigsResult(
                error_code=0, error_message=None, resource_type=rtype, resource_name=rname, configs=rows
            )
        )
    return cls(throttle_time_ms=0, results=results)
