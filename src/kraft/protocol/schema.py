"""Messages described once, as data, and the one codec that serves them all.

A message is a ``StructType``: an ordered list of ``Field`` declarations, each with its type, the
versions it exists in, the versions it may be null in, and (for KIP-482 tagged fields) its tag and
tagged versions. ``StructType.encode(value, version, flexible)`` and ``StructType.decode(reader,
version, flexible)`` follow the declarations through a plan built once per (version, flexible)
pair: the fields present in that version, in wire order, with runs of fixed-width numbers packed
by one ``struct`` call, written out as one Python function each way (``_generated_codec``, the way
``dataclasses`` writes ``__init__``), so a message costs no loop over its declarations.

Decoded values are instances of a small class generated per struct (``StructType.cls``): slotted,
keyword-constructed, with defaults for omitted fields, equality and a readable ``repr``. Field names
are snake_case versions of Kafka's JSON names (``LeaderEpoch`` -> ``leader_epoch``).

Rules followed exactly (Kafka's message generator is the reference):
* Non-flexible versions use int16/int32 length prefixes and no tagged sections.
* Flexible versions use compact (unsigned varint length + 1) strings, bytes, records and arrays, and
  every struct ends with a tagged-field section: count, then (tag, size, bytes) in ascending tag order.
* A tagged field is written only when its value differs from its default; absent tags decode to the
  default; unknown tags are kept (``_unknown_tags``) and written back, so decode-encode is exact.
* Writing a non-default value for a field that does not exist in the target version raises
  ``ValueError`` unless the field is ``ignorable`` (then it is dropped), as Kafka does.
"""

from __future__ import annotations

import keyword
import operator
import re
import struct as _struct
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast, dataclass_transform

from kraft.common.errors import MalformedMessageError
from kraft.common.uuids import ZERO_UUID
from kraft.protocol.primitives import Reader, Writer

# ---------------------------------------------------------------------------------------------------
# Version ranges


@dataclass(frozen=True, slots=True)
class Versions:
    """An inclusive version range; ``NONE`` is empty. Parsed from Kafka's "0+", "1-3", "2", "none"."""

    low: int
    high: int  # inclusive; 0x7FFF for "N+"

    def __contains__(self, version: int) -> bool:
        return self.low <= version <= self.high

    @property
    def empty(self) -> bool:
        return self.low > self.high

    @staticmethod
    def parse(text: str | Versions | None) -> Versions:
        if isinstance(text, Versions):
            return text
        if text is None or text == "none" or text == "":
            return NONE
        text = text.strip()
        if text.endswith("+"):
            return Versions(int(text[:-1]), 0x7FFF)
        if "-" in text:
            low, high = text.split("-")
            return Versions(int(low), int(high))
        return Versions(int(text), int(text))

    def __str__(self) -> str:
        if self.empty:
            return "none"
        if self.high == 0x7FFF:
            return f"{self.low}+"
        if self.low == self.high:
            return str(self.low)
        return f"{self.low}-{self.high}"


NONE = Versions(1, 0)
ALL = Versions(0, 0x7FFF)


# ---------------------------------------------------------------------------------------------------
# Types


class FieldType:
    """Base of the wire types. ``name`` matches Kafka's JSON type names."""

    name: str = ""

    def zero(self) -> Any:
        raise NotImplementedError

    def encoder(self, version: int, flexible: bool, nullable: bool) -> Callable[[Writer, Any], None]:
        raise NotImplementedError

    def decoder(self, version: int, flexible: bool, nullable: bool, what: str) -> Callable[[Reader], Any]:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


