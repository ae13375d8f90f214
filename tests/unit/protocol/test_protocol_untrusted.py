"""Bytes from a peer are untrusted: decoding fails only with RemoteProtocolError subclasses, names
what was wrong, and never allocates what a length field merely claims."""

from __future__ import annotations

import contextlib
import struct as _struct_mod
import tracemalloc
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_strategies import full_value

from kraft.common.errors import (
    FrameTooLargeError,
    MalformedMessageError,
    RemoteProtocolError,
    UnsupportedApiError,
)
from kraft.protocol import primitives
from kraft.protocol.api import Api, decode_request, decode_response, encode_request, encode_response
from kraft.protocol.framing import FrameDecoder, frame
from kraft.protocol.messages import (
    REGISTRY,
    allocate_producer_ids,
    describe_quorum,
    fetch,
    init_producer_id,
    metadata,
    offset_for_leader_epoch,
    produce,
    vote,
)
from kraft.protocol.primitives import Reader, Writer
from kraft.protocol.schema import BOOL, INT16, INT32, INT64, STRING, array, f, struct

# ---------------------------------------------------------------------------------------------------
# Truncation


TRUNCATION_REQUESTS = [
    (vote.API, 2),
    (fetch.API, 17),
    (metadata.API, 8),
    (describe_quorum.API, 2),
    # The data plane: Fetch as consumers send it (topics by name, non-flexible), Produce at its lowest
    # and highest versions, and the producer-id and epoch lookups.
    (fetch.CLIENT_API, 4),
    (fetch.CLIENT_API, 12),
    (produce.API, 3),
    (produce.API, 13),
    (offset_for_leader_epoch.API, 2),
    (offset_for_leader_epoch.API, 4),
    (init_producer_id.API, 0),
    (init_producer_id.API, 5),
    (allocate_producer_ids.API, 0),
]


def _serving(api: Api) -> dict[int, Api]:
    """The registry with ``api`` in its key's place (Fetch's client range is not in REGISTRY)."""
    return {**REGISTRY, api.key: api}


@pytest.mark.parametrize(("api", "version"), TRUNCATION_REQUESTS, ids=lambda x: getattr(x, "name", x))
def test_every_truncated_request_is_rejected_as_malformed(api, version) -> None:  # type: ignore[no-untyped-def]
    body = full_value(api.request, version, api.is_flexible(version), 5)
    payload = encode_request(api, version, 1, body, client_id="c")
    registry = _serving(api)
    for cut in range(len(payload)):
        with pytest.raises(MalformedMessageError):
            decode_request(payload[:cut], registry)
    assert decode_request(payload, registry)[1] == body


@pytest.mark.parametrize(("api", "version"), TRUNCATION_REQUESTS, ids=lambda x: getattr(x, "name", x))
def test_every_truncated_response_is_rejected_as_malformed(api, version) -> None:  # type: ignore[no-untyped-def]
    body = full_value(api.response, version, api.is_flexible(version), 6)
    payload = encode_response(api, version, 1, body)
    for cut in range(len(payload)):
        with pytest.raises(MalformedMessageError):
            decode_response(payload[:cut], api, version)


def test_trailing_bytes_after_a_request_body_are_ignored_as_kafka_does() -> None:
    # librdkafka 2.16 sends Metadata v13 for all topics with 3 bytes after the body; Kafka's
    # AbstractRequest.parseRequest never checks for leftovers, so neither do we (requests only).
    payload = encode_request(vote.API, 2, 1, vote.REQUEST.cls(), client_id=None)
    header, body = decode_request(payload + b"\x00\x01\x00", REGISTRY)
    assert (header.api_key, header.correlation_id) == (vote.API.key, 1)
    assert body == vote.REQUEST.cls()
    observed = bytes.fromhex("0000000001" + "0000")  # librdkafka's all-topics Metadata v13 body
    frame_ = encode_request(metadata.API, 13, 9, metadata.REQUEST.cls(topics=None), client_id="rdkafka")
    header_len = len(frame_) - len(metadata.REQUEST.encode(metadata.REQUEST.cls(topics=None), 13, True))
    header, body = decode_request(frame_[:header_len] + observed, REGISTRY)
    assert body.topics is None and body.allow_auto_topic_creation is False


# ---------------------------------------------------------------------------------------------------
# Lying length fields

_NAMES = struct("Names", [f("Id", INT32), f("Name", STRING), f("Tags", array(STRING), nullable="0+")])


