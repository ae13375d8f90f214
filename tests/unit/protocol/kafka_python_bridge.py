"""Translate message values between our schema classes and kafka-python 3.0.12's.

kafka-python builds its classes from its own copies of Kafka's JSON, so it is an independent
implementation of the same wire format. Its value conventions differ from ours in a few places,
all of them representation only (the bytes must still agree):

* a zero UUID decodes to ``None``;
* a tagged struct field at its default is ``None`` (ours: a struct holding the defaults);
* ``ClusterAuthorizedOperations``/``TopicAuthorizedOperations`` (int32) are patched into a
  ``bitfield`` named ``authorized_operations`` holding a set of bit numbers, ``None`` for
  -2147483648 (only bit 31);
* bytes may come back as ``memoryview``/``bytearray``.
"""

from __future__ import annotations

import uuid
from typing import Any

from kafka.protocol.admin import (
    AlterUserScramCredentialsRequest,
    AlterUserScramCredentialsResponse,
    CreateAclsRequest,
    CreateAclsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    DescribeAclsRequest,
    DescribeAclsResponse,
    DescribeClusterRequest,
    DescribeClusterResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
    DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
    UpdateFeaturesRequest,
    UpdateFeaturesResponse,
)
from kafka.protocol.admin.cluster import DescribeLogDirsRequest, DescribeLogDirsResponse
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.producer import (
    InitProducerIdRequest,
    InitProducerIdResponse,
    ProduceRequest,
    ProduceResponse,
)
from kafka.protocol.sasl import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

from kraft.common.uuids import ZERO_UUID
from kraft.protocol.schema import ArrayType, StructType

# api key -> (request class, response class)
KAFKA_PYTHON: dict[int, tuple[Any, Any]] = {
    0: (ProduceRequest, ProduceResponse),
    1: (FetchRequest, FetchResponse),
    2: (ListOffsetsRequest, ListOffsetsResponse),
    3: (MetadataRequest, MetadataResponse),
    17: (SaslHandshakeRequest, SaslHandshakeResponse),
    18: (ApiVersionsRequest, ApiVersionsResponse),
    19: (CreateTopicsRequest, CreateTopicsResponse),
    20: (DeleteTopicsRequest, DeleteTopicsResponse),
    22: (InitProducerIdRequest, InitProducerIdResponse),
    23: (OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse),
    29: (DescribeAclsRequest, DescribeAclsResponse),
    30: (CreateAclsRequest, CreateAclsResponse),
    31: (DeleteAclsRequest, DeleteAclsResponse),
    32: (DescribeConfigsRequest, DescribeConfigsResponse),
    35: (DescribeLogDirsRequest, DescribeLogDirsResponse),
    36: (SaslAuthenticateRequest, SaslAuthenticateResponse),
    43: (ElectLeadersRequest, ElectLeadersResponse),
    44: (IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse),
    50: (DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse),
    51: (AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse),
    55: (DescribeQuorumRequest, DescribeQuorumResponse),
    57: (UpdateFeaturesRequest, UpdateFeaturesResponse),
    60: (DescribeClusterRequest, DescribeClusterResponse),
    75: (DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse),
}

_BITFIELD_NAME = "authorized_operations"


def _kp_field(kp_struct: Any, name: str) -> tuple[Any, bool]:
    """(kafka-python field, is_bitfield) for our field ``name``."""
    fields = kp_struct.fields
    if name in fields:
        return fields[name], False
    if name.endswith(_BITFIELD_NAME) and _BITFIELD_NAME in fields:
        return fields[_BITFIELD_NAME], True
    raise KeyError(f"kafka-python's {kp_struct.name} has no field {name}")


def _int_to_bits(v: int) -> set[int] | None:
    bits = {i for i in range(32) if (v & 0xFFFFFFFF) >> i & 1}
    return None if bits == {31} else bits


def _bits_to_int(bits: set[int] | None) -> int:
    if bits is None:
        bits = {31}
    n = sum(1 << i for i in bits)
    return n - (1 << 32) if n & 0x80000000 else n


def to_kp(struct: StructType, value: Any, kp_struct: Any, version: int) -> Any:
    """Our struct value -> kafka-python data object (``kp_struct`` is its StructField/message class)."""
    kw: dict[str, Any] = {}
    for fl in struct.fields:
        kp_fl, is_bits = _kp_field(kp_struct, fl.name)
        v = getattr(value, fl.name)
        if is_bits:
            kw[kp_fl.name] = _int_to_bits(v)
        else:
            kw[kp_fl.name] = _to_kp_value(
                fl.type, v, kp_fl, version, tagged=fl.tag is not None, default=fl.default_value()
            )
    cls = kp_struct if isinstance(kp_struct, type) else kp_struct.data_class
    if isinstance(kp_struct, type):
        return cls(version=version, **kw)
    return cls(**kw)


def _to_kp_value(t: Any, v: Any, kp_fl: Any, version: int, *, tagged: bool, default: Any) -> Any:
    if v is None:
        return None
    if isinstance(t, StructType):
        if tagged and v == default:
            return None
        return to_kp(t, v, kp_fl, version)
    if isinstance(t, ArrayType):
        if isinstance(t.element, StructType):
            return [to_kp(t.element, x, kp_fl, version) for x in v]
        return [_scalar_to_kp(x) for x in v]
    return _scalar_to_kp(v)


def _scalar_to_kp(v: Any) -> Any:
    if isinstance(v, uuid.UUID) and v == ZERO_UUID:
        return None
    return v


def from_kp(struct: StructType, kp_value: Any) -> Any:
    """kafka-python data object -> our struct value."""
    kw: dict[str, Any] = {}
    for fl in struct.fields:
        kp_fl, is_bits = _kp_field(kp_value._struct, fl.name)
        v = getattr(kp_value, kp_fl.name)
        if is_bits:
            kw[fl.name] = _bits_to_int(v)
        else:
            kw[fl.name] = _from_kp_value(fl.type, v, fl.default_value(), tagged=fl.tag is not None)
    return struct.cls(**kw)


def _from_kp_value(t: Any, v: Any, default: Any, *, tagged: bool) -> Any:
    if isinstance(t, StructType):
        if v is None:
            return default if tagged else None
        return from_kp(t, v)
    if isinstance(t, ArrayType):
        if v is None:
            return None
        if isinstance(t.element, StructType):
            return [from_kp(t.element, x) for x in v]
        return [_scalar_from_kp(t.element, x) for x in v]
    return _scalar_from_kp(t, v)


def _scalar_from_kp(t: Any, v: Any) -> Any:
    if t.name == "uuid" and v is None:
        return ZERO_UUID
    if isinstance(v, memoryview | bytearray):
        return bytes(v)
    return v