class _Fixed(FieldType):
    def __init__(self, name: str, zero: Any, code: str | None) -> None:
        self.name = name
        self._name = name
        self._zero = zero
        # Its ``struct`` format character: runs of such fields are packed and unpacked at once
        # (``_Plan``). None for a UUID (a UUID object, not a number).
        self.code = code

    def zero(self) -> Any:
        return self._zero

    def encoder(self, version: int, flexible: bool, nullable: bool) -> Callable[[Writer, Any], None]:
        table: dict[str, Callable[[Writer, Any], None]] = {
            "bool": Writer.bool,
            "int8": Writer.int8,
            "int16": Writer.int16,
            "uint16": Writer.uint16,
            "int32": Writer.int32,
            "uint32": Writer.uint32,
            "int64": Writer.int64,
            "float64": Writer.float64,
            "uuid": Writer.uuid,
        }
        return table[self._name]

    def decoder(self, version: int, flexible: bool, nullable: bool, what: str) -> Callable[[Reader], Any]:
        method = {
            "bool": Reader.bool,
            "int8": Reader.int8,
            "int16": Reader.int16,
            "uint16": Reader.uint16,
            "int32": Reader.int32,
            "uint32": Reader.uint32,
            "int64": Reader.int64,
            "float64": Reader.float64,
            "uuid": Reader.uuid,
        }[self._name]
        return lambda r: method(r, what)


# "?" packs any value as its truth (Writer.bool) and unpacks any non-zero byte as True (Reader.bool).
BOOL = _Fixed("bool", False, "?")
INT8 = _Fixed("int8", 0, "b")
INT16 = _Fixed("int16", 0, "h")
UINT16 = _Fixed("uint16", 0, "H")
INT32 = _Fixed("int32", 0, "i")
UINT32 = _Fixed("uint32", 0, "I")
INT64 = _Fixed("int64", 0, "q")
FLOAT64 = _Fixed("float64", 0.0, "d")
UUID = _Fixed("uuid", ZERO_UUID, None)


class _String(FieldType):
    name = "string"

    def zero(self) -> Any:
        return ""

    def encoder(self, version: int, flexible: bool, nullable: bool) -> Callable[[Writer, Any], None]:
        return lambda w, v: w.string(v, compact=flexible, nullable=nullable)

    def decoder(self, version: int, flexible: bool, nullable: bool, what: str) -> Callable[[Reader], Any]:
        return lambda r: r.string(what, compact=flexible, nullable=nullable)


class _Bytes(FieldType):
    name = "bytes"

    def zero(self) -> Any:
        return b""

    def encoder(self, version: int, flexible: bool, nullable: bool) -> Callable[[Writer, Any], None]:
        return lambda w, v: w.bytes_(v, compact=flexible, nullable=nullable)

    def decoder(self, version: int, flexible: bool, nullable: bool, what: str) -> Callable[[Reader], Any]:
        return lambda r: r.bytes_(what, compact=flexible, nullable=nullable)


class _Records(_Bytes):
    """A record set: bytes on the wire (int32 or compact length), always nullable in Kafka."""

    name = "records"


STRING = _String()
BYTES = _Bytes()
RECORDS = _Records()


# (name, encode, decode) of one field present in a plan's version
_FieldCodec = tuple[str, Callable[[Writer, Any], None], Callable[[Reader], Any]]
# a plan's step: (None, [one field]) or (packer, [a run of fixed-width numbers])
_Step = tuple[_struct.Struct | None, list[_FieldCodec]]

_CACHED_ARRAY_LENGTH = 64  # arrays of numbers up to this length keep their packer