def _decode_names(data: bytes, flexible: bool):  # type: ignore[no-untyped-def]
    return _NAMES.decode(data, 0, flexible)


@pytest.mark.parametrize(
    ("data", "flexible", "match"),
    [
        (b"\x00\x00\x00\x01" + b"\xff\xfe", False, "invalid length -2 for Names.name"),
        (b"\x00\x00\x00\x01" + b"\x7f\xff" + b"ab", False, "Names.name"),
        (b"\x00\x00\x00\x01" + b"\x00\x00" + b"\xff\xff\xff\xfe", False, "element count -2 for Names.tags"),
        (b"\x00\x00\x00\x01" + b"\x00\x00" + b"\x7f\xff\xff\xff", False, "2147483647 elements claimed"),
        # compact: length+1 as unsigned varint; 0 is null (not allowed for Name).
        (b"\x00\x00\x00\x01" + b"\x00", True, "invalid length -1 for Names.name"),
        (b"\x00\x00\x00\x01" + b"\xff\xff\x03", True, "Names.name"),
        (b"\x00\x00\x00\x01" + b"\x01" + b"\xff\xff\xff\xff\x0f", True, "Names.tags"),
        (b"\x00\x00\x00\x01" + b"\x01" + b"\xff\xff\xff\xff\xff\x01", True, "varint longer than 5 bytes"),
    ],
)
def test_negative_and_oversize_lengths_are_rejected_by_name(data: bytes, flexible: bool, match: str) -> None:
    with pytest.raises(MalformedMessageError, match=match):
        _decode_names(data, flexible)


def test_bytes_and_records_lengths_are_checked_before_reading() -> None:
    w = Writer()
    w.int32(-7)
    with pytest.raises(MalformedMessageError, match="invalid length -7"):
        Reader(w.getvalue()).bytes_("records", compact=False, nullable=True)
    with pytest.raises(MalformedMessageError, match="claims more than"):
        Reader(struct_pack(">i", 1 << 30) + b"xx").bytes_("records", compact=False)
    with pytest.raises(MalformedMessageError, match="claims more than"):
        Reader(b"\xff\xff\xff\xff\x07" + b"xx").bytes_("records", compact=True)


def struct_pack(fmt: str, *values: int) -> bytes:
    return _struct_mod.pack(fmt, *values)


def test_a_huge_claimed_array_allocates_nothing() -> None:
    # Fetch v17 response: header (correlation id, no tags), throttle, error, session, then a
    # compact array length of 2^32-1, i.e. 2^32-2 topics claimed with 8 bytes left.
    payload = struct_pack(">i", 7) + b"\x00" + struct_pack(">ihi", 0, 0, 0)
    payload += b"\xff\xff\xff\xff\x0f" + b"\x00" * 8
    tracemalloc.start()
    try:
        with pytest.raises(MalformedMessageError, match="elements claimed"):
            decode_response(payload, fetch.API, 17)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024


def test_a_string_longer_than_kafka_allows_is_refused_both_ways() -> None:
    with pytest.raises(MalformedMessageError, match="limit is 32767"):
        Reader(b"\x81\x80\x02" + b"a" * 32768).string("name", compact=True)
    with pytest.raises(ValueError, match="32767"):
        Writer().string("a" * 32768, compact=True)


def test_invalid_utf8_is_malformed() -> None:
    with pytest.raises(MalformedMessageError, match=r"UTF-8 in Names\.name"):
        _decode_names(b"\x00\x00\x00\x01\x00\x02\xc3\x28\xff\xff\xff\xff", False)


# ---------------------------------------------------------------------------------------------------
# Frames


def test_frame_decoder_rejects_negative_and_oversize_sizes_before_buffering_the_body() -> None:
    with pytest.raises(FrameTooLargeError, match="negative frame size -1"):
        FrameDecoder().feed(b"\xff\xff\xff\xff")
    decoder = FrameDecoder(max_frame_bytes=100)
    assert decoder.feed(frame(b"x" * 100)) == [b"x" * 100]
    with pytest.raises(FrameTooLargeError, match=r"101 bytes exceeds the maximum request size of 100"):
        decoder.feed(struct_pack(">i", 101))


