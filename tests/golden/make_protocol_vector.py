"""Write one annotated golden vector whose bytes come from kafka-python 3.0.12's encoder.

    PYTHONPATH=src:tests/unit/protocol python tests/golden/make_protocol_vector.py \
        produce request 13 [--api CLIENT_API] [--expect PATH ...] > tests/golden/protocol/x.hex

The value has every field of that version set away from its default (numbers count up from the
correlation id, strings are ``s<n>``, UUIDs ``<n>0..0<n>``, records and bytes are short ASCII, each
array holds one element), so a field left out or put in the wrong place shows. kafka-python encodes
it with its header; the annotations come from walking *our* schema over kafka-python's bytes, and
the walk must consume them exactly, so a disagreement in field order, width or presence stops the
script instead of writing a vector. ``--expect`` paths are resolved on the value handed to
kafka-python (not on our decoding of the bytes), so the golden test checks that our decoder
recovers what the independent encoder was given.

Not a test: it is run by hand when a vector is added, and its output is committed and reviewed.
"""

from __future__ import annotations

import argparse
import importlib
import re
import struct
import sys
import uuid
from typing import Any

from kafka_python_bridge import KAFKA_PYTHON, to_kp

from kraft.protocol.api import Api
from kraft.protocol.schema import ArrayType, Field, FieldType, StructType

_FIXED = {
    "bool": ">?",
    "int8": ">b",
    "int16": ">h",
    "uint16": ">H",
    "int32": ">i",
    "uint32": ">I",
    "int64": ">q",
    "float64": ">d",
}
_HEX_WIDTH = 16  # bytes per line
_CLIENT_ID = "kp"


# ---------------------------------------------------------------------------------------------------
# A value with every field set


class _Counter:
    def __init__(self, start: int) -> None:
        self.n = start

    def next(self) -> int:
        self.n += 1
        return self.n


def _present(fl: Field, version: int, flexible: bool) -> bool:
    if version not in fl.versions:
        return False
    return not (fl.tag is not None and version in fl.tagged and not flexible)


def _filled_scalar(t: FieldType, c: _Counter) -> Any:
    n = c.next()
    if t.name == "bool":
        return True
    if t.name in _FIXED:
        return n
    if t.name == "uuid":
        return uuid.UUID(bytes=bytes([n % 256]) + bytes(14) + bytes([n % 256]))
    if t.name == "string":
        return f"s{n}"
    return bytes(ord("A") + (n + i) % 26 for i in range(3))  # bytes, records


def _filled(t: FieldType | StructType, version: int, flexible: bool, c: _Counter) -> Any:
    if isinstance(t, StructType):
        return filled_value(t, version, flexible, c)
    if isinstance(t, ArrayType):
        return [_filled(t.element, version, flexible, c)]
    return _filled_scalar(t, c)


def filled_value(schema: StructType, version: int, flexible: bool, c: _Counter) -> Any:
    kw = {
        fl.name: _filled(fl.type, version, flexible, c)
        for fl in schema.fields
        if _present(fl, version, flexible)
    }
    return schema.cls(**kw)


# ---------------------------------------------------------------------------------------------------
# Walking our schema over the bytes