class ArrayType(FieldType):
    """``[]T`` for a primitive or struct element type."""

    def __init__(self, element: FieldType | StructType) -> None:
        self.element = element
        self.name = f"[]{element.name}"

    def zero(self) -> Any:
        return []

    def encoder(self, version: int, flexible: bool, nullable: bool) -> Callable[[Writer, Any], None]:
        enc_elem: Callable[[Writer, Any], None]
        if isinstance(self.element, StructType):
            enc_elem = self.element.plan(version, flexible).encode
        else:
            enc_elem = self.element.encoder(version, flexible, False)

        code = self.element.code if isinstance(self.element, _Fixed) else None
        packers: dict[int, _struct.Struct] = {}  # by length (arrays of replicas: a few lengths)

        def enc(w: Writer, v: Any) -> None:
            if v is None:
                if not nullable:
                    raise ValueError(f"null given for non-nullable array {self.name}")
                w.array_length(None, compact=flexible)
                return
            w.array_length(len(v), compact=flexible)
            if code is not None and v:
                packer = packers.get(len(v))
                if packer is None:
                    packer = _struct.Struct(f">{len(v)}{code}")
                    if len(v) <= _CACHED_ARRAY_LENGTH:  # (a peer picks the lengths: bound the cache)
                        packers[len(v)] = packer
                try:  # numbers: the whole array in one pack (one at a time below if it fails)
                    w.buf += packer.pack(*v)
                    return
                except (TypeError, _struct.error):
                    pass
            for item in v:
                enc_elem(w, item)

        return enc

    def decoder(self, version: int, flexible: bool, nullable: bool, what: str) -> Callable[[Reader], Any]:
        dec_elem: Callable[[Reader], Any]
        if isinstance(self.element, StructType):
            dec_elem = self.element.plan(version, flexible).decode
        else:
            dec_elem = self.element.decoder(version, flexible, False, f"element of {what}")

        code = self.element.code if isinstance(self.element, _Fixed) else None
        packers: dict[int, _struct.Struct] = {}

        def dec(r: Reader) -> Any:
            n = r.array_length(what, compact=flexible, nullable=nullable)
            if n is None:
                return None
            if code is not None and n:
                packer = packers.get(n)
                if packer is None:
                    packer = _struct.Struct(f">{n}{code}")
                    if n <= _CACHED_ARRAY_LENGTH:  # (a peer picks the lengths: bound the cache)
                        packers[n] = packer
                values = r.fixed(packer)
                if values is not None:
                    return list(values)
            return [dec_elem(r) for _ in range(n)]

        return dec


def array(element: FieldType | StructType) -> ArrayType:
    return ArrayType(element)


# ---------------------------------------------------------------------------------------------------
# Fields and structs

_MISSING: Any = object()
_SNAKE_1 = re.compile(r"(.)([A-Z][a-z]+)")
_SNAKE_2 = re.compile(r"([a-z0-9])([A-Z])")


def snake_case(name: str) -> str:
    return _SNAKE_2.sub(r"\1_\2", _SNAKE_1.sub(r"\1_\2", name)).lower()


@dataclass(frozen=True, slots=True)
class Field:
    """One declared field.

    ``default``: the declared default (Kafka's JSON "default"); ``_MISSING`` means the type's zero
    value. Use ``None`` for a nullable field whose default is null.
    """

    name: str
    type: FieldType | StructType
    versions: Versions
    nullable: Versions = NONE
    tagged: Versions = NONE
    tag: int | None = None
    default: Any = _MISSING
    ignorable: bool = False

    def default_value(self) -> Any:
        if self.default is not _MISSING:
            d = self.default
            return list(d) if isinstance(d, list) else d
        if isinstance(self.type, StructType):
            return self.type.cls()
        return self.type.zero()


# Defaults of these types are immutable: one object serves every message (a list or a struct
# default is made fresh each time, since the caller may change it).
_IMMUTABLE = (bool, int, float, str, bytes, uuid.UUID)


def _shared_default(fl: Field) -> Any:
    """``fl``'s default if it is immutable (the same object every time), else ``_MISSING``."""
    if fl.default is not _MISSING:
        d = fl.default
    elif isinstance(fl.type, StructType):
        return _MISSING
    else:
        d = fl.type.zero()
    return d if d is None or isinstance(d, _IMMUTABLE) else _MISSING