def test_frame_decoder_reassembles_frames_fed_a_byte_at_a_time() -> None:
    stream = frame(b"abc") + frame(b"") + frame(b"z" * 300)
    decoder = FrameDecoder()
    out = []
    for i in range(len(stream)):
        out.extend(decoder.feed(stream[i : i + 1]))
    assert out == [b"abc", b"", b"z" * 300]
    assert decoder.buffered == 0


@settings(max_examples=300, deadline=None)
@given(
    sizes=st.lists(st.sampled_from([0, 1, 3, 4, 5, 100, 4096, 70_000]), min_size=1, max_size=12),
    cuts=st.lists(st.integers(min_value=1, max_value=90_000), max_size=40),
)
def test_frame_decoder_yields_the_same_frames_however_the_stream_is_cut(
    sizes: list[int], cuts: list[int]
) -> None:
    # Frames whole in a chunk, cut anywhere (in the size prefix, in the body), and larger than the
    # decoder's kept buffer, one after the other: the same frames come out, in order.
    payloads = [bytes([i % 251]) * n for i, n in enumerate(sizes)]
    stream = b"".join(frame(p) for p in payloads)
    decoder = FrameDecoder(max_frame_bytes=100_000)
    out: list[bytes] = []
    pos = 0
    for cut in cuts:
        out.extend(decoder.feed(stream[pos : pos + cut]))
        pos += cut
    out.extend(decoder.feed(memoryview(stream)[pos:]))
    assert out == payloads
    assert decoder.buffered == 0
    assert all(type(p) is bytes for p in out)


# ---------------------------------------------------------------------------------------------------
# API key and version


def test_unknown_api_key_carries_key_version_and_correlation_id() -> None:
    payload = struct_pack(">hhi", 999, 3, 4242) + b"\xff\xff"
    with pytest.raises(UnsupportedApiError) as info:
        decode_request(payload, REGISTRY)
    assert (info.value.api_key, info.value.api_version, info.value.correlation_id) == (999, 3, 4242)


@pytest.mark.parametrize(("key", "version"), [(52, 3), (1, 12), (1, 18), (19, 8), (18, -1)])
def test_unsupported_version_carries_key_version_and_correlation_id(key: int, version: int) -> None:
    payload = struct_pack(">hhi", key, version, 77) + b"\x00\x00" + b"\x00" * 64
    with pytest.raises(UnsupportedApiError, match=f"version {version} is not supported") as info:
        decode_request(payload, REGISTRY)
    assert (info.value.api_key, info.value.api_version, info.value.correlation_id) == (key, version, 77)


def test_a_described_but_unserved_version_is_refused_by_the_server_yet_codable() -> None:
    # Fetch v4 is described (old peers, kafka-python comparisons) but a server accepts 13-17 only.
    body = full_value(fetch.REQUEST, 4, False, 1)
    with pytest.raises(UnsupportedApiError, match="supported: 13-17"):
        decode_request(encode_request(fetch.API, 4, 1, body), REGISTRY)
    assert fetch.API.decode_request_body(fetch.API.encode_request_body(body, 4), 4) == body


@pytest.mark.parametrize(
    ("api", "version", "served"),
    [
        (fetch.CLIENT_API, 3, "4-17"),  # KIP-896: Kafka 4.0 removed Fetch v0-3
        (fetch.CLIENT_API, 18, "4-17"),
        (produce.API, 2, "3-13"),  # KAFKA-18659: Produce v0-2 are refused
        (produce.API, 14, "3-13"),
        (offset_for_leader_epoch.API, 1, "2-4"),
        (init_producer_id.API, 6, "0-5"),  # KIP-939's v6 is described but unstable in Kafka 4.x
        (allocate_producer_ids.API, 1, "0"),
    ],
    ids=lambda x: getattr(x, "name", x),
)
def test_a_data_plane_version_outside_the_served_range_is_refused_naming_the_range(
    api: Api, version: int, served: str
) -> None:
    payload = struct_pack(">hhi", api.key, version, 31) + b"\x00\x01c" + b"\x00" * 32
    with pytest.raises(
        UnsupportedApiError, match=rf"version {version} is not supported \(supported: {served}\)"
    ) as info:
        decode_request(payload, _serving(api))
    assert (info.value.api_key, info.value.api_version, info.value.correlation_id) == (api.key, version, 31)


# ---------------------------------------------------------------------------------------------------
# Tagged fields

_TAGGED = struct(
    "Tagged",
    [
        f("A", INT32),
        f("B", INT32, tag=1, tagged="0+", default=-1),
        f("C", STRING, tag=2, tagged="0+", nullable="0+", default=None),
    ],
)