class _Walk:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0
        self.lines: list[tuple[bytes, str]] = []

    def take(self, n: int, what: str) -> bytes:
        if self.pos + n > len(self.data):
            raise SystemExit(f"bytes end inside {what}")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def uvarint(self, what: str) -> tuple[int, bytes]:
        start, value, shift = self.pos, 0, 0
        while True:
            b = self.take(1, what)[0]
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return value, self.data[start : self.pos]

    def emit(self, raw: bytes, note: str) -> None:
        self.lines.append((raw, note))

    def fixed(self, fmt: str, what: str) -> tuple[Any, bytes]:
        raw = self.take(struct.calcsize(fmt), what)
        return struct.unpack(fmt, raw)[0], raw

    def length(self, compact: bool, wide: bool, what: str) -> tuple[int, bytes]:
        """Length of a string (int16), bytes or array (int32): -1 is null."""
        if compact:
            n, raw = self.uvarint(what)
            return n - 1, raw
        return self.fixed(">i" if wide else ">h", what)

    def scalar(self, t: FieldType, flexible: bool, path: str, indent: str) -> None:
        if t.name in _FIXED:
            value, raw = self.fixed(_FIXED[t.name], path)
            self.emit(raw, f"{indent}{path} = {value!r}")
        elif t.name == "uuid":
            raw = self.take(16, path)
            self.emit(raw, f"{indent}{path} = {uuid.UUID(bytes=raw)}")
        else:
            is_string = t.name == "string"
            n, prefix = self.length(flexible, not is_string, path)
            if n < 0:
                self.emit(prefix, f"{indent}{path} = None")
                return
            payload = self.take(n, path)
            shown: Any = payload.decode() if is_string else payload
            self.emit(prefix + payload, f"{indent}{path} = {shown!r}")

    def field(
        self, t: FieldType | StructType, nullable: bool, version: int, flexible: bool, path: str, indent: str
    ) -> None:
        if isinstance(t, StructType):
            if nullable:
                marker, raw = self.fixed(">b", path)
                self.emit(raw, f"{indent}{path}: {'null' if marker < 0 else 'present'}")
                if marker < 0:
                    return
            self.struct(t, version, flexible, path + ".", indent + "  ")
        elif isinstance(t, ArrayType):
            n, raw = self.length(flexible, True, path)
            self.emit(raw, f"{indent}{path}: {'null' if n < 0 else f'{n} element(s)'}")
            for i in range(max(n, 0)):
                if isinstance(t.element, StructType):
                    self.struct(t.element, version, flexible, f"{path}[{i}].", indent + "  ")
                else:
                    self.field(t.element, False, version, flexible, f"{path}[{i}]", indent + "  ")
        else:
            self.scalar(t, flexible, path, indent)

    def struct(self, schema: StructType, version: int, flexible: bool, prefix: str, indent: str) -> None:
        tagged: dict[int, Field] = {}
        for fl in schema.fields:
            if not _present(fl, version, flexible):
                continue
            if flexible and fl.tag is not None and version in fl.tagged:
                tagged[fl.tag] = fl
                continue
            self.field(fl.type, version in fl.nullable, version, flexible, prefix + fl.name, indent)
        if not flexible:
            return
        count, raw = self.uvarint(f"tagged fields of {schema.name}")
        self.emit(raw, f"{indent}{prefix}<tagged fields: {count}>")
        for _ in range(count):
            tag, tag_raw = self.uvarint("tag")
            size, size_raw = self.uvarint("tag size")
            fl = tagged.get(tag)
            if fl is None:
                raise SystemExit(f"{schema.name}: tag {tag} is not in our schema at v{version}")
            self.emit(tag_raw + size_raw, f"{indent}{prefix}tag {tag} ({fl.name}), {size} bytes")
            end = self.pos + size
            self.field(fl.type, version in fl.nullable, version, flexible, prefix + fl.name, indent + "  ")
            if self.pos != end:
                raise SystemExit(
                    f"tag {tag} of {schema.name}: {size} bytes claimed, {self.pos - end + size} read"
                )


def _header(w: _Walk, api: Api, kind: str, version: int) -> None:
    if kind == "request":
        hv = api.request_header_version(version)
        (key, raw) = w.fixed(">h", "api_key")
        w.emit(raw, f"header v{hv}: api_key = {key} ({api.name})")
        (ver, raw) = w.fixed(">h", "api_version")
        w.emit(raw, f"header: api_version = {ver}")
        (cid, raw) = w.fixed(">i", "correlation_id")
        w.emit(raw, f"header: correlation_id = {cid}")
        n, prefix = w.length(False, False, "client_id")
        note = " (int16 length even in v2)" if hv == 2 else ""
        w.emit(prefix + w.take(n, "client_id"), f"header: client_id = {_CLIENT_ID!r}{note}")
        if hv == 2:
            count, raw = w.uvarint("header tags")
            w.emit(raw, f"header: <tagged fields: {count}>")
    else:
        hv = api.response_header_version(version)
        (cid, raw) = w.fixed(">i", "correlation_id")
        w.emit(raw, f"header v{hv}: correlation_id = {cid}")
        if hv == 1:
            count, raw = w.uvarint("header tags")
            w.emit(raw, f"header: <tagged fields: {count}>")