def f(
    name: str,
    type_: FieldType | StructType,
    versions: str | Versions = "0+",
    *,
    nullable: str | Versions | None = None,
    tagged: str | Versions | None = None,
    tag: int | None = None,
    default: Any = _MISSING,
    ignorable: bool = False,
) -> Field:
    """Declare a field; ``name`` may be Kafka's CamelCase name or snake_case."""
    tagged_versions = Versions.parse(tagged)
    if tag is not None and tagged_versions.empty:
        tagged_versions = Versions.parse(versions)
    return Field(
        name=snake_case(name),
        type=type_,
        versions=Versions.parse(versions),
        nullable=Versions.parse(nullable),
        tagged=tagged_versions,
        tag=tag,
        default=default,
        ignorable=ignorable,
    )


@dataclass_transform(kw_only_default=True)
class StructValue:
    """Base of generated struct classes (a ``dataclass_transform`` base for the type checker only:
    the typed stubs of ``kraft.protocol.messages`` declare each class's fields, and the checker
    derives its keyword constructor from them; nothing changes at run time)."""

    __slots__ = ("_unknown_tags",)
    _schema: ClassVar[StructType]

    if TYPE_CHECKING:  # every struct class gets a generated keyword __init__ (_generated_init)

        def __init__(self, **kwargs: Any) -> None: ...

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        values = self._schema.values  # (the encoder compares each tagged struct with its default)
        return values is None or values(self) == values(other)

    def __hash__(self) -> int:  # mutable value objects: identity hash is wrong, so forbid it
        raise TypeError(f"unhashable type: {type(self).__name__}")

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._schema.field_names)
        return f"{self._schema.name}({inner})"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for n in self._schema.field_names:
            v = getattr(self, n)
            if isinstance(v, StructValue):
                v = v.to_dict()
            elif isinstance(v, list):
                v = [x.to_dict() if isinstance(x, StructValue) else x for x in v]
            out[n] = v
        return out


if TYPE_CHECKING:  # PEP 696 (typing_extensions): a bare ``StructType`` is ``StructType[StructValue]``
    from typing_extensions import TypeVar as _TypeVar

    _T = _TypeVar("_T", bound=StructValue, covariant=True, default=StructValue)
else:
    _T = TypeVar("_T", bound=StructValue, covariant=True)


class StructType(Generic[_T]):
    """A struct: a message body, an array element or a nested struct field.

    Generic in its value class for the type checker only: ``struct(...)`` makes a
    ``StructType[StructValue]``, and the stubs written by ``kraft.protocol.stubs`` next to each message
    module declare ``REQUEST: StructType[XRequest]``, so ``REQUEST.cls`` is ``type[XRequest]``.
    """

    def __init__(self, name: str, fields: Sequence[Field]) -> None:
        self.name = name
        self.fields: tuple[Field, ...] = tuple(fields)
        self.field_names: tuple[str, ...] = tuple(fl.name for fl in self.fields)
        # Every field of a value at once (a tuple, or the one value), for __eq__; None: no field.
        self.values: Callable[[Any], Any] | None = (
            operator.attrgetter(*self.field_names) if self.field_names else None
        )
        if len(set(self.field_names)) != len(self.field_names):
            raise ValueError(f"duplicate field names in {name}")
        for n in self.field_names:  # the codec writes them out as Python source (_generated_codec)
            if not n.isidentifier() or keyword.iskeyword(n) or n.startswith("_"):
                raise ValueError(f"field name {n!r} of {name} is not a plain Python identifier")
        self._plans: dict[tuple[int, bool], _Plan] = {}
        # (name, shared default or _MISSING, field) per field, for the generated __init__
        self.init_plan: tuple[tuple[str, Any, Field], ...] = tuple(
            (fl.name, _shared_default(fl), fl) for fl in self.fields
        )
        self.cls: type[_T] = cast(
            "type[_T]", type(name, (StructValue,), {"__slots__": self.field_names, "_schema": self})
        )
        self.cls.__init__ = _generated_init(self)  # type: ignore[method-assign]
        # Nested struct classes are reachable as attributes: FetchResponse.cls.PartitionData
        for fl in self.fields:
            inner = fl.type.element if isinstance(fl.type, ArrayType) else fl.type
            if isinstance(inner, StructType):
                setattr(self.cls, inner.name, inner.cls)

    @property
    def struct_name(self) -> str:
        return self.name

    def __call__(self, **kwargs: Any) -> Any:
        return self.cls(**kwargs)

    def zero(self) -> Any:
        return self.cls()

    def plan(self, version: int, flexible: bool) -> _Plan:
        key = (version, flexible)
        plan = self._plans.get(key)
        if plan is None:
            plan = _Plan(self, version, flexible)
            self._plans[key] = plan
        return plan

    def encode(self, value: Any, version: int, flexible: bool, writer: Writer | None = None) -> bytes:
        w = writer if writer is not None else Writer()
        self.plan(version, flexible).encode(w, value)
        return w.getvalue()

    def decode(self, data: bytes | bytearray | memoryview | Reader, version: int, flexible: bool) -> Any:
        r = data if isinstance(data, Reader) else Reader(data)
        return self.plan(version, flexible).decode(r)

    def iter_structs(self) -> Iterable[StructType[Any]]:
        yield self
        for fl in self.fields:
            inner = fl.type.element if isinstance(fl.type, ArrayType) else fl.type
            if isinstance(inner, StructType):
                yield from inner.iter_structs()