def _tagged(*fields: tuple[int, bytes], count: int | None = None) -> bytes:
    out = bytearray(b"\x00\x00\x00\x05")
    out.append(len(fields) if count is None else count)
    for tag, payload in fields:
        out += bytes((tag, len(payload))) + payload
    return bytes(out)


def test_tagged_fields_decode_and_unknown_ones_are_kept() -> None:
    v = _TAGGED.decode(_tagged((1, b"\x00\x00\x00\x09"), (2, b"\x03hi"), (5, b"?")), 0, True)
    assert (v.a, v.b, v.c, v._unknown_tags) == (5, 9, "hi", [(5, b"?")])


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (_tagged((2, b"\x03hi"), (1, b"\x00\x00\x00\x09")), r"out of order \(1 after 2\)"),
        (_tagged((1, b"\x00\x00\x00\x09"), (1, b"\x00\x00\x00\x09")), r"out of order \(1 after 1\)"),
        (_tagged((1, b"\x00\x00\x00\x09"))[:-2], "tagged field 1 of Tagged"),
        (_tagged((1, b"\x00\x00\x00\x09\x00")), r"tagged field 1 \(b\) has 1 trailing bytes"),
        (_tagged((1, b"\x00\x00")), "truncated Tagged.b"),
        (_tagged(count=100), "100 tagged fields claimed"),
    ],
)
def test_bad_tagged_sections_are_rejected(data: bytes, match: str) -> None:
    with pytest.raises(MalformedMessageError, match=match):
        _TAGGED.decode(data, 0, True)


def test_bad_tags_in_a_request_header_are_rejected() -> None:
    payload = struct_pack(">hhi", 55, 0, 1) + b"\xff\xff" + b"\x02\x01\x00\x01\x00" + b"\x01\x00"
    with pytest.raises(MalformedMessageError, match="out of order"):
        decode_request(payload, REGISTRY)


# ---------------------------------------------------------------------------------------------------
# Our own misuse when encoding


def test_non_default_value_for_a_field_absent_in_the_version_names_the_field() -> None:
    part = vote.REQUEST.cls.TopicData.PartitionData(pre_vote=True)
    body = vote.REQUEST.cls(topics=[vote.REQUEST.cls.TopicData(partitions=[part])])
    with pytest.raises(ValueError, match=r"PartitionData\.pre_vote=True at version 1"):
        vote.API.encode_request_body(body, 1)
    # An ignorable field is dropped instead: the voter id only exists from v1.
    assert vote.API.encode_request_body(vote.REQUEST.cls(voter_id=3), 0) == b"\x00\x01\x00"


def test_null_for_a_non_nullable_field_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"DescribeQuorumRequest\.topics"):
        describe_quorum.API.encode_request_body(describe_quorum.REQUEST.cls(topics=None), 0)
    with pytest.raises(ValueError, match=r"TopicData\.topic_name"):
        describe_quorum.API.encode_request_body(
            describe_quorum.REQUEST.cls(topics=[describe_quorum.REQUEST.cls.TopicData(topic_name=None)]), 0
        )


def test_out_of_range_integer_names_the_field() -> None:
    with pytest.raises(ValueError, match=r"NodeEndpoint\.port"):
        vote.API.encode_response_body(
            vote.RESPONSE.cls(node_endpoints=[vote.RESPONSE.cls.NodeEndpoint(port=70000)]), 1
        )


# ---------------------------------------------------------------------------------------------------
# Fuzzing


def _valid_payloads() -> list[tuple[dict[int, Api], bytes]]:
    """(registry that serves it, request) for each API's highest served version, and for the
    lowest and the last non-flexible versions of Fetch as a broker serves it to consumers."""
    out = []
    served = [(api, api.served.high) for _key, api in sorted(REGISTRY.items())]
    served += [(fetch.CLIENT_API, 4), (fetch.CLIENT_API, 11), (produce.API, 3), (produce.API, 9)]
    for api, version in served:
        body = full_value(api.request, version, api.is_flexible(version), 1)
        out.append((_serving(api), encode_request(api, version, 3, body)))
    return out


