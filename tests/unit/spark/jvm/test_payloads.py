"""The Java payload decoder (``kraft.spark.Payloads``) gives exactly what the Python reference
(``kraft.spark.arrow_log._PayloadDecoder``, ``_peek_type_name``) gives, for valid records of every
type at every version and for every kind of bad input; and ``kraft.spark.jvm.schemas`` exports the
Python schemas faithfully. No Spark: the Java sources of the decoder and a small driver
(``PayloadsProbe.java``) are compiled here with ``javac`` and fed hex lines on stdin."""

from __future__ import annotations

import json
import os
import random
import shutil
import struct
import subprocess
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyarrow")  # kraft.spark.arrow_log, the reference, builds Arrow batches

from kraft.metadata.records import (
    IGNORED_RECORD_TYPES,
    PAYLOAD_WITHHELD_RECORD_TYPES,
    SCHEMAS,
    ApiMessageAndVersion,
    MetadataRecordType,
    encode_record,
    make_record,
)
from kraft.protocol.primitives import encode_unsigned_varint
from kraft.protocol.schema import (
    FLOAT64,
    INT8,
    ArrayType,
    FieldType,
    StructType,
    f,
)
from kraft.protocol.schema import struct as schema_struct
from kraft.records.batch import Record
from kraft.records.control import (
    CONTROL_MESSAGES,
    ControlType,
    VoterEndpoint,
    VoterInfo,
    control_key,
    encode_control_value,
    kraft_version_record,
    leader_change_message,
    snapshot_footer_record,
    snapshot_header_record,
    voters_record,
)
from kraft.spark import arrow_log
from kraft.spark.arrow_log import _PayloadDecoder, _peek_type_name
from kraft.spark.jvm import JAVA_DIR, JAVA_RELEASE
from kraft.spark.jvm import schemas as jvm_schemas

HERE = Path(__file__).resolve().parent


def _jdk_tool(name: str) -> str | None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / name).is_file():
        return str(Path(java_home) / "bin" / name)
    return shutil.which(name)


JAVAC = _jdk_tool("javac")
JAVA = _jdk_tool("java")


# ---------------------------------------------------------------------------------------------------
# The Java side


