"""IncrementalAlterConfigs and DescribeConfigs over the image (spec 6.6; Kafka's
ConfigurationControlManager). Pure: records and responses out, nothing mutated.

KIP-966 (spec 5.3 rule 5, revised): after the ConfigRecords of a request that sets or deletes
``min.insync.replicas`` (on a topic, the cluster default BROKER "", or this controller's own node,
whose value the controller's resolution reads), each partition whose ISR alone satisfies the new
effective min ISR gets a PartitionChangeRecord emptying its ELR and LastKnownElr; partitions still
below it keep theirs. Only with ELR enabled. This differs from Kafka 4.0+, which writes
ClearElrRecord{topic} (or {""}) and so empties every partition, even a leaderless one whose ELR
holds its only replicas with every committed record. We never write ClearElrRecord: it means
"clear all of them", which is not the rule; its replay is kept for logs Kafka wrote.
"""

from __future__ import annotations

from typing import Any

from kraft.controller.features import elr_enabled
from kraft.controller.partition_change import elr_cleared_by_min_isr_change
from kraft.controller.replication_control import partition_change_record
from kraft.controller.result import ControllerResult, result
from kraft.metadata.configs import (
    BROKER,
    CONFIG_DEFS,
    TOPIC,
    ConfigOperation,
    ConfigResolver,
    InvalidConfigError,
    describe_configs,
    validate_value,
)
from kraft.metadata.image import MetadataDelta, MetadataImage
from kraft.metadata.records import ApiMessageAndVersion, MetadataRecordType, make_record
from kraft.protocol.error_codes import ErrorCode
from kraft.protocol.messages import incremental_alter_configs

MIN_ISR = "min.insync.replicas"