def _default_source(env: dict[str, Any], key: str, shared: Any, fl: Field) -> str:
    """The source of ``fl``'s default in generated code, with what it names put in ``env`` under
    ``key``: the shared immutable default itself, or a call that makes a fresh list or struct."""
    if shared is not _MISSING:
        env[key] = shared
        return key
    d = fl.default
    if d is _MISSING and isinstance(fl.type, StructType):
        env[key] = fl.type.cls  # a fresh zero struct; the class's own init fills it in
        return f"{key}()"
    if (d is _MISSING and isinstance(fl.type, ArrayType)) or (isinstance(d, list) and not d):
        return "[]"  # the usual mutable default, written as a literal (no call per message)
    env[key] = fl
    return f"{key}.default_value()"


def _generated_init(schema: StructType) -> Callable[..., None]:
    """A keyword-only ``__init__`` written out for ``schema``'s fields, as ``dataclasses`` does: a
    field left out gets its default (a fresh list or struct for each value), an unknown keyword is
    a TypeError."""
    env: dict[str, Any] = {"_MISSING": _MISSING, "_name": schema.name}
    params: list[str] = []
    body: list[str] = []
    for i, (name, shared, fl) in enumerate(schema.init_plan):
        default = _default_source(env, f"_f{i}", shared, fl)
        if shared is not _MISSING:  # an immutable default: the parameter's own default
            params.append(f"{name}={default}")
            body.append(f"    self.{name} = {name}")
        else:
            params.append(f"{name}=_MISSING")
            body.append(f"    self.{name} = {default} if {name} is _MISSING else {name}")
    params.append("_unknown_tags=None")
    params.append("**_extra")
    source = "\n".join(
        [
            f"def __init__(self, *, {', '.join(params)}):",
            "    if _extra:",
            "        raise TypeError(f'{_name} has no field(s) {sorted(_extra)}')",
            *body,
            "    self._unknown_tags = [] if _unknown_tags is None else _unknown_tags",
        ]
    )
    exec(source, env)  # built above from the field names, checked by StructType
    init: Callable[..., None] = env["__init__"]
    init.__qualname__ = f"{schema.name}.__init__"
    return init


def struct(name: str, fields: Sequence[Field]) -> StructType:
    return StructType(name, fields)


