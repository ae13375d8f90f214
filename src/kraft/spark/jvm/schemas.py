"""The record schemas as JSON for the Java payload decoder (``kraft-schemas.json`` in the jar).

``kraft.spark.jvm``'s ``Payloads`` is Java's twin of ``kraft.spark.arrow_log._PayloadDecoder``: it
turns a metadata record's value, or a control record, into the JSON that ``kraft dump-log
--cluster-metadata-decoder --json`` prints. It holds no schema of its own: it interprets the plans
exported here, which are computed from the Python schema objects themselves (``SCHEMAS`` and
``CONTROL_MESSAGES``, through the codec's own ``_Plan`` and the JSON writers' own rules), so that the
schemas have one source.

The document (keys sorted, lists in a stable order, ASCII only)::

    {"format": 1, "frameVersion": 1,
     "typeNames": [{"id": 0, "name": "REGISTER_BROKER_RECORD"}, ...],   # _peek_type_name's table
     "metadata": [{"id": 3, "name": "PARTITION_RECORD",
                   "versions": [{"version": 0, "struct": STRUCT}, ...]}, ...],
     "ignored": [{"id": 10, "name": "DELEGATION_TOKEN_RECORD"}, ...],  # UnmodelledRecordError
     "control": [{"id": 2, "name": "LEADER_CHANGE", "version": 0, "flexible": true,
                  "struct": STRUCT}, ...]}

    STRUCT = {"name": ..., "fields": [FIELD, ...]}                      # declaration order
    FIELD  = {"key": JSON name, "type": TYPE, "nullable": bool,
              "wire": "regular" | "tagged" | "absent", "tag": int (tagged only),
              "json": bool,          # printed at all (metadata: only the version's fields)
              "omitDefault": bool,   # left out when its value's JSON equals "default"
              "default": JSON text of the value it has when not on the wire}
    TYPE   = "bool" | "int8" | "int16" | "uint16" | "int32" | "uint32" | "int64" | "uuid"
             | "string" | {"array": TYPE} | {"struct": STRUCT}

A struct is resolved at one version (its fields' wire kind, nullability and JSON treatment at that
version), nested structs included, so the Java side needs no version logic. Metadata records follow
``record_to_json`` (present fields only, tagged fields at their default left out); control records
follow ``to_kafka_json`` (every field, those absent in the version read at their default).

``omitDefault`` compares JSON texts where Python compares values (``v == default``); that is exact
only if the default has the very Python type the decoder yields (``True == 1`` but ``"true" !=
"1"``), which ``schemas_json`` checks, refusing anything else, as it refuses wire types the Java
decoder does not implement (floats, bytes).
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from kraft.common.uuids import uuid_to_base64
from kraft.metadata import records as _records
from kraft.metadata.records import (
    FRAME_VERSION,
    IGNORED_RECORD_TYPES,
    PAYLOAD_WITHHELD_RECORD_TYPES,
    SCHEMAS,
    UNMODELLED_RECORD_NAMES,
    MetadataRecordType,
)
from kraft.protocol.schema import ArrayType, Field, FieldType, StructType
from kraft.records import control as _control
from kraft.records.control import CONTROL_MESSAGES

FORMAT = 1

# Wire types the Java decoder implements, by Kafka's type name.
_SCALARS = frozenset({"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "uuid", "string"})
_INTS = frozenset({"int8", "int16", "uint16", "int32", "uint32", "int64"})


def _compact(obj: Any) -> str:
    # The JSON form of arrow_log._compact (the payloads' own), so that defaults compare as text.
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def type_names() -> dict[int, str]:
    """Type id -> dump-log's payload type name (``arrow_log._TYPE_NAMES``, which needs pyarrow)."""
    return {
        **{int(t): t.upper_name for t in MetadataRecordType},
        **{t: UNMODELLED_RECORD_NAMES.get(t, f"UNKNOWN_{t}") for t in IGNORED_RECORD_TYPES},
    }


def _check_default(where: str, ftype: FieldType | StructType, value: Any) -> None:
    """Refuse a default whose JSON text could differ from a decoded value's while Python's ``==``
    says they are equal (or the reverse)."""
    if value is None:
        return
    if isinstance(ftype, ArrayType):
        if type(value) is not list:
            raise ValueError(f"{where}: default {value!r} is not a list")
        for item in value:
            _check_default(where, ftype.element, item)
        return
    if isinstance(ftype, StructType):
        raise ValueError(f"{where}: a struct-valued default is not supported by the Java decoder")
    name = ftype.name
    expected: type = (
        bool if name == "bool" else int if name in _INTS else str if name == "string" else uuid.UUID
    )
    if type(value) is not expected:
        raise ValueError(f"{where}: default {value!r} is not a {expected.__name__} ({name})")


