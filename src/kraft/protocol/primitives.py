"""Kafka wire primitives: fixed-width integers, varints, strings, bytes, UUIDs.

``Writer`` appends to a ``bytearray``; ``Reader`` walks a ``memoryview`` and checks every length
against the bytes that are really left *before* it allocates anything, so a hostile length field
costs nothing but a ``MalformedMessageError`` that names the field.

Varints follow Kafka's ``ByteUtils``: ``varint``/``varlong`` are zig-zag encoded, unsigned varints
are plain base-128 little-endian groups with the continuation bit 0x80.
"""

from __future__ import annotations

import struct
import uuid
from typing import Any

from kraft.common.errors import MalformedMessageError

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_U16 = struct.Struct(">H")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_F64 = struct.Struct(">d")

# Writer.bool and Reader.bool shadow the builtin inside their classes; annotate with this alias.
_Bool = bool

# Kafka's generated code refuses strings longer than this in every encoding, compact included.
MAX_STRING_BYTES = 0x7FFF

INT8_MIN, INT8_MAX = -(1 << 7), (1 << 7) - 1
INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1


def zigzag32(n: int) -> int:
    return ((n << 1) ^ (n >> 31)) & 0xFFFFFFFF


def zigzag64(n: int) -> int:
    return ((n << 1) ^ (n >> 63)) & 0xFFFFFFFFFFFFFFFF


def unzigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def encode_unsigned_varint(n: int) -> bytes:
    """Base-128 little-endian groups; ``n`` must be non-negative."""
    if n < 0:
        raise ValueError(f"unsigned varint cannot encode {n}")
    if n < 0x80:
        return bytes((n,))
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def encode_varint(n: int) -> bytes:
    if not INT32_MIN <= n <= INT32_MAX:
        raise ValueError(f"varint out of int32 range: {n}")
    return encode_unsigned_varint(zigzag32(n))


def encode_varlong(n: int) -> bytes:
    if not INT64_MIN <= n <= INT64_MAX:
        raise ValueError(f"varlong out of int64 range: {n}")
    return encode_unsigned_varint(zigzag64(n))


def size_of_unsigned_varint(n: int) -> int:
    size = 1
    while n >= 0x80:
        n >>= 7
        size += 1
    return size


def size_of_varint(n: int) -> int:
    return size_of_unsigned_varint(zigzag32(n))


def size_of_varlong(n: int) -> int:
    return size_of_unsigned_varint(zigzag64(n))


class Writer:
    """Appends Kafka primitives to a growing buffer."""

    __slots__ = ("buf",)

    def __init__(self, buf: bytearray | None = None) -> None:
        self.buf = buf if buf is not None else bytearray()

    def getvalue(self) -> bytes:
        return bytes(self.buf)

    def bool(self, v: _Bool) -> None:
        self.buf.append(1 if v else 0)

    def int8(self, v: int) -> None:
        self.buf += _I8.pack(v)

    def int16(self, v: int) -> None:
        self.buf += _I16.pack(v)

    def uint16(self, v: int) -> None:
        self.buf += _U16.pack(v)

    def int32(self, v: int) -> None:
        self.buf += _I32.pack(v)

    def uint32(self, v: int) -> None:
        self.buf += _U32.pack(v)

    def int64(self, v: int) -> None:
        self.buf += _I64.pack(v)

    def float64(self, v: float) -> None:
        self.buf += _F64.pack(v)

    def uuid(self, v: uuid.UUID) -> None:
        self.buf += v.bytes

    def unsigned_varint(self, v: int) -> None:
        if 0 <= v < 0x80:  # one byte: counts, small lengths, tags
            self.buf.append(v)
        else:
            self.buf += encode_unsigned_varint(v)

    def varint(self, v: int) -> None:
        self.buf += encode_varint(v)

    def varlong(self, v: int) -> None:
        self.buf += encode_varlong(v)

    def raw(self, data: bytes | bytearray | memoryview) -> None:
        self.buf += data

    # Strings and bytes. ``compact`` selects the flexible-version form: unsigned varint of length + 1.
    def string(self, v: str | None, *, compact: _Bool, nullable: _Bool = False) -> None:
        if v is None:
            if not nullable:
                raise ValueError("null given for a non-nullable string")
            if compact:
                self.buf.append(0)
            else:
                self.int16(-1)
            return
        data = v.encode("utf-8")
        if len(data) > MAX_STRING_BYTES:
            raise ValueError(f"string of {len(data)} bytes exceeds Kafka's limit of {MAX_STRING_BYTES}")
        if compact:
            self.unsigned_varint(len(data) + 1)
        else:
            self.int16(len(data))
        self.buf += data

    def bytes_(
        self, v: bytes | bytearray | memoryview | None, *, compact: _Bool, nullable: _Bool = False
    ) -> None:
        if v is None:
            if not nullable:
                raise ValueError("null given for non-nullable bytes")
            if compact:
                self.buf.append(0)
            else:
                self.int32(-1)
            return
        if compact:
            self.unsigned_varint(len(v) + 1)
        else:
            self.int32(len(v))
        self.buf += v

    def array_length(self, n: int | None, *, compact: _Bool) -> None:
        if n is None:
            if compact:
                self.buf.append(0)
            else:
                self.int32(-1)
        elif compact:
            if 0 <= n < 0x7F:
                self.buf.append(n + 1)
            else:
                self.unsigned_varint(n + 1)
        else:
            self.int32(n)