class _Plan:
    """The encode/decode steps of one struct at one (version, flexible)."""

    __slots__ = (
        "absent",
        "checked_absent",
        "decode",
        "defaults",
        "encode",
        "flexible",
        "regular",
        "schema",
        "steps",
        "tagged",
        "tagged_by_tag",
        "version",
    )

    def __init__(self, schema: StructType, version: int, flexible: bool) -> None:
        self.schema = schema
        self.version = version
        self.flexible = flexible
        # (name, encode, decode) in declaration order for non-tagged fields present in this version
        self.regular: list[_FieldCodec] = []
        # tagged fields present in this version: (tag, field, encode, decode), ascending tag
        tagged: list[tuple[int, Field, Callable[[Writer, Any], None], Callable[[Reader], Any]]] = []
        # fields that do not exist in this version: written only if default (or ignorable)
        self.absent: list[Field] = []
        for fl in schema.fields:
            nullable = version in fl.nullable
            what = f"{schema.name}.{fl.name}"
            if version not in fl.versions:
                self.absent.append(fl)
                continue
            is_tagged = flexible and fl.tag is not None and version in fl.tagged
            if fl.tag is not None and not is_tagged and version in fl.tagged and not flexible:
                # Tagged-only fields do not exist in non-flexible versions.
                self.absent.append(fl)
                continue
            if isinstance(fl.type, StructType):
                sub = fl.type
                enc, dec = self._struct_codec(sub, version, flexible, nullable)
            else:
                enc = fl.type.encoder(version, flexible, nullable)
                dec = fl.type.decoder(version, flexible, nullable, what)
            if is_tagged:
                assert fl.tag is not None
                tagged.append((fl.tag, fl, enc, dec))
            else:
                self.regular.append((fl.name, enc, dec))
        tagged.sort(key=lambda t: t[0])
        # tagged: (tag, field, encode, decode, default to compare with: never handed out)
        self.tagged = [(tag, fl, enc, dec, fl.default_value()) for tag, fl, enc, dec in tagged]
        # By tag, for decode: (decode, field name, what its size is, what its payload is)
        self.tagged_by_tag = {
            tag: (dec, fl.name, f"size of tag {tag} in {schema.name}", f"tagged field {tag} of {schema.name}")
            for tag, fl, _, dec in tagged
        }
        # What decode sets before reading the tags: the absent fields, then the tagged ones.
        self.defaults = [(fl.name, _shared_default(fl), fl) for fl in (*self.absent, *(t[1] for t in tagged))]
        # Absent fields that must hold their default to be written (the others are dropped).
        self.checked_absent = [(fl, fl.default_value()) for fl in self.absent if not fl.ignorable]
        self.steps = self._steps(schema, version)
        # The codec: functions written out for this plan's steps (``_generated_codec``).
        self.encode: Callable[[Writer, Any], None]
        self.decode: Callable[[Reader], Any]
        self.encode, self.decode = _generated_codec(self)

    def _steps(self, schema: StructType, version: int) -> list[_Step]:
        """The regular fields as steps: (None, [one field]), or (packer, [a run of two or more
        consecutive fixed-width numbers, ``_Fixed.code``]) packed or unpacked with one ``struct``
        call. A run keeps its fields' own codecs for the slow path: a value that does not pack, or a
        message cut inside the run, fails exactly as the field alone would, naming it."""
        codes: dict[str, str | None] = {}
        for fl in schema.fields:
            if version in fl.versions and isinstance(fl.type, _Fixed) and version not in fl.nullable:
                codes[fl.name] = fl.type.code
        runs: list[list[_FieldCodec]] = []
        for entry in self.regular:
            if codes.get(entry[0]) is not None and runs and runs[-1] and codes.get(runs[-1][-1][0]):
                runs[-1].append(entry)
            else:
                runs.append([entry])
        steps: list[_Step] = []
        for run in runs:
            if len(run) == 1 or codes.get(run[0][0]) is None:
                steps.extend((None, [entry]) for entry in run)
            else:
                steps.append((_struct.Struct(">" + "".join(codes[n] or "" for n, _, _ in run)), run))
        return steps

    @staticmethod
    def _struct_codec(
        sub: StructType, version: int, flexible: bool, nullable: bool
    ) -> tuple[Callable[[Writer, Any], None], Callable[[Reader], Any]]:
        def enc(w: Writer, v: Any) -> None:
            if nullable:
                # Nullable struct: int8 -1 for null, 1 then the struct (Kafka's nullable struct form).
                if v is None:
                    w.int8(-1)
                    return
                w.int8(1)
            sub.plan(version, flexible).encode(w, v)

        def dec(r: Reader) -> Any:
            if nullable:
                marker = r.int8(f"null marker of {sub.name}")
                if marker < 0:
                    return None
            return sub.plan(version, flexible).decode(r)

        return enc, dec

    def check_absent(self, value: Any) -> None:
        """Refuse a non-default value in a field this version does not have (unless ignorable)."""
        for fl, default in self.checked_absent:
            v = getattr(value, fl.name)
            if v != default:
                raise ValueError(
                    f"cannot write non-default {self.schema.name}.{fl.name}={v!r} at version {self.version}"
                )

    def _encode_loop(self, w: Writer, value: Any) -> None:
        self.check_absent(value)
        for packer, fields in self.steps:
            if packer is not None:
                try:
                    w.buf += packer.pack(*[getattr(value, name) for name, _, _ in fields])
                    continue
                except (TypeError, AttributeError, _struct.error):
                    pass  # field by field below: the error names the field
            for field_name, field_enc, _ in fields:
                try:
                    field_enc(w, getattr(value, field_name))
                except _FieldError:
                    raise
                except (ValueError, TypeError, OverflowError, AttributeError, _struct.error) as e:
                    raise _FieldError(f"cannot encode {self.schema.name}.{field_name}: {e}") from None
        if self.flexible:
            self.write_tagged(w, value)

    def write_tagged(self, w: Writer, value: Any) -> None:
        """The tagged-field section (flexible versions)."""
        to_write: list[tuple[int, bytes]] = []
        for tag, fl, enc, _, default in self.tagged:
            v = getattr(value, fl.name)
            # KIP-482: a tagged field equal to its default is simply left out.
            if v == default:
                continue
            sub = Writer()
            try:
                enc(sub, v)
            except _FieldError:
                raise
            except (ValueError, TypeError, OverflowError, AttributeError, _struct.error) as e:
                raise _FieldError(f"cannot encode {self.schema.name}.{fl.name}: {e}") from None
            to_write.append((tag, bytes(sub.buf)))
        unknown = getattr(value, "_unknown_tags", None) or []
        if unknown:
            to_write.extend(unknown)
            to_write.sort(key=lambda t: t[0])
        w.unsigned_varint(len(to_write))
        for tag, payload in to_write:
            w.unsigned_varint(tag)
            w.unsigned_varint(len(payload))
            w.raw(payload)

    def read_tagged(self, r: Reader, obj: Any) -> list[tuple[int, bytes]]:
        """Read the tagged-field section into ``obj``; returns the unknown tags."""
        schema = self.schema
        unknown: list[tuple[int, bytes]] = []
        if r.skip_zero():  # the usual case: no tagged field
            return unknown
        count = r.unsigned_varint(f"tagged field count of {schema.name}")
        # Each tagged field takes at least two bytes (tag and size), so a larger count is a lie.
        if count * 2 > r.remaining:
            raise MalformedMessageError(
                f"{schema.name}: {count} tagged fields claimed, {r.remaining} bytes left"
            )
        last_tag = -1
        by_tag = self.tagged_by_tag
        what_tag = f"tag in {schema.name}"
        for _ in range(count):
            tag = r.unsigned_varint(what_tag)
            known = by_tag.get(tag)
            if known is None:
                size = r.unsigned_varint(f"size of tag {tag} in {schema.name}")
            else:
                size = r.unsigned_varint(known[2])
            # KIP-482: tags are written in strictly ascending order, so a repeat or a step back
            # means a corrupt (or hostile) message, never a valid one.
            if tag <= last_tag:
                raise MalformedMessageError(
                    f"{schema.name}: tagged fields out of order ({tag} after {last_tag})"
                )
            last_tag = tag
            if known is None:
                unknown.append((tag, bytes(r.view(size, f"tagged field {tag} of {schema.name}"))))
                continue
            sub = Reader(r.view(size, known[3]))
            value = known[0](sub)
            if sub.remaining:
                raise MalformedMessageError(
                    f"{schema.name}: tagged field {tag} ({known[1]}) has {sub.remaining} trailing bytes"
                )
            object.__setattr__(obj, known[1], value)
        return unknown