def _type_json(ftype: FieldType | StructType, version: int, flexible: bool, control: bool) -> Any:
    if isinstance(ftype, StructType):
        return {"struct": _struct_json(ftype, version, flexible, control)}
    if isinstance(ftype, ArrayType):
        return {"array": _type_json(ftype.element, version, flexible, control)}
    if ftype.name not in _SCALARS:
        raise ValueError(f"type {ftype.name} is not supported by the Java payload decoder")
    return ftype.name


def _struct_json(schema: StructType, version: int, flexible: bool, control: bool) -> dict[str, Any]:
    plan = schema.plan(version, flexible)
    regular = [name for name, _, _ in plan.regular]
    tags = {fl.name: tag for tag, fl, *_ in plan.tagged}
    absent = {fl.name for fl in plan.absent}
    declared = [fl.name for fl in schema.fields]
    # The Java decoder reads the regular fields in declaration order, as _Plan does.
    if regular != [n for n in declared if n in set(regular)]:
        raise ValueError(f"{schema.name} v{version}: regular fields out of declaration order")
    if len(regular) + len(tags) + len(absent) != len(declared):
        raise ValueError(f"{schema.name} v{version}: a field is both regular and tagged")
    json_plan: dict[str, tuple[str, Any]] = {}
    if not control:
        for name, json_name, _ftype, tagged_default in _records._json_plan(schema, version):
            json_plan[name] = (json_name, tagged_default)
    fields: list[dict[str, Any]] = []
    for fl in schema.fields:
        fields.append(_field_json(schema, fl, version, flexible, control, tags, absent, json_plan))
    return {"name": schema.name, "fields": fields}


def _field_json(
    schema: StructType,
    fl: Field,
    version: int,
    flexible: bool,
    control: bool,
    tags: dict[str, int],
    absent: set[str],
    json_plan: dict[str, tuple[str, Any]],
) -> dict[str, Any]:
    where = f"{schema.name}.{fl.name} v{version}"
    out: dict[str, Any] = {
        "type": _type_json(fl.type, version, flexible, control),
        "nullable": version in fl.nullable,
    }
    if fl.name in tags:
        out["wire"] = "tagged"
        out["tag"] = tags[fl.name]
    else:
        out["wire"] = "absent" if fl.name in absent else "regular"
    default = fl.default_value()
    if control:
        # to_kafka_json: every field, those not on the wire at their default.
        out["key"] = _control._lower_camel(fl.name)
        out["json"] = True
        out["omitDefault"] = False
        out["default"] = _compact(_control.to_kafka_json(default))
    elif fl.name in json_plan:
        json_name, tagged_default = json_plan[fl.name]
        out["key"] = json_name
        out["json"] = True
        omit = tagged_default is not _records._NOT_TAGGED
        out["omitDefault"] = omit
        if omit:
            default = tagged_default
            _check_default(where, fl.type, default)
        elif out["wire"] != "regular":
            # Not on the wire and never left out: record_to_json would print the default, which
            # _Plan.decode gives such a field, as is (no metadata field is like that today).
            pass
        out["default"] = _compact(_records._json_value(fl.type, default, version, uuid_to_base64))
    else:
        # record_to_json leaves out the fields of other versions.
        out["key"] = _records._camel(fl.name)
        out["json"] = False
        out["omitDefault"] = False
        out["default"] = None
    if out["wire"] == "absent" and out["json"] and not control:
        raise ValueError(f"{where}: printed but not in the version")
    return out


def schemas_document() -> dict[str, Any]:
    """The exported document as Python objects (see the module docstring)."""
    metadata = []
    for record_type in sorted(SCHEMAS):
        if record_type in PAYLOAD_WITHHELD_RECORD_TYPES:
            continue  # secrets (SCRAM): listed with the ignored types, payload withheld
        schema = SCHEMAS[record_type]
        versions = [
            {"version": v, "struct": _struct_json(schema.struct, v, True, False)}
            for v in range(schema.versions.low, schema.versions.high + 1)
        ]
        metadata.append({"id": int(record_type), "name": record_type.upper_name, "versions": versions})
    names = type_names()
    control = []
    for kind in sorted(CONTROL_MESSAGES):
        spec = CONTROL_MESSAGES[kind]
        control.append(
            {
                "id": int(kind),
                "name": kind.name,
                "version": spec.version,
                "flexible": spec.flexible,
                "struct": _struct_json(spec.schema, spec.version, spec.flexible, True),
            }
        )
    return {
        "format": FORMAT,
        "frameVersion": FRAME_VERSION,
        "typeNames": [{"id": t, "name": names[t]} for t in sorted(names)],
        "metadata": metadata,
        "ignored": [
            {"id": t, "name": names[t]} for t in sorted(IGNORED_RECORD_TYPES | PAYLOAD_WITHHELD_RECORD_TYPES)
        ],
        "control": control,
    }


def schemas_json() -> str:
    """The document as deterministic JSON text (ASCII, keys sorted, one trailing newline)."""
    return json.dumps(schemas_document(), sort_keys=True, separators=(",", ":"), ensure_ascii=True) + "\n"