_UUIDS: dict[bytes, uuid.UUID] = {}


def shared_uuid(raw: bytes) -> uuid.UUID:
    """One UUID object per distinct id lately decoded (they are immutable): a broker reads the same
    few topic ids in every Fetch and Produce, directory and topic ids repeat across thousands of
    partition records, and ``uuid.UUID(bytes=...)`` is Python code that costs more than the rest of
    such a record. Emptied when full: any mix of ids stays correct, only slower."""
    found = _UUIDS.get(raw)
    if found is None:
        if len(_UUIDS) >= 65536:
            _UUIDS.clear()
        found = _UUIDS[raw] = uuid.UUID(bytes=raw)
    return found


class Reader:
    """Reads Kafka primitives from a buffer, bounds-checked against the bytes actually present.

    ``what`` arguments name the field being read so a decode error says what was wrong.
    """

    __slots__ = ("_end", "_view", "pos")

    def __init__(self, data: bytes | bytearray | memoryview, pos: int = 0, end: int | None = None) -> None:
        view = memoryview(data)
        if view.ndim != 1 or view.itemsize != 1:
            view = view.cast("B")
        self._view = view
        self.pos = pos
        self._end = len(view) if end is None else end
        if not 0 <= pos <= self._end <= len(view):
            raise ValueError(f"reader window [{pos}, {self._end}) lies outside a buffer of {len(view)} bytes")

    @property
    def remaining(self) -> int:
        return self._end - self.pos

    def _need(self, n: int, what: str) -> int:
        start = self.pos
        if n > self._end - start:
            raise MalformedMessageError(
                f"truncated {what}: needs {n} bytes at position {start}, {self._end - start} left"
            )
        self.pos = start + n
        return start

    def bool(self, what: str = "boolean") -> _Bool:
        start = self._need(1, what)
        b = self._view[start]
        # Kafka reads any non-zero byte as true.
        return b != 0

    def int8(self, what: str = "int8") -> int:
        return int(_I8.unpack_from(self._view, self._need(1, what))[0])

    def int16(self, what: str = "int16") -> int:
        return int(_I16.unpack_from(self._view, self._need(2, what))[0])

    def uint16(self, what: str = "uint16") -> int:
        return int(_U16.unpack_from(self._view, self._need(2, what))[0])

    def int32(self, what: str = "int32") -> int:
        return int(_I32.unpack_from(self._view, self._need(4, what))[0])

    def uint32(self, what: str = "uint32") -> int:
        return int(_U32.unpack_from(self._view, self._need(4, what))[0])

    def int64(self, what: str = "int64") -> int:
        return int(_I64.unpack_from(self._view, self._need(8, what))[0])

    def float64(self, what: str = "float64") -> float:
        return float(_F64.unpack_from(self._view, self._need(8, what))[0])

    def uuid(self, what: str = "uuid") -> uuid.UUID:
        start = self._need(16, what)
        return shared_uuid(bytes(self._view[start : start + 16]))

    def unsigned_varint(self, what: str = "unsigned varint", *, max_bytes: int = 5) -> int:
        """Base-128 groups, at most ``max_bytes`` long (5 for 32 bits, 10 for 64 bits)."""
        pos = self.pos
        end = self._end
        view = self._view
        if pos < end:
            b = view[pos]
            if b < 0x80:  # one-byte fast path: counts, small lengths, tags
                self.pos = pos + 1
                return int(b)
        value = 0
        shift = 0
        for _ in range(max_bytes):
            if pos >= end:
                raise MalformedMessageError(f"truncated {what}: varint runs past the end at position {pos}")
            b = view[pos]
            pos += 1
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                self.pos = pos
                bits = 32 if max_bytes <= 5 else 64
                if value >> bits:
                    raise MalformedMessageError(f"invalid {what}: value does not fit {bits} bits")
                return value
            shift += 7
        raise MalformedMessageError(f"invalid {what}: varint longer than {max_bytes} bytes")

    def varint(self, what: str = "varint") -> int:
        return unzigzag(self.unsigned_varint(what, max_bytes=5))

    def varlong(self, what: str = "varlong") -> int:
        return unzigzag(self.unsigned_varint(what, max_bytes=10))

    def skip_zero(self) -> _Bool:
        """Consume the next byte if it is 0 (an empty tagged section, an empty count)."""
        pos = self.pos
        if pos < self._end and self._view[pos] == 0:
            self.pos = pos + 1
            return True
        return False

    def fixed(self, packer: struct.Struct) -> tuple[Any, ...] | None:
        """The values of a run of fixed-width fields in one unpack, or None (nothing consumed) if
        fewer bytes remain than the run takes: the caller then reads them one by one, so that the
        error names the field that is cut."""
        start = self.pos
        if packer.size > self._end - start:
            return None
        self.pos = start + packer.size
        return packer.unpack_from(self._view, start)

    def raw(self, n: int, what: str = "bytes") -> bytes:
        if n < 0:
            raise MalformedMessageError(f"invalid {what}: negative length {n}")
        start = self._need(n, what)
        return bytes(self._view[start : start + n])

    def view(self, n: int, what: str = "bytes") -> memoryview:
        """Like ``raw`` but without copying."""
        if n < 0:
            raise MalformedMessageError(f"invalid {what}: negative length {n}")
        start = self._need(n, what)
        return self._view[start : start + n]

    def _length(self, what: str, *, compact: _Bool, wide: _Bool, nullable: _Bool) -> int | None:
        if compact:
            n = self.unsigned_varint(f"length of {what}") - 1
        elif wide:
            n = self.int32(f"length of {what}")
        else:
            n = self.int16(f"length of {what}")
        if n < 0:
            if n == -1 and nullable:
                return None
            raise MalformedMessageError(f"invalid length {n} for {what}")
        if n > self._end - self.pos:
            raise MalformedMessageError(
                f"truncated {what}: length {n} claims more than the {self._end - self.pos} bytes left"
            )
        return n

    def string(self, what: str = "string", *, compact: _Bool, nullable: _Bool = False) -> str | None:
        n = self._length(what, compact=compact, wide=False, nullable=nullable)
        if n is None:
            return None
        if n > MAX_STRING_BYTES:
            raise MalformedMessageError(f"invalid length {n} for {what}: the limit is {MAX_STRING_BYTES}")
        start = self._need(n, what)
        try:
            return str(self._view[start : start + n], "utf-8")
        except UnicodeDecodeError as e:
            raise MalformedMessageError(f"invalid UTF-8 in {what}: {e.reason}") from None

    def bytes_(self, what: str = "bytes", *, compact: _Bool, nullable: _Bool = False) -> bytes | None:
        n = self._length(what, compact=compact, wide=True, nullable=nullable)
        if n is None:
            return None
        return self.raw(n, what)

    def array_length(self, what: str = "array", *, compact: _Bool, nullable: _Bool = False) -> int | None:
        if compact:
            n = self.unsigned_varint(f"length of {what}") - 1
        else:
            n = self.int32(f"length of {what}")
        if n < 0:
            if n == -1 and nullable:
                return None
            raise MalformedMessageError(f"invalid element count {n} for {what}")
        # Every element takes at least one byte in any encoding we speak except empty structs, so a
        # count above the bytes left is a lie and must not drive allocation.
        if n > self._end - self.pos:
            raise MalformedMessageError(
                f"truncated {what}: {n} elements claimed, {self._end - self.pos} bytes left"
            )
        return n
