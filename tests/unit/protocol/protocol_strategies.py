"""Value generators driven by the message schemas themselves.

``values(struct, version, flexible)`` is a Hypothesis strategy for instances of ``struct`` that are
valid at that version: every field present in the version gets an arbitrary value of its type (null
where the field is nullable in that version), tagged fields are sometimes left at their default and
sometimes not, and fields absent from the version keep their default so that encoding succeeds.

``full_value(struct, version, flexible, seed)`` is the deterministic counterpart used where a test
needs *every* field set to something other than its default (including every tagged field).
"""

from __future__ import annotations

import random
import uuid
from functools import cache
from typing import Any

from hypothesis import strategies as st

from kraft.protocol.primitives import (
    INT8_MAX,
    INT8_MIN,
    INT16_MAX,
    INT16_MIN,
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
)
from kraft.protocol.schema import ArrayType, Field, FieldType, StructType

_INT_RANGES = {
    "int8": (INT8_MIN, INT8_MAX),
    "int16": (INT16_MIN, INT16_MAX),
    "uint16": (0, 0xFFFF),
    "int32": (INT32_MIN, INT32_MAX),
    "uint32": (0, 0xFFFFFFFF),
    "int64": (INT64_MIN, INT64_MAX),
}


def _present(fl: Field, version: int, flexible: bool) -> bool:
    if version not in fl.versions:
        return False
    # A field that is tagged in this version only exists where tagged fields exist at all.
    return not (fl.tag is not None and version in fl.tagged and not flexible)


def _scalar(t: FieldType) -> st.SearchStrategy[Any]:
    if t.name == "bool":
        return st.booleans()
    if t.name in _INT_RANGES:
        lo, hi = _INT_RANGES[t.name]
        return st.integers(lo, hi)
    if t.name == "float64":
        return st.floats(allow_nan=False)
    if t.name == "uuid":
        return st.one_of(st.just(uuid.UUID(int=0)), st.uuids(allow_nil=True))
    if t.name == "string":
        return st.text(max_size=12)
    if t.name in ("bytes", "records"):
        return st.binary(max_size=24)
    raise AssertionError(f"no strategy for {t.name}")


def _type_strategy(t: FieldType | StructType, version: int, flexible: bool) -> st.SearchStrategy[Any]:
    if isinstance(t, StructType):
        return values(t, version, flexible)
    if isinstance(t, ArrayType):
        max_size = 2 if isinstance(t.element, StructType) else 4
        return st.lists(_type_strategy(t.element, version, flexible), max_size=max_size)
    return _scalar(t)


@cache
def values(struct: StructType, version: int, flexible: bool) -> st.SearchStrategy[Any]:
    parts: dict[str, st.SearchStrategy[Any]] = {}
    for fl in struct.fields:
        if not _present(fl, version, flexible):
            parts[fl.name] = st.just(fl.default_value()).map(_fresh)
            continue
        s = _type_strategy(fl.type, version, flexible)
        if version in fl.nullable:
            s = st.one_of(st.none(), s)
        if fl.tag is not None:
            s = st.one_of(st.just(fl.default_value()).map(_fresh), s)
        parts[fl.name] = s
    return st.fixed_dictionaries(parts).map(lambda kw: struct.cls(**kw))


def _fresh(v: Any) -> Any:
    # Defaults may be mutable (lists, struct values); never share them between generated values.
    if isinstance(v, list):
        return list(v)
    return v


# ---------------------------------------------------------------------------------------------------
# Deterministic values with every field away from its default


def _full_scalar(t: FieldType, rng: random.Random, default: Any) -> Any:
    for _ in range(20):
        if t.name == "bool":
            v: Any = not default
        elif t.name in _INT_RANGES:
            lo, hi = _INT_RANGES[t.name]
            v = rng.choice([rng.randint(lo, hi), rng.randint(max(lo, 0), min(hi, 1000)), lo, hi])
        elif t.name == "float64":
            v = rng.uniform(-1e6, 1e6)
        elif t.name == "uuid":
            v = uuid.UUID(int=rng.getrandbits(128))
        elif t.name == "string":
            v = rng.choice(["kraft", "é-ü", "topic-" + str(rng.randint(0, 99)), "x" * 130])
        else:
            v = bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 200)))
        if v != default:
            return v
    raise AssertionError(f"could not find a non-default {t.name}")


def _full_type(
    t: FieldType | StructType, version: int, flexible: bool, rng: random.Random, default: Any
) -> Any:
    if isinstance(t, StructType):
        return full_value(t, version, flexible, rng)
    if isinstance(t, ArrayType):
        return [
            _full_type(t.element, version, flexible, rng, _zero(t.element)) for _ in range(rng.randint(1, 3))
        ]
    return _full_scalar(t, rng, default)


def _zero(t: FieldType | StructType) -> Any:
    return t.zero()


def full_value(struct: StructType, version: int, flexible: bool, rng: random.Random | int = 0) -> Any:
    """An instance of ``struct`` with every field that exists in ``version`` set to a non-default value."""
    if not isinstance(rng, random.Random):
        rng = random.Random(rng)
    kw: dict[str, Any] = {}
    for fl in struct.fields:
        if not _present(fl, version, flexible):
            continue
        kw[fl.name] = _full_type(fl.type, version, flexible, rng, fl.default_value())
    return struct.cls(**kw)