def _format(lines: list[tuple[bytes, str]]) -> list[str]:
    out = []
    for raw, note in lines:
        chunks = [raw[i : i + _HEX_WIDTH] for i in range(0, len(raw), _HEX_WIDTH)] or [b""]
        for i, chunk in enumerate(chunks):
            text = " ".join(f"{b:02x}" for b in chunk).ljust(3 * _HEX_WIDTH)
            shown = note if i == 0 else re.sub(r"\S.*", "  (continued)", note, count=1)
            if len(shown) > 110:
                shown = shown[:107] + "..."
            out.append(f"{text} ; {shown}")
    return out


def _resolve(value: Any, path: str) -> Any:
    obj = value
    for token in re.findall(r"[A-Za-z_]\w*|\[\d+\]", path):
        obj = obj[int(token[1:-1])] if token.startswith("[") else getattr(obj, token)
    return obj


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("module", help="kraft.protocol.messages module, e.g. produce")
    parser.add_argument("kind", choices=("request", "response"))
    parser.add_argument("version", type=int)
    parser.add_argument("--api", default="API", help="the module's Api to serve it with (e.g. CLIENT_API)")
    parser.add_argument("--correlation-id", type=int, default=None)
    parser.add_argument("--expect", action="append", default=[], help="a path into the body to check")
    parser.add_argument("--title", default="", help="said after the vector's name on its first line")
    ns = parser.parse_args(argv)

    module = importlib.import_module(f"kraft.protocol.messages.{ns.module}")
    api: Api = getattr(module, ns.api)
    version, flexible = ns.version, api.is_flexible(ns.version)
    schema = api.request if ns.kind == "request" else api.response
    correlation_id = ns.correlation_id if ns.correlation_id is not None else version
    value = filled_value(schema, version, flexible, _Counter(correlation_id))

    kp_cls = KAFKA_PYTHON[api.key][0 if ns.kind == "request" else 1]
    kp_msg = to_kp(schema, value, kp_cls, version)
    if ns.kind == "request":
        kp_msg.with_header(correlation_id=correlation_id, client_id=_CLIENT_ID)
        data = bytes(kp_msg.encode(version=version, header=True))
    else:
        kp_msg.with_header(correlation_id=correlation_id)
        data = bytes(kp_msg.encode(header=True))  # (the version was fixed at construction)

    walk = _Walk(data)
    _header(walk, api, ns.kind, version)
    walk.struct(schema, version, flexible, "", "")
    if walk.pos != len(data) or b"".join(raw for raw, _ in walk.lines) != data:
        raise SystemExit(f"our schema walked {walk.pos} of kafka-python's {len(data)} bytes")

    hv = api.request_header_version(version) if ns.kind == "request" else api.response_header_version(version)
    title = f"{api.name} v{version} {ns.kind}" + (f": {ns.title}" if ns.title else "")
    out = [
        f"# {title}",
        f"# kind: {ns.kind}",
        f"# api_key: {api.key}",
        f"# version: {version}",
    ]
    if ns.api != "API":
        out.append(f"# api: {ns.module}.{ns.api}")
    call = f"{kp_cls.__name__}(...).with_header(correlation_id={correlation_id}"
    call += f", client_id={_CLIENT_ID!r});" if ns.kind == "request" else ");"
    out += [
        f"# source: kafka-python 3.0.12: {call}",
        f"# source: encode(header=True) of the values annotated below (every field of v{version} set).",
        "# source: Annotations come from walking our schema (tests/golden/make_protocol_vector.py) and",
        f"# source: were checked to concatenate to exactly these bytes. Header v{hv}.",
    ]
    for path in ns.expect:
        expected = _resolve(value, path)
        shown = str(expected) if isinstance(expected, uuid.UUID) else expected  # (the test's form)
        out.append(f"# expect: {path} = {shown!r}")
    out += _format(walk.lines)
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
