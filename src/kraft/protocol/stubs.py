"""Typed stubs for the message modules, written from their schemas.

Each ``kraft.protocol.messages.<api>`` module declares its structs as data (``StructType``), so the
value classes exist only at run time and a type checker sees message bodies as untyped. This module
writes, for each message module, a ``<api>.pyi`` next to it that declares those value classes as the
schema has them (snake_case field names as ``StructType.cls`` makes them, nested structs as nested
classes, a nullable field or one that defaults to null as ``T | None``) and types the module's names:
``REQUEST: StructType[XRequest]``, ``RESPONSE: StructType[XResponse]``, ``API: Api``. Then
``create_topics.REQUEST.cls`` is ``type[CreateTopicsRequest]`` for mypy.

The stubs are source: run ``python -m kraft.protocol.stubs`` after changing a schema and commit what
it writes; ``--check`` only reports the stubs that differ (the unit tests do the same, so a stub
cannot drift from its schema). It writes nothing else and changes nothing at run time.

The classes a stub declares exist at run time only as ``REQUEST.cls`` and its nested attributes: a
module that names one in an annotation imports it under ``typing.TYPE_CHECKING``.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

import kraft.protocol.messages as messages_package
from kraft.protocol.api import Api
from kraft.protocol.schema import (
    BOOL,
    BYTES,
    FLOAT64,
    INT8,
    INT16,
    INT32,
    INT64,
    RECORDS,
    STRING,
    UINT16,
    UINT32,
    UUID,
    ArrayType,
    Field,
    FieldType,
    StructType,
    Versions,
)

_PRIMITIVES: dict[FieldType, str] = {
    BOOL: "bool",
    INT8: "int",
    INT16: "int",
    UINT16: "int",
    INT32: "int",
    UINT32: "int",
    INT64: "int",
    FLOAT64: "float",
    UUID: "uuid.UUID",
    STRING: "str",
    BYTES: "bytes",
    RECORDS: "bytes",
}

_HEADER = '''"""Typed view of ``kraft.protocol.messages.{name}`` for type checkers, written by
``python -m kraft.protocol.stubs`` from the module's schema: do not edit, regenerate.

The classes exist at run time as ``REQUEST.cls``, ``RESPONSE.cls`` and their nested attributes.
"""'''


def _element_type(element: FieldType | StructType) -> str:
    if isinstance(element, StructType):
        return element.name
    if isinstance(element, ArrayType):
        return f"list[{_element_type(element.element)}]"
    try:
        return _PRIMITIVES[element]
    except KeyError:
        raise ValueError(f"no Python type for the wire type {element.name}") from None


def _field_type(fl: Field) -> str:
    text = _element_type(fl.type)
    if not fl.nullable.empty or fl.default is None:
        text += " | None"
    return text


def _nested(schema: StructType) -> list[StructType]:
    """The structs ``schema``'s fields hold directly, once each, in field order."""
    out: dict[str, StructType] = {}
    for fl in schema.fields:
        inner = fl.type.element if isinstance(fl.type, ArrayType) else fl.type
        if not isinstance(inner, StructType):
            continue
        seen = out.get(inner.name)
        if seen is not None and seen is not inner:  # the run-time class attribute would be ambiguous
            raise ValueError(f"{schema.name} holds two different structs named {inner.name}")
        out[inner.name] = inner
    for name in out:
        if name in schema.field_names:
            raise ValueError(f"{schema.name}: the nested struct {name} has a field's name")
    return list(out.values())


def _class_lines(schema: StructType, indent: str) -> list[str]:
    """One line per class (``StructValue`` is a ``dataclass_transform`` base: the type checker makes
    each class's keyword ``__init__`` from its fields, all of which have defaults), its nested
    classes on lines of their own before its fields. Compact on purpose: the stubs are generated,
    read by type checkers, and would otherwise repeat the same shapes hundreds of times."""
    fields = "; ".join(f"{fl.name}: {_field_type(fl)} = ..." for fl in schema.fields) or "..."
    nested = _nested(schema)
    if not nested:
        return [f"{indent}class {schema.name}(StructValue): {fields}"]
    lines = [f"{indent}class {schema.name}(StructValue):"]
    for inner in nested:
        lines += _class_lines(inner, indent + "    ")
    lines.append(f"{indent}    {fields}")
    return lines


def render_stub(module: ModuleType) -> str:
    """The ``.pyi`` text for one message module: its value classes, then its public names."""
    short = module.__name__.rsplit(".", 1)[-1]
    structs: list[tuple[str, StructType]] = []
    others: list[tuple[str, str]] = []
    for name, value in vars(module).items():
        if name.startswith("_"):
            continue
        if isinstance(value, StructType):
            structs.append((name, value))
        elif isinstance(value, Api):
            others.append((name, "Api"))
        elif isinstance(value, Versions):
            others.append((name, "Versions"))
        elif not isinstance(value, FieldType) and not callable(value):  # (imports are skipped)
            raise ValueError(f"{module.__name__}.{name}: no stub type for {type(value).__name__}")
    classes = ["\n".join(_class_lines(schema, "")) for _, schema in structs]
    body = "\n".join(classes)
    uses_uuid = "uuid.UUID" in body
    imports = ["import uuid", ""] if uses_uuid else []
    imports.append("from kraft.protocol.api import Api")
    schema_names = ["StructType", "StructValue"]
    if any(kind == "Versions" for _, kind in others):
        schema_names.append("Versions")
    imports.append(f"from kraft.protocol.schema import {', '.join(schema_names)}")
    names = [f"{name}: StructType[{schema.name}]" for name, schema in structs]
    names += [f"{name}: {kind}" for name, kind in others]
    parts = [_HEADER.format(name=short), "\n".join(imports), body, "\n".join(names)]
    return "\n\n".join(parts) + "\n"


def message_modules() -> list[ModuleType]:
    """Every module of ``kraft.protocol.messages``, by name."""
    return [
        importlib.import_module(f"{messages_package.__name__}.{info.name}")
        for info in sorted(pkgutil.iter_modules(messages_package.__path__), key=lambda i: i.name)
    ]


def stub_path(module: ModuleType) -> Path:
    assert module.__file__ is not None
    return Path(module.__file__).with_suffix(".pyi")


def stale_stubs() -> list[Path]:
    """The stubs whose committed text differs from what the schemas give (or that are missing)."""
    stale = []
    for module in message_modules():
        path = stub_path(module)
        if not path.exists() or path.read_text() != render_stub(module):
            stale.append(path)
    return stale


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kraft.protocol.stubs", description=__doc__)
    parser.add_argument("--check", action="store_true", help="list stale stubs; exit 1 if any")
    ns = parser.parse_args(argv)
    if ns.check:
        stale = stale_stubs()
        for path in stale:
            print(f"stale: {path}", file=sys.stderr)
        return 1 if stale else 0
    for module in message_modules():
        path = stub_path(module)
        text = render_stub(module)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
            print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