@dataclass(frozen=True)
class Probe:
    classes: Path

    def run(self, lines: list[str]) -> list[Any]:
        assert JAVA is not None
        done = subprocess.run(
            [JAVA, "-cp", str(self.classes), "kraft.spark.PayloadsProbe"],
            input="".join(line + "\n" for line in lines).encode(),
            capture_output=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")
        out = done.stdout.decode("ascii").splitlines()
        assert len(out) == len(lines), done.stderr.decode(errors="replace")
        return [json.loads(line) for line in out]


@pytest.fixture(scope="session")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Probe:
    """The decoder's sources (``Payload*.java``, ``Json*.java``: they need nothing but the JDK) and
    the driver, compiled as the jar build compiles them, with the generated ``kraft-schemas.json``.
    Only these sources, so that the test judges the decoder whatever state the rest is in."""
    if JAVAC is None or JAVA is None:
        pytest.skip("no javac/java (a JDK 17+ is needed to test the Java payload decoder)")
    classes = tmp_path_factory.mktemp("payloads") / "classes"
    classes.mkdir()
    package = JAVA_DIR / "kraft" / "spark"
    sources = sorted(package.glob("Payload*.java")) + sorted(package.glob("Json*.java"))
    cmd = [
        JAVAC,
        "--release",
        JAVA_RELEASE,
        "-encoding",
        "UTF-8",
        "-Xlint:all",
        "-Werror",
        "-d",
        str(classes),
        *map(str, sources),
        str(HERE / "PayloadsProbe.java"),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True)
    assert done.returncode == 0, f"javac failed:\n{done.stdout}{done.stderr}"
    (classes / "kraft-schemas.json").write_text(jvm_schemas.schemas_json(), encoding="utf-8")
    return Probe(classes)


def _hex(data: bytes | None) -> str:
    return "-" if data is None else data.hex()


# ---------------------------------------------------------------------------------------------------
# Random values of the schemas


STRINGS = [
    "",
    "a",
    "topic-1",
    'quo"te',
    "back\\slash",
    "new\nline\rcr\ttab",
    "\b\f",
    "\x00\x01\x07\x1f\x7f",
    "é",
    "日本語",
    "😀",
    "a😀b",
    "\u2028\u2029\ufeff\uffff\U0010ffff",
    '"\\/\n😀é\x1b',
    "</script>",
]
_CHARS: list[Callable[[random.Random], str]] = [
    lambda r: chr(r.randrange(0x20, 0x7F)),
    lambda r: chr(r.randrange(0, 0x20)),
    lambda r: chr(r.randrange(0x80, 0x800)),
    lambda r: chr(r.choice([r.randrange(0x800, 0xD800), r.randrange(0xE000, 0x10000)])),
    lambda r: chr(r.randrange(0x10000, 0x110000)),
    lambda r: r.choice('"\\/'),
]


def rand_string(rng: random.Random) -> str:
    if rng.random() < 0.5:
        return rng.choice(STRINGS)
    return "".join(rng.choice(_CHARS)(rng) for _ in range(rng.randrange(0, 12)))


_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "uint16": (0, 2**16 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint32": (0, 2**32 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def rand_scalar(rng: random.Random, t: FieldType) -> Any:
    name = t.name
    if name == "bool":
        return rng.random() < 0.5
    if name in _INT_RANGES:
        lo, hi = _INT_RANGES[name]
        pick = rng.random()
        if pick < 0.3:
            return rng.randint(max(lo, -3), 3)
        if pick < 0.4:
            return rng.choice([lo, hi])
        return rng.randint(lo, hi)
    if name == "uuid":
        pick = rng.random()
        if pick < 0.15:
            return uuid.UUID(int=0)
        if pick < 0.25:
            return uuid.UUID(int=rng.choice([1, 2, 2**128 - 1, 0xFB << 120]))
        return uuid.UUID(int=rng.getrandbits(128))
    if name == "string":
        return rand_string(rng)
    if name == "bytes":  # SCRAM salts and keys: their records' payloads are withheld
        return rng.randbytes(rng.randrange(0, 12))
    raise AssertionError(f"no generator for {name}")


def rand_value(rng: random.Random, t: FieldType | StructType, version: int, nullable: bool) -> Any:
    if nullable and rng.random() < 0.2:
        return None
    if isinstance(t, StructType):
        return rand_struct(rng, t, version)
    if isinstance(t, ArrayType):
        structs = isinstance(t.element, StructType)
        n = rng.choice([0, 0, 1, 2, 3] if structs else [0, 1, 1, 2, 3, 5, 9, 127, 200])
        return [rand_value(rng, t.element, version, False) for _ in range(n)]
    return rand_scalar(rng, t)


def rand_struct(rng: random.Random, s: StructType, version: int, unknown_tags: bool = True) -> Any:
    kw: dict[str, Any] = {}
    used_tags = set()
    for fl in s.fields:
        if version not in fl.versions:
            continue  # absent in this version: keeps its default so that encoding succeeds
        if fl.tag is not None:
            used_tags.add(fl.tag)
        if version in fl.tagged and rng.random() < 0.35:
            kw[fl.name] = fl.default_value()
            continue
        kw[fl.name] = rand_value(rng, fl.type, version, version in fl.nullable)
    if unknown_tags and rng.random() < 0.15:
        # Tags this build does not know (Python keeps them; neither prints them), now and then one
        # a known field uses (then it is decoded as that field, or the struct is malformed).
        tags = {rng.choice([rng.randrange(0, 12), rng.randrange(12, 300), 2**31 - 1]) for _ in range(3)}
        if rng.random() < 0.7:
            tags -= used_tags
        kw["_unknown_tags"] = [(t, rng.randbytes(rng.choice([0, 1, 2, 5, 130]))) for t in sorted(tags)]
    return s.cls(**kw)


EVERY_VERSION = [(t, v) for t, s in SCHEMAS.items() for v in range(s.versions.low, s.versions.high + 1)]


def rand_record(rng: random.Random, record_type: MetadataRecordType, version: int) -> bytes:
    data = rand_struct(rng, SCHEMAS[record_type].struct, version)
    return encode_record(ApiMessageAndVersion(record_type, version, data))


def uv(n: int) -> bytes:
    return encode_unsigned_varint(n)


# ---------------------------------------------------------------------------------------------------
# The cases


def realistic_records() -> list[bytes]:
    """Records as a controller writes them."""
    T = MetadataRecordType
    topic = uuid.UUID("5f6a3c2e-0000-4000-8000-00000000abcd")
    d1, d2 = uuid.UUID(int=0x1234 << 64 | 7), uuid.UUID(int=2)
    out = [
        make_record(T.TOPIC, name="orders", topic_id=topic),
        make_record(
            T.PARTITION,
            0,
            partition_id=0,
            topic_id=topic,
            replicas=[1, 2, 3],
            isr=[1, 2, 3],
            leader=1,
            leader_epoch=0,
            partition_epoch=0,
        ),
        make_record(
            T.PARTITION,
            1,
            partition_id=7,
            topic_id=topic,
            replicas=[1, 2, 3],
            isr=[1, 2],
            leader=2,
            leader_epoch=5,
            partition_epoch=9,
            directories=[d1, d2, d1],
        ),
        make_record(
            T.PARTITION,
            2,
            partition_id=7,
            topic_id=topic,
            replicas=[1, 2, 3],
            isr=[1],
            leader=1,
            leader_recovery_state=1,
            leader_epoch=5,
            partition_epoch=9,
            directories=[d1, d2, d1],
            eligible_leader_replicas=[2],
            last_known_elr=[],
        ),
        make_record(T.PARTITION_CHANGE, 0, partition_id=3, topic_id=topic, isr=[1, 3], leader=3),
        make_record(
            T.PARTITION_CHANGE,
            1,
            partition_id=3,
            topic_id=topic,
            leader=-1,
            directories=[d1],
            leader_recovery_state=1,
        ),
        make_record(
            T.PARTITION_CHANGE,
            2,
            partition_id=3,
            topic_id=topic,
            isr=[2],
            directories=[d2, d1],
            eligible_leader_replicas=[1, 3],
            last_known_elr=[4],
            removing_replicas=[],
            adding_replicas=[5],
        ),
        make_record(
            T.CONFIG, resource_type=2, resource_name="orders", name="cleanup.policy", value="compact"
        ),
        make_record(T.CONFIG, resource_type=4, resource_name="", name="log.retention.ms", value=None),
        make_record(T.FEATURE_LEVEL, name="metadata.version", feature_level=25),
        make_record(T.NO_OP),
        make_record(T.BEGIN_TRANSACTION, name='bulk "load"\n'),
        make_record(T.BEGIN_TRANSACTION),
        make_record(T.END_TRANSACTION),
        make_record(T.ABORT_TRANSACTION, reason="controller failover ✓"),
        make_record(T.PRODUCER_IDS, broker_id=1, broker_epoch=5, next_producer_id=1000),
        make_record(
            T.BROKER_REGISTRATION_CHANGE,
            2,
            broker_id=1,
            broker_epoch=7,
            fenced=1,
            in_controlled_shutdown=0,
            log_dirs=[d1],
        ),
        make_record(T.FENCE_BROKER, id=1, epoch=3),
        make_record(T.UNFENCE_BROKER, id=1, epoch=3),
        make_record(T.REMOVE_TOPIC, topic_id=topic),
        make_record(T.UNREGISTER_BROKER, broker_id=3, broker_epoch=100),
        make_record(T.ZK_MIGRATION_STATE, zk_migration_state=0),
        make_record(T.CLEAR_ELR, topic_name="orders"),
    ]
    be = SCHEMAS[T.REGISTER_BROKER].struct.cls.BrokerEndpoint  # type: ignore[attr-defined]
    bf = SCHEMAS[T.REGISTER_BROKER].struct.cls.BrokerFeature  # type: ignore[attr-defined]
    for v in range(4):
        out.append(
            make_record(
                T.REGISTER_BROKER,
                v,
                broker_id=1,
                incarnation_id=topic,
                broker_epoch=10,
                end_points=[
                    be(name="PLAINTEXT", host="localhost", port=9092, security_protocol=0),
                    be(name="SSL", host="::1", port=65535, security_protocol=1),
                ],
                features=[bf(name="metadata.version", min_supported_version=1, max_supported_version=25)],
                rack="rack-1" if v % 2 else None,
                fenced=v != 2,
                in_controlled_shutdown=v == 3,
                log_dirs=[d1, d2] if v == 3 else [],
            )
        )
    ce = SCHEMAS[T.REGISTER_CONTROLLER].struct.cls.ControllerEndpoint  # type: ignore[attr-defined]
    out.append(
        make_record(
            T.REGISTER_CONTROLLER,
            controller_id=3000,
            incarnation_id=d1,
            zk_migration_ready=False,
            end_points=[ce(name="CONTROLLER", host="c1", port=9093, security_protocol=0)],
        )
    )
    return [encode_record(r) for r in out]


def random_records(rng: random.Random, per_version: int) -> list[bytes]:
    return [rand_record(rng, t, v) for t, v in EVERY_VERSION for _ in range(per_version)]


def header_cases() -> list[bytes | None]:
    """Frames that fail (or pass) on their header: frame version, type and version varints."""
    body_topic = encode_record(make_record(MetadataRecordType.TOPIC, name="t", topic_id=uuid.UUID(int=5)))[3:]
    cases: list[bytes | None] = [
        None,
        b"",
        b"\x01",
        b"\x01\x02",
        b"\x00\x02\x00",
        b"\x02\x02\x00" + body_topic,
        b"\x81\x00\x02\x00" + body_topic,
        b"\x7f",
        b"\xff\xff",
    ]
    # Non-minimal varints are read as Python reads them.
    cases += [
        b"\x01\x82\x00\x00" + body_topic,
        b"\x01\x02\x80\x00" + body_topic,
        b"\x01\x82\x80\x80\x80\x00\x00" + body_topic,
        b"\x01\x82\x80\x80\x80\x80\x00\x00" + body_topic,
        b"\x01\x02\x80\x80\x80\x80\x10" + body_topic,
        b"\x01\x02\xff\xff\xff\xff\x0f" + body_topic,
        b"\x01\x02\xff\xff\xff\xff\x1f" + body_topic,
        b"\x01\x02\x80",
        b"\x01\x80",
    ]
    # Types and versions beyond int16, unknown and ignored types.
    cases += [
        b"\x01" + uv(t) + uv(v) + body_topic
        for t in (2, 0x7FFF, 0x8000, 2**32 - 1)
        for v in (0, 1, 0x7FFF, 0x8000)
    ]
    for t in (6, 13, 16, 29, 200, 0x7FFF, *sorted(IGNORED_RECORD_TYPES)):
        for v in (0, 1, 3, 0x7FFF, 0x8000):
            for body in (b"", b"\x00", b"\x05junk", body_topic):
                cases.append(b"\x01" + uv(t) + uv(v) + body)
        cases.append(b"\x01" + uv(t))
        cases.append(b"\x01" + uv(t) + b"\x80")
    for t, s in SCHEMAS.items():
        for v in (s.versions.high + 1, s.versions.high + 2, 200):
            cases.append(encode_record(make_record(t, s.versions.high))[:2] + uv(v) + b"\x00" * 30)
    return cases


def corruptions(rng: random.Random, values: list[bytes]) -> list[bytes]:
    out: list[bytes] = []
    for value in values[:60]:
        out += [value[:i] for i in range(len(value))]  # every truncation
    for value in values:
        out.append(value + b"\x00")
        out.append(value + rng.randbytes(rng.randrange(1, 5)))
        for _ in range(3):
            if len(value) > 3:
                i = rng.randrange(3, len(value))
                flipped = bytearray(value)
                flipped[i] = rng.choice([0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256)])
                out.append(bytes(flipped))
    return out


def random_bodies(rng: random.Random, n: int) -> list[bytes]:
    """Random bytes after a valid header: mostly refused, sometimes a record."""
    out = []
    for _ in range(n):
        t, v = rng.choice(EVERY_VERSION)
        size = rng.choice([0, 1, 2, 3, 5, 8, 16, 24, 40])
        alphabet = [0, 0, 0, 1, 2, 3, 0x7F, 0x80, 0xFF, rng.randrange(256)]
        out.append(bytes((1, int(t), v)) + bytes(rng.choice(alphabet) for _ in range(size)))
    return out


_UTF8_BYTES = [
    0x41,
    0x22,
    0x5C,
    0x0A,
    0x00,
    0x1F,
    0x7F,
    0x80,
    0x8F,
    0x90,
    0x9F,
    0xA0,
    0xBF,
    0xC0,
    0xC1,
    0xC2,
    0xDF,
    0xE0,
    0xE1,
    0xEC,
    0xED,
    0xEE,
    0xEF,
    0xF0,
    0xF1,
    0xF3,
    0xF4,
    0xF5,
    0xF8,
    0xFE,
    0xFF,
]


def utf8_cases(rng: random.Random, n: int) -> list[bytes]:
    """ConfigRecords whose name is arbitrary bytes: valid UTF-8, and every kind of invalid."""
    placeholder = "\x01" * 8
    value = encode_record(
        make_record(
            MetadataRecordType.CONFIG, resource_type=2, resource_name="r", name=placeholder, value="v"
        )
    )
    i = value.index(placeholder.encode())
    fixed = [
        b"\xed\xa0\x80",
        b"\xed\xbf\xbf",
        b"\xc0\xaf",
        b"\xe0\x80\xaf",
        b"\xf0\x80\x80\xaf",
        b"\xf4\x90\x80\x80",
        b"\xf5\x80\x80\x80",
        b"\xc3",
        b"\xe2\x82",
        b"\xf0\x9f\x98",
        b"\x80",
        b"\xed\x9f\xbf",
        b"\xee\x80\x80",
        b"\xf0\x90\x80\x80",
        b"\xf4\x8f\xbf\xbf",
        b"\xef\xbf\xbf",
        b"\xc2\x80",
        b"\xdf\xbf",
    ]
    # The longest string Kafka allows, and one byte more.
    big = encode_record(
        make_record(
            MetadataRecordType.CONFIG, resource_type=2, resource_name="r", name="n" * 0x7FFF, value="v"
        )
    )
    j = big.index(b"n" * 0x7FFF)
    longer = big[: j - 3] + uv(0x8000 + 1) + b"n" * 0x8000 + big[j + 0x7FFF :]
    assert big[j - 3 : j] == uv(0x7FFF + 1)
    out = [big, longer]
    for mid in fixed:
        for pad in (b"", b"x", b"\xc3\xa9"):
            content = (mid + pad + b"ab" * 4)[:8]
            out.append(value[:i] + content + value[i + 8 :])
    for _ in range(n):
        chunk = bytearray()
        while len(chunk) < 8:
            if rng.random() < 0.5:
                chunk.append(rng.choice(_UTF8_BYTES))
            else:
                chunk += rng.choice(_CHARS)(rng).encode("utf-8", "surrogatepass")
        out.append(value[:i] + bytes(chunk[:8]) + value[i + 8 :])
    return out


def tagged_cases() -> list[bytes]:
    """Hand-built tagged sections: defaults written out, repeats, disorder, trailing bytes inside."""
    T = MetadataRecordType
    base = encode_record(make_record(T.PARTITION_CHANGE, 0, partition_id=1, topic_id=uuid.UUID(int=9)))
    head = base[:-1]  # without the empty tagged section
    leader = struct.pack(">i", 5)
    isr = b"\x03" + struct.pack(">ii", 1, 2)

    def tags(*entries: tuple[int, bytes]) -> bytes:
        return uv(len(entries)) + b"".join(uv(t) + uv(len(p)) + p for t, p in entries)

    cases = [
        head + tags((1, struct.pack(">i", -2))),  # Leader at its default, written out
        head + tags((0, b"\x00")),  # Isr: null, its default
        head + tags((0, b"\x01")),  # Isr: []
        head + tags((0, isr), (1, leader)),
        head + tags((1, leader), (0, isr)),  # out of order
        head + tags((1, leader), (1, leader)),  # repeated
        head + tags((1, leader + b"\x00")),  # trailing byte inside
        head + tags((1, leader[:3])),  # short
        head + tags((5, b"\xff")),  # LeaderRecoveryState -1: its default
        head + tags((5, b"\x01"), (7, b"\x00")),
        head + tags((99, b""), (2**31, b"abc")),  # unknown tags only
        head + tags((1, leader), (2**32 - 1, b"")),
        head + uv(3) + uv(1) + uv(4) + leader,  # count larger than the entries
        head + uv(2**32 - 1),
        head + tags((1, leader))[:-1],
        head + uv(1) + uv(1) + uv(2**32 - 1) + leader,
        # Bytes left inside tag 1 that would read as a valid tag 5 entry if they were not refused.
        head + uv(2) + uv(1) + uv(7) + leader + b"\x05\x01\xff",
    ]
    # PartitionRecord v2: LeaderRecoveryState (tag 0) belongs mid-record, ELR after Directories.
    p = encode_record(make_record(T.PARTITION, 2, partition_id=1, topic_id=uuid.UUID(int=9), replicas=[1]))[
        :-1
    ]
    cases += [
        p + tags((0, b"\x01")),
        p + tags((0, b"\x00")),
        p + tags((0, b"\x01"), (1, b"\x02\x00\x00\x00\x01"), (2, b"\x01")),
        p + tags((2, b"\x02\x00\x00\x00\x03")),
        p + tags((1, b"\x00"), (2, b"\x00")),
    ]
    return cases


def control_cases(rng: random.Random) -> list[tuple[bytes | None, bytes | None]]:
    d1 = uuid.UUID(int=0xABCDEF << 80)
    valid: list[tuple[ControlType, bytes]] = [
        (
            ControlType.LEADER_CHANGE,
            encode_control_value(ControlType.LEADER_CHANGE, leader_change_message(1, [1, 2, 3], [1, 3])),
        ),
        (
            ControlType.SNAPSHOT_HEADER,
            encode_control_value(ControlType.SNAPSHOT_HEADER, snapshot_header_record(1_700_000_000_000)),
        ),
        (
            ControlType.SNAPSHOT_FOOTER,
            encode_control_value(ControlType.SNAPSHOT_FOOTER, snapshot_footer_record()),
        ),
        (ControlType.KRAFT_VERSION, encode_control_value(ControlType.KRAFT_VERSION, kraft_version_record(1))),
        (
            ControlType.KRAFT_VOTERS,
            encode_control_value(
                ControlType.KRAFT_VOTERS,
                voters_record(
                    [
                        VoterInfo(
                            voter_id=1,
                            directory_id=d1,
                            endpoints=(
                                VoterEndpoint(name="CONTROLLER", host="localhost", port=9093),
                                VoterEndpoint(name='é"\n', host="::1", port=65535),
                            ),
                        ),
                        VoterInfo(
                            voter_id=2, directory_id=uuid.UUID(int=0), endpoints=(), max_supported_version=0
                        ),
                    ]
                ),
            ),
        ),
    ]
    for kind, spec in CONTROL_MESSAGES.items():
        for _ in range(40):
            message = rand_struct(rng, spec.schema, spec.version, unknown_tags=spec.flexible)
            valid.append((kind, spec.schema.encode(message, spec.version, spec.flexible)))
    cases: list[tuple[bytes | None, bytes | None]] = []
    for kind, value in valid:
        key = control_key(kind)
        cases.append((key, value))
        cases.append((key, value + b"\x00"))
        cases.append((key, value[: rng.randrange(len(value))] if value else b""))
        cases.append((key, None))
        cases.append((key[:2] + b"\x00\x09", value))  # an unknown type
        cases.append((b"\x00\x05" + key[2:], value))  # a newer key version: read as version 0
        cases.append((b"\x80\x00" + key[2:], value))  # a negative key version
        cases.append((b"\xff\xff" + key[2:], value))
        cases.append((key + b"extra", value))
        cases.append((None, value))
        cases.append((key[:3], value))
        flipped = bytearray(value)
        if flipped:
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        cases.append((key, bytes(flipped)))
    for t in (-1, -32768, 7, 100, 32767):
        cases.append((struct.pack(">hh", 0, t), b"\x00"))
    cases += [(b"", b""), (b"\x00\x00\x00", b"\x00"), (b"\x00\x00\x00\x02", b"")]
    cases += [
        (control_key(ControlType(rng.randrange(7))), rng.randbytes(rng.randrange(0, 12))) for _ in range(300)
    ]
    return cases


# ---------------------------------------------------------------------------------------------------
# Comparing


def reference_metadata(values: list[bytes | None]) -> Iterator[list[Any]]:
    decoder = _PayloadDecoder()
    for value in values:
        record_type, version, payload = decoder.metadata(value)
        yield [record_type, version, payload]


def check_metadata(probe: Probe, values: list[bytes | None]) -> None:
    # Every value twice, the second time from the cache on both sides.
    values = values + values[::7]
    got = probe.run(["M\t" + _hex(v) for v in values])
    expected = list(reference_metadata(values))
    bad = [(v, e, g) for v, e, g in zip(values, expected, got) if e != g]
    assert not bad, "\n".join(f"{_hex(v)}\n  python: {e}\n  java:   {g}" for v, e, g in bad[:10])


def test_realistic_records(probe: Probe) -> None:
    values: list[bytes | None] = list(realistic_records())
    check_metadata(probe, values)
    decoded = [d for d in reference_metadata(values)]
    assert all(d[2] is not None for d in decoded)  # the cases are records, not refusals


def test_random_records_of_every_type_at_every_version(probe: Probe) -> None:
    rng = random.Random(20240611)
    values: list[bytes | None] = list(random_records(rng, 40))
    check_metadata(probe, values)
    assert sum(d[2] is not None for d in reference_metadata(values)) > len(values) // 2


def test_headers_unknown_and_ignored_types(probe: Probe) -> None:
    cases = header_cases()
    check_metadata(probe, cases)
    decoded = list(reference_metadata(cases))
    assert any(d[0] is not None and d[2] is None for d in decoded)  # unmodelled types named
    assert any(d[2] is not None for d in decoded)  # non-minimal varints read


def test_truncated_trailing_and_flipped_bytes(probe: Probe) -> None:
    rng = random.Random(7)
    values = realistic_records() + random_records(rng, 3)
    check_metadata(probe, list(corruptions(rng, values)))


def test_random_bodies(probe: Probe) -> None:
    check_metadata(probe, list(random_bodies(random.Random(11), 3000)))


def test_strings_of_any_bytes(probe: Probe) -> None:
    cases = utf8_cases(random.Random(3), 1500)
    check_metadata(probe, list(cases))
    decoded = list(reference_metadata(list(cases)))
    assert 50 < sum(d[2] is not None for d in decoded) < len(cases) - 50  # both kinds well covered


def test_tagged_fields(probe: Probe) -> None:
    cases = tagged_cases()
    check_metadata(probe, list(cases))
    payloads = [d[2] for d in reference_metadata(list(cases))]
    assert payloads[0] == '{"partitionId":1,"topicId":"AAAAAAAAAAAAAAAAAAAACQ"}'  # the default left out
    # A tagged field printed mid-record (PartitionRecord's leaderRecoveryState) is covered.
    assert any(
        p is not None and 0 < p.index('"leaderRecoveryState"') < p.index('"leaderEpoch"')
        for p in payloads
        if p is not None and '"leaderRecoveryState"' in p and '"leaderEpoch"' in p
    )


def test_control_records(probe: Probe) -> None:
    cases = control_cases(random.Random(5))
    got = probe.run([f"C\t{_hex(k)}\t{_hex(v)}" for k, v in cases])
    expected = [
        list(_PayloadDecoder.control(Record(offset=0, timestamp=0, key=k, value=v))) for k, v in cases
    ]
    bad = [(c, e, g) for c, e, g in zip(cases, expected, got) if e != g]
    assert not bad, "\n".join(
        f"{_hex(c[0])} {_hex(c[1])}\n  python: {e}\n  java:   {g}" for c, e, g in bad[:10]
    )
    kinds = {e[0] for e in expected if e[1] is not None}
    assert kinds == {k.name for k in ControlType}
    assert {None, "UNKNOWN"} <= {e[0] for e in expected}


def test_peek_type_name(probe: Probe) -> None:
    rng = random.Random(9)
    values: list[bytes | None] = [
        None,
        b"",
        b"\x01",
        b"\x01\x03",
        b"\x01\x03\x00",
        b"\x02\x03\x00",
        b"\x01\x83\x00",
        b"\x01\x83\x80\x00",
        b"\x01\x83\x80\x80\x00",
        b"\x01\x8a\x00",
        b"\x01\xff\xff\x7f",
        b"\x01\x0a\x00",
        b"\x01\x06\x00",
    ]
    values += [*realistic_records(), *header_cases()[1:], *random_bodies(rng, 200)]
    values += [bytes((1, t, 0)) for t in range(128)]
    got = probe.run(["P\t" + _hex(v) for v in values])
    expected = [_peek_type_name(v) for v in values]
    bad = [(v, e, g) for v, e, g in zip(values, expected, got) if e != g]
    assert not bad, "\n".join(f"{_hex(v)}: python {e!r}, java {g!r}" for v, e, g in bad[:10])


# ---------------------------------------------------------------------------------------------------
# The exported schemas


def test_schemas_json_is_deterministic_ascii_and_complete() -> None:
    text = jvm_schemas.schemas_json()
    assert text == jvm_schemas.schemas_json()
    assert text.isascii() and text.endswith("\n")
    doc = json.loads(text)
    decoded = {t: s for t, s in SCHEMAS.items() if t not in PAYLOAD_WITHHELD_RECORD_TYPES}
    assert [m["id"] for m in doc["metadata"]] == sorted(int(t) for t in decoded)
    assert {m["id"]: len(m["versions"]) for m in doc["metadata"]} == {
        int(t): s.versions.high - s.versions.low + 1 for t, s in decoded.items()
    }
    assert [c["id"] for c in doc["control"]] == sorted(int(k) for k in CONTROL_MESSAGES)
    assert {e["id"]: e["name"] for e in doc["typeNames"]} == arrow_log._TYPE_NAMES
    assert {e["id"] for e in doc["ignored"]} == set(IGNORED_RECORD_TYPES | PAYLOAD_WITHHELD_RECORD_TYPES)


def test_schemas_refuse_what_the_java_decoder_cannot_match() -> None:
    with pytest.raises(ValueError, match="float64"):
        jvm_schemas._struct_json(schema_struct("F", [f("X", FLOAT64, "0+")]), 0, True, False)
    # A default whose JSON is not its value's: an int8 tagged field defaulting to False.
    with pytest.raises(ValueError, match="default"):
        jvm_schemas._struct_json(
            schema_struct("B", [f("X", INT8, "0+", tag=0, tagged="0+", default=False)]), 0, True, False
        )


# ---------------------------------------------------------------------------------------------------
# A microbenchmark (printed, never asserted): pytest -s tests/unit/spark/jvm -k bench


def _bench_values(make: Callable[[int], bytes], n: int) -> list[str]:
    return [make(i).hex() for i in range(n)]


def test_microbenchmark(probe: Probe) -> None:
    T = MetadataRecordType
    topic = uuid.UUID(int=0x5F6A3C2E << 96 | 0xABCD)
    dirs = [uuid.UUID(int=7 << 64 | 1), uuid.UUID(int=7 << 64 | 2), uuid.UUID(int=7 << 64 | 3)]

    def partition(i: int) -> bytes:
        return encode_record(
            make_record(
                T.PARTITION,
                1,
                partition_id=i,
                topic_id=topic,
                replicas=[1, 2, 3],
                isr=[1, 2, 3],
                leader=1 + i % 3,
                leader_epoch=0,
                partition_epoch=0,
                directories=dirs,
            )
        )

    def data(i: int) -> bytes:
        return b"\x00" + f"value-{i:08d}".encode() * 4

    lines = [
        f"BENCH\t{name}\t200\t" + "\t".join(_bench_values(make, 2000))
        for name, make in (("PartitionRecord v1", partition), ("non-metadata value", data))
    ]
    for result in probe.run(lines):
        print(
            f"{result['name']}: {result['nsPerRecord'] / 1000:.3f} us/record decoded, "
            f"{result['nsPerCachedRecord'] / 1000:.3f} us/record from the cache"
        )