VALID = _valid_payloads()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=200))
def test_random_bytes_raise_only_remote_protocol_errors(data: bytes) -> None:
    with contextlib.suppress(RemoteProtocolError):
        decode_request(data, REGISTRY)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    index=st.integers(0, len(VALID) - 1),
    edits=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1, max_size=4),
    cut=st.none() | st.integers(0, 10_000),
)
def test_mutated_requests_raise_only_remote_protocol_errors(
    index: int, edits: list[tuple[int, int]], cut: int | None
) -> None:
    registry, valid = VALID[index]
    payload = bytearray(valid)
    for pos, byte in edits:
        # Leave the header prefix intact so mutations reach the body decoder.
        payload[8 + pos % max(1, len(payload) - 8)] = byte
    if cut is not None:
        payload = payload[: cut % (len(payload) + 1)]
    with contextlib.suppress(RemoteProtocolError):
        decode_request(bytes(payload), registry)


def test_uuid_round_trip_is_big_endian_msb_first() -> None:
    u = uuid.UUID("00010203-0405-0607-0809-0a0b0c0d0e0f")
    w = Writer()
    w.uuid(u)
    assert w.getvalue() == bytes(range(16))
    assert Reader(bytes(range(16))).uuid() == u


def test_decoded_uuids_are_shared_and_stay_right_when_the_cache_empties(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(primitives, "_UUIDS", {})
    raw = bytes(range(16))
    first = Reader(raw).uuid()
    assert Reader(bytearray(raw)).uuid() is first  # one object per id: a topic id in every Fetch
    # Past 65,536 ids the cache starts over; every id still decodes to its own value.
    ids = [uuid.UUID(int=i) for i in range(65_540)]
    decoded = [Reader(u.bytes).uuid() for u in ids]
    assert decoded == ids
    assert len(primitives._UUIDS) <= 65_536
    assert Reader(raw).uuid() == first


# ---------------------------------------------------------------------------------------------------
# Runs of fixed-width fields and arrays of numbers (packed at once) fail as their fields do

_RUN = struct(
    "Run",
    [f("A", INT32), f("B", INT16), f("C", BOOL), f("D", INT64), f("Ids", array(INT32)), f("Name", STRING)],
)


def test_a_run_of_numbers_round_trips_and_reads_any_nonzero_byte_as_true() -> None:
    value = _RUN.cls(a=-1, b=7, c=True, d=2**40, ids=[3, -4, 5], name="x")
    data = _RUN.encode(value, 0, False)
    assert data == struct_pack(">ih?qi3ih", -1, 7, True, 2**40, 3, 3, -4, 5, 1) + b"x"
    assert _RUN.decode(data, 0, False) == value
    assert _RUN.decode(data[:6] + b"\x02" + data[7:], 0, False).c is True
    # a, b, c and d are one packed step (the fast path these tests hold to the fields' behaviour)
    assert [len(run) for packer, run in _RUN.plan(0, False).steps if packer is not None] == [4]


@pytest.mark.parametrize(("cut", "match"), [(5, r"Run\.b"), (7, r"Run\.d"), (22, "element of Run.ids")])
def test_a_message_cut_inside_a_run_names_the_cut_field(cut: int, match: str) -> None:
    data = _RUN.encode(_RUN.cls(a=1, b=2, c=False, d=3, ids=[1, 2], name="x"), 0, False)
    with pytest.raises(MalformedMessageError, match=f"truncated {match}"):
        _RUN.decode(data[:cut], 0, False)


@pytest.mark.parametrize(
    ("fields", "match"),
    [({"b": 40000}, r"Run\.b"), ({"d": "3"}, r"Run\.d"), ({"ids": [1, 2**31]}, r"Run\.ids")],
)
def test_a_value_that_does_not_pack_in_a_run_names_its_field(fields: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=f"cannot encode {match}"):
        _RUN.encode(_RUN.cls(**fields), 0, False)


def test_a_field_name_the_codec_cannot_write_out_is_refused_when_declared() -> None:
    with pytest.raises(ValueError, match="not a plain Python identifier"):
        struct("Bad", [f("class", INT32)])


def test_unknown_tags_are_written_back_by_a_struct_without_tagged_fields() -> None:
    plain = struct("Plain", [f("A", INT32)])
    value = plain.cls(a=7)
    assert plain.encode(value, 0, True) == b"\x00\x00\x00\x07\x00"  # an empty tagged section
    value._unknown_tags = [(3, b"x")]
    data = plain.encode(value, 0, True)
    assert data == b"\x00\x00\x00\x07\x01\x03\x01x"
    assert plain.decode(data, 0, True)._unknown_tags == [(3, b"x")]