class ConfigControl:
    def __init__(self, resolver: ConfigResolver) -> None:
        self.resolver = resolver

    def incremental_alter_configs(
        self, image: MetadataImage, request: Any, version: int
    ) -> ControllerResult[Any]:
        cls: Any = incremental_alter_configs.RESPONSE.cls
        records: list[ApiMessageAndVersion] = []
        responses: list[Any] = []
        for res in request.resources:
            outcome = self._alter_one(image, res)
            if isinstance(outcome, tuple):
                code, message = outcome
                responses.append(
                    cls.AlterConfigsResourceResponse(
                        error_code=int(code),
                        error_message=message,
                        resource_type=res.resource_type,
                        resource_name=res.resource_name,
                    )
                )
                continue
            records.extend(outcome)
            responses.append(
                cls.AlterConfigsResourceResponse(
                    error_code=0,
                    error_message=None,
                    resource_type=res.resource_type,
                    resource_name=res.resource_name,
                )
            )
        if request.validate_only:
            records = []
        else:
            # After every resource of the request: the rule needs the final m of each topic.
            records.extend(self.min_isr_elr_changes(image, records))
        return result(records, cls(throttle_time_ms=0, responses=responses))

    def min_isr_elr_changes(
        self, image: MetadataImage, config_records: list[ApiMessageAndVersion]
    ) -> list[ApiMessageAndVersion]:
        """Spec 5.3 rule 5 (revised) for ``config_records`` about to be written on ``image``: one
        PartitionChangeRecord per partition whose ISR already meets the new effective min ISR and
        that still has an ELR or LastKnownElr (module docstring).

        Every topic is visited when a broker-level value changed, only the named topics otherwise.
        The new m is resolved on ``image`` with ``config_records`` replayed, so topic overrides,
        deletions and several resources in one request count as they will once committed.
        """
        if not elr_enabled(image):
            return []
        own_node = str(self.resolver.node_id)
        topics: set[str] = set()
        every_topic = False
        for record in config_records:
            data = record.data
            if record.type != MetadataRecordType.CONFIG or data.name != MIN_ISR:
                continue
            if data.resource_type == TOPIC:
                topics.add(data.resource_name)
            elif data.resource_type == BROKER and data.resource_name in ("", own_node):
                every_topic = True
        if not topics and not every_topic:
            return []
        delta = MetadataDelta(image)
        for i, record in enumerate(config_records):
            delta.replay(record, image.provenance.last_offset + 1 + i)
        after = delta.apply(image.provenance)
        names = sorted(after.topics_by_name) if every_topic else sorted(topics)
        mv = image.metadata_version
        out: list[ApiMessageAndVersion] = []
        for name in names:
            topic = after.topics_by_name.get(name)
            if topic is None:
                continue
            configured = self.resolver.topic_min_isr(after, name)
            for pid in sorted(topic.partitions):
                p = topic.partitions[pid]
                if not (p.elr or p.last_known_elr):
                    continue
                change = elr_cleared_by_min_isr_change(
                    p, topic_id=topic.id, partition_id=pid, min_isr=configured
                )
                if change is not None:
                    out.append(partition_change_record(change, mv))
        return out

    def _alter_one(
        self, image: MetadataImage, res: Any
    ) -> list[ApiMessageAndVersion] | tuple[ErrorCode, str]:
        rtype, rname = res.resource_type, res.resource_name
        if rtype == TOPIC:
            if rname not in image.topics_by_name:
                return (ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{rname}' does not exist.")
        elif rtype == BROKER:
            if rname and not rname.isdigit():
                return (ErrorCode.INVALID_REQUEST, f'Invalid broker name {rname!r}: expected an id or "".')
        else:
            return (ErrorCode.INVALID_REQUEST, f"Unsupported resource type {rtype}.")
        current = dict(image.configs.get((rtype, rname), {}))
        new = dict(current)
        names = [c.name for c in res.configs]
        if len(set(names)) != len(names):
            return (ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
        for c in res.configs:
            try:
                op = ConfigOperation(c.config_operation)
            except ValueError:
                return (ErrorCode.INVALID_REQUEST, f"Unknown config operation {c.config_operation}")
            d = CONFIG_DEFS.get(c.name)
            try:
                if op is ConfigOperation.DELETE:
                    if d is None:
                        validate_value(rtype, c.name, "")  # raises "Unknown ... config name"
                    new.pop(c.name, None)
                    continue
                if op in (ConfigOperation.APPEND, ConfigOperation.SUBTRACT):
                    if d is None or not d.is_list:
                        raise InvalidConfigError(
                            f"Config value append/subtract is not allowed for config "
                            f"key {c.name}, which is not a list"
                        )
                    base = new.get(c.name) or self.resolver.value(image, rtype, rname, c.name) or ""
                    items = [x for x in base.split(",") if x]
                    given = [x.strip() for x in (c.value or "").split(",") if x.strip()]
                    if op is ConfigOperation.APPEND:
                        items += [x for x in given if x not in items]
                    else:
                        items = [x for x in items if x not in given]
                    value = ",".join(items)
                    validate_value(rtype, c.name, value)
                    new[c.name] = value
                    continue
                validate_value(rtype, c.name, c.value)
                new[c.name] = c.value
            except InvalidConfigError as e:
                kind = "TOPIC" if rtype == TOPIC else "BROKER"
                return (
                    ErrorCode.INVALID_CONFIG,
                    f"Invalid value {c.value} for configuration {c.name}: {e}"
                    if c.value is not None
                    else f"Invalid config for resource ConfigResource(type={kind}, name='{rname}'): {e}",
                )
        records: list[ApiMessageAndVersion] = []
        for name in sorted(set(current) | set(new) | set(names)):
            old_v, new_v = current.get(name), new.get(name)
            # Topic ConfigRecords only when the value changes; broker ones always (spec 6.6).
            if name not in names or (rtype == TOPIC and old_v == new_v):
                continue
            records.append(
                make_record(
                    MetadataRecordType.CONFIG,
                    resource_type=rtype,
                    resource_name=rname,
                    name=name,
                    value=new_v,
                )
            )
        return records

    def describe_configs(self, image: MetadataImage, request: Any, version: int) -> Any:
        return describe_configs(self.resolver, image, request, version)