def _generated_codec(plan: _Plan) -> tuple[Callable[[Writer, Any], None], Callable[[Reader], Any]]:
    """``plan``'s encode and decode written out as straight-line functions over its steps (one
    field, or a run of numbers packed at once), as ``dataclasses`` writes ``__init__``.

    Decode reads each step in order, sets the absent and tagged fields to their defaults, then
    reads the tagged section; a message cut inside a run is read field by field, which names the
    field that is cut. Encode writes each step; a value that fails makes ``_encode_loop`` (the same
    steps, one field at a time) run on a scratch writer and raise the error that names the field."""
    env: dict[str, Any] = {
        "_new": plan.schema.cls.__new__,
        "_cls": plan.schema.cls,
        "_loop": plan._encode_loop,
        "_Writer": Writer,
        "_check_absent": plan.check_absent,
        "_write_tagged": plan.write_tagged,
        "_read_tagged": plan.read_tagged,
    }
    enc = ["def encode(w, value):"]
    if plan.checked_absent:
        enc.append("    _check_absent(value)")
    enc.append("    try:")
    dec = ["def decode(r):", "    obj = _new(_cls)"]
    for i, (packer, fields) in enumerate(plan.steps):
        if packer is None:
            ((name, field_enc, field_dec),) = fields
            env[f"_e{i}"], env[f"_d{i}"] = field_enc, field_dec
            enc.append(f"        _e{i}(w, value.{name})")
            dec.append(f"    obj.{name} = _d{i}(r)")
            continue
        env[f"_p{i}"] = packer
        enc.append(f"        w.buf += _p{i}.pack({', '.join(f'value.{n}' for n, _, _ in fields)})")
        dec.append(f"    _v = r.fixed(_p{i})")
        dec.append("    if _v is None:")
        for j, (field_name, _, field_dec) in enumerate(fields):
            env[f"_d{i}_{j}"] = field_dec
            dec.append(f"        obj.{field_name} = _d{i}_{j}(r)")
        dec.append("    else:")
        dec.append(f"        {', '.join(f'obj.{n}' for n, _, _ in fields)}, = _v")
    if len(enc) == (3 if plan.checked_absent else 2):
        enc.append("        pass")
    enc += [
        "    except Exception:",
        "        _loop(_Writer(), value)  # raises the error that names the field",
        "        raise",
    ]
    if plan.flexible and plan.tagged:
        enc.append("    _write_tagged(w, value)")
    elif plan.flexible:  # no tagged field in this version: an empty section unless tags were kept
        enc += [
            "    if getattr(value, '_unknown_tags', None):",
            "        _write_tagged(w, value)",
            "    else:",
            "        w.buf.append(0)",
        ]
    for i, (name, shared, fl) in enumerate(plan.defaults):
        dec.append(f"    obj.{name} = {_default_source(env, f'_f{i}', shared, fl)}")
    dec.append(f"    obj._unknown_tags = {'_read_tagged(r, obj)' if plan.flexible else '[]'}")
    dec.append("    return obj")
    # The source is built from the field names (checked by StructType) and the names above.
    exec("\n".join(enc) + "\n\n" + "\n".join(dec), env)
    return env["encode"], env["decode"]


class _FieldError(ValueError):
    """An encode failure, annotated with the field that caused it."""
