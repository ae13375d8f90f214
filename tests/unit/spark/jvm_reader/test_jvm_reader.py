"""The JVM reader of the ``kraft`` Spark source (``RowFilter``, ``LogFiles``, ``LogPlanner``,
``UnitReader``, ``RecordBatches`` in ``kraft.spark.jvm``'s Java sources) against its Python twin
``kraft.spark.arrow_log``: for the same logs, paths and filters, the same read units, the same rows
(every column) and the same errors, word for word.

A Java driver (``ReaderProbe.java``, compiled here against the built jar and PySpark's jars) runs
every scenario in one JVM and prints JSON lines; the same scenarios run through ``plan_units`` and
``read_unit`` in this process, and each scenario's two transcripts must be equal. The logs: the
metadata and data logs of ``test_arrow_log`` (several segments, two epochs, snapshots, control
records, LogAppendTime, record headers, a batch of no records), a log of compressed batches
(gzip, lz4 and zstd in the forms their libraries and Kafka write), a log whose every segment ends
in a batch that has a valid CRC but does not decode (each record-parsing and decompression error),
copies of those with torn tails, corruption, gaps, and ``meta.properties`` files of every kind.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pa = pytest.importorskip("pyarrow")

import lz4.frame  # noqa: E402
import zstandard  # noqa: E402

from kraft.common.errors import StorageError  # noqa: E402
from kraft.common.uuids import uuid_to_base64  # noqa: E402
from kraft.metadata.records import MetadataRecordType as T  # noqa: E402
from kraft.metadata.records import encode_record, make_record  # noqa: E402
from kraft.records.batch import (  # noqa: E402
    HEADER_SIZE,
    TIMESTAMP_TYPE_MASK,
    Compression,
    SimpleRecord,
    assign_offsets_and_epoch,
    build_batch,
    iter_batch_headers,
)
from kraft.spark.arrow_log import (  # noqa: E402
    ALL_ROWS,
    DEFAULT_MAX_BYTES_PER_UNIT,
    LogReadError,
    RowFilter,
    locate,
    plan_units,
    read_unit,
)
from kraft.storage.log_dir import METADATA_PARTITION_DIR_NAME as PARTITION_DIR  # noqa: E402
from kraft.storage.meta_properties import MetaProperties, write_meta_properties  # noqa: E402
from kraft.storage.metadata_log import MetadataLog  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import test_arrow_log as ta  # noqa: E402  (its log builders)

# One worker runs the module (`--dist loadgroup`): the probe is compiled and the scenarios read once.
pytestmark = pytest.mark.xdist_group("jvm-reader")

HERE = Path(__file__).resolve().parent
NODE = ta.NODE


# ------------------------------------------------------------------------------------------------
# The Java side


def _tool(name: str) -> str | None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / name).is_file():
        return str(Path(java_home) / "bin" / name)
    return shutil.which(name)


@dataclass(frozen=True)
class Probe:
    java: str
    classpath: str

    def run(self, *args: str, timeout: float = 120) -> str:
        done = subprocess.run(
            [self.java, "-Xss4m", "-cp", self.classpath, "ReaderProbe", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        assert done.returncode == 0, f"ReaderProbe failed:\n{done.stdout[-3000:]}\n{done.stderr[-5000:]}"
        return done.stdout


def compile_probe(work: Path) -> Probe:
    """The built jar (built into ``work`` if the one in the tree is missing or stale) and
    ReaderProbe compiled against it; skips where there is no JDK."""
    javac, java = _tool("javac"), _tool("java")
    if javac is None or java is None:
        pytest.skip("no JDK (javac and java) on PATH or in $JAVA_HOME: the JVM reader cannot be built")
    from kraft.spark import jvm

    try:
        jars = jvm.spark_jars_dir()
    except jvm.BuildError as e:
        pytest.skip(str(e))
    jar = jvm.jar_path()
    if jar is None:
        jar = jvm.build(work / "kraft-spark.jar", quiet=True)  # a compile error fails the test
    classes = work / "probe-classes"
    classes.mkdir(exist_ok=True)
    cp = os.pathsep.join([str(jar), str(jars / "*")])
    done = subprocess.run(
        [
            javac,
            "--release",
            "17",
            "-encoding",
            "UTF-8",
            "-nowarn",
            "-cp",
            cp,
            "-d",
            str(classes),
            str(HERE / "ReaderProbe.java"),
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"javac ReaderProbe.java failed:\n{done.stdout}{done.stderr}"
    return Probe(java, os.pathsep.join([str(classes), cp]))


def payloads_are_real() -> bool:
    """Whether Payloads.java is the real decoder (then payload columns are compared too)."""
    from kraft.spark import jvm

    source = (jvm.JAVA_DIR / "kraft" / "spark" / "Payloads.java").read_text(encoding="utf-8")
    return "STUB" not in source


# ------------------------------------------------------------------------------------------------
# Scenarios


@dataclass(frozen=True)
class Scenario:
    kind: str  # read | locate | filter | gone
    path: str = ""
    snapshots: bool = True
    max_bytes: int = DEFAULT_MAX_BYTES_PER_UNIT
    rf: RowFilter = ALL_ROWS
    batch_rows: int = 4096
    rf2: RowFilter = ALL_ROWS
    delete: int = -1  # gone: the unit whose file is deleted after planning

    def command(self) -> str:
        if self.kind == "read":
            args = [
                self.path,
                str(self.snapshots).lower(),
                str(self.max_bytes),
                spec(self.rf),
                str(self.batch_rows),
            ]
        elif self.kind == "locate":
            args = [self.path]
        elif self.kind == "gone":
            args = [self.path, str(self.snapshots).lower(), str(self.delete)]
        else:
            args = [spec(self.rf), spec(self.rf2)]
        assert not any("\t" in a or "\n" in a for a in args)
        return "\t".join([self.kind, *args])


def spec(rf: RowFilter) -> str:
    """ReaderProbe's filter syntax for ``rf``."""
    parts = []
    if rf.start is not None:
        parts.append(f"start={rf.start}")
    if rf.end is not None:
        parts.append(f"end={rf.end}")
    if rf.offsets is not None:
        parts.append("offsets=" + ",".join(str(o) for o in sorted(rf.offsets)))
    if rf.record_types is not None:
        parts.append("types=" + ",".join(sorted(rf.record_types)))
    if rf.record_type_not_null:
        parts.append("present")
    return ";".join(parts) or "-"


def reframe(batch: bytes, **kwargs: Any) -> bytes:
    return ta.reframe(batch, **kwargs)


def last_offset_delta(batch: bytes) -> int:
    return int(struct.unpack_from(">i", batch, 23)[0])


def write_segments(part: Path, segments: list[list[bytes]], *, epoch: int = 1) -> None:
    """Raw segment files of ``segments`` (lists of batches), offsets assigned densely from 0."""
    part.mkdir(parents=True, exist_ok=True)
    offset = 0
    for batches in segments:
        base = offset
        data = bytearray()
        for b in batches:
            data += assign_offsets_and_epoch(b, offset, epoch)
            offset += last_offset_delta(b) + 1
        (part / f"{base:020d}.log").write_bytes(bytes(data))


def varint(n: int) -> bytes:
    u = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        if u < 0x80:
            out.append(u)
            return bytes(out)
        out.append((u & 0x7F) | 0x80)
        u >>= 7


def record(body: bytes) -> bytes:
    return varint(len(body)) + body


def gzip_with_header(data: bytes) -> bytes:
    """A gzip member with FEXTRA, FNAME, FCOMMENT and FHCRC (the header fields zlib skips)."""
    flags = 0x02 | 0x04 | 0x08 | 0x10
    header = bytearray(b"\x1f\x8b\x08" + bytes([flags]) + struct.pack("<I", 1_700_000_000) + b"\x00\x03")
    header += struct.pack("<H", 5) + b"extra" + b"records.bin\x00" + b"a comment\x00"
    header += struct.pack("<H", zlib.crc32(header) & 0xFFFF)
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    return bytes(header) + body + struct.pack("<II", zlib.crc32(data), len(data) & 0xFFFFFFFF)


def lz4_header_checksum(descriptor: bytes) -> int:
    """An LZ4 frame descriptor's checksum byte (python-lz4 exposes no XXH32: computed here)."""
    return (xxh32(descriptor) >> 8) & 0xFF


def xxh32(data: bytes, seed: int = 0) -> int:
    p1, p2, p3, p4, p5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
    mask = 0xFFFFFFFF

    def rotl(x: int, r: int) -> int:
        return ((x << r) | (x >> (32 - r))) & mask

    n = len(data)
    i = 0
    if n >= 16:
        v = [(seed + p1 + p2) & mask, (seed + p2) & mask, seed & mask, (seed - p1) & mask]
        while i <= n - 16:
            for k in range(4):
                lane = int.from_bytes(data[i + 4 * k : i + 4 * k + 4], "little")
                v[k] = (rotl((v[k] + lane * p2) & mask, 13) * p1) & mask
            i += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & mask
    else:
        h = (seed + p5) & mask
    h = (h + n) & mask
    while i + 4 <= n:
        h = (h + int.from_bytes(data[i : i + 4], "little") * p3) & mask
        h = (rotl(h, 17) * p4) & mask
        i += 4
    while i < n:
        h = (h + data[i] * p5) & mask
        h = (rotl(h, 11) * p1) & mask
        i += 1
    h ^= h >> 15
    h = (h * p2) & mask
    h ^= h >> 13
    h = (h * p3) & mask
    h ^= h >> 16
    return h


def lz4_frame_with(
    records: bytes, *, flg: int | None = None, bd: int | None = None, content_size: int | None = None
) -> bytes:
    """``lz4.frame.compress(records)`` (content size stored) with header fields replaced and a
    matching header checksum."""
    frame = bytearray(lz4.frame.compress(records))
    assert frame[4] & 0x08  # content size present: header of 15 bytes
    if flg is not None:
        frame[4] = flg
    if bd is not None:
        frame[5] = bd
    if content_size is not None:
        struct.pack_into("<Q", frame, 6, content_size)
    frame[14] = lz4_header_checksum(bytes(frame[4:14]))
    return bytes(frame)


def lz4_frame(blocks: list[bytes], *, linked: bool) -> bytes:
    """An LZ4 frame of hand-made compressed ``blocks`` (64 KB max, no content size, no checksums)."""
    descriptor = bytes([0x40 | (0 if linked else 0x20), 0x40])
    out = struct.pack("<I", 0x184D2204) + descriptor + bytes([lz4_header_checksum(descriptor)])
    for block in blocks:
        out += struct.pack("<I", len(block)) + block
    return out + b"\x00\x00\x00\x00"


def lz4_literals(data: bytes) -> bytes:
    """An LZ4 block of one sequence: ``data`` as literals."""
    n = len(data)
    if n < 15:
        return bytes([n << 4]) + data
    rest = n - 15
    return b"\xf0" + b"\xff" * (rest // 255) + bytes([rest % 255]) + data


def match_then_literals(offset: int, length: int, tail: bytes) -> bytes:
    """An LZ4 block: a match of ``length`` (>= 19) at ``offset`` back, then ``tail`` (>= 5) as literals."""
    assert length >= 19 and len(tail) >= 5
    return b"\x0f" + struct.pack("<H", offset) + bytes([length - 19]) + lz4_literals(tail)


def linked_records() -> tuple[bytes, bytes, bytes]:
    """One record whose value ends in a run that an LZ4 block can copy from the block before:
    (the records, the first block, the records that the second block is to produce)."""
    value = b"0123456789" * 3 + b"ABCD"
    records = record(b"\x00\x00\x00\x01" + varint(len(value)) + value + b"\x00")
    split = records.index(b"0123456789") + 10
    return records, lz4_literals(records[:split]), records[split:]


def compressed_batches() -> list[bytes]:
    """Valid compressed batches, in the forms Kafka and the codec libraries write."""
    plain = build_batch(ta._plain(1, 9), timestamp_ms=0)
    records = plain[HEADER_SIZE:]
    big = build_batch(
        [SimpleRecord(value=(b"%06d" % i) * 170, key=b"k%d" % i) for i in range(120)], timestamp_ms=5
    )
    big_records = big[HEADER_SIZE:]
    rnd = random.Random(7)
    noisy = build_batch([SimpleRecord(value=rnd.randbytes(3000)) for _ in range(40)], timestamp_ms=9)
    noisy_records = noisy[HEADER_SIZE:]
    meta = build_batch(
        [
            SimpleRecord(value=encode_record(v))
            for v in [
                make_record(T.NO_OP),
                make_record(T.FENCE_BROKER, id=4, epoch=2),
                make_record(T.TOPIC, name="zz", topic_id=ta.TOPIC_ID),
            ]
        ],
        timestamp_ms=11,
    )
    G, L, Z = Compression.GZIP, Compression.LZ4, Compression.ZSTD
    linked_records_body, linked_first, linked_rest = linked_records()
    one_record = reframe(build_batch([SimpleRecord(value=b"x")], timestamp_ms=3), body=linked_records_body)
    skippable = struct.pack("<II", 0x184D2A53, 5) + b"skip!"
    kafka_zstd = zstandard.ZstdCompressor(write_content_size=False, write_checksum=True)
    out = [
        reframe(plain, attributes=G, body=gzip.compress(records)),
        reframe(plain, attributes=G, body=gzip.compress(records[:30]) + gzip.compress(records[30:])),
        reframe(plain, attributes=G, body=gzip_with_header(records)),
        reframe(big, attributes=G, body=gzip.compress(big_records, compresslevel=1)),
        reframe(plain, attributes=L, body=lz4.frame.compress(records)),
        # As Kafka writes it: 64 KB independent blocks, no content size.
        reframe(
            big,
            attributes=L,
            body=lz4.frame.compress(
                big_records, store_size=False, block_linked=False, block_size=lz4.frame.BLOCKSIZE_MAX64KB
            ),
        ),
        # Linked blocks (a block's matches reach into the ones before it), checksums on.
        reframe(
            big,
            attributes=L,
            body=lz4.frame.compress(
                big_records,
                block_size=lz4.frame.BLOCKSIZE_MAX64KB,
                content_checksum=True,
                block_checksum=True,
            ),
        ),
        # Incompressible: stored as uncompressed blocks.
        reframe(noisy, attributes=L, body=lz4.frame.compress(noisy_records, block_checksum=True)),
        reframe(
            plain,
            attributes=L,
            body=skippable + lz4.frame.compress(records[:20]) + lz4.frame.compress(records[20:]),
        ),
        reframe(plain, attributes=Z, body=zstandard.compress(records)),
        reframe(
            big,
            attributes=Z,
            body=kafka_zstd.compress(big_records[:7000]) + kafka_zstd.compress(big_records[7000:]),
        ),
        reframe(meta, attributes=Z, body=zstandard.compress(meta[HEADER_SIZE:])),
        reframe(
            plain,
            attributes=G | TIMESTAMP_TYPE_MASK,
            max_timestamp=1_800_000_000_123,
            body=gzip.compress(records),
        ),
        # Linked blocks made by hand: the second copies 20 bytes from the end of the first (a
        # prefix under 64 KB, which liblz4 checks).
        reframe(
            one_record,
            attributes=L,
            body=lz4_frame([linked_first, match_then_literals(10, 20, linked_rest[20:])], linked=True),
        ),
        # No records: the body is not even decompressed.
        reframe(plain, attributes=G, records_count=0, body=b"not gzip at all"),
    ]
    return out


def corrupt_batches() -> list[bytes]:
    """Batches with a valid CRC whose records do not decode: one per error message."""
    p = build_batch(ta._plain(5, 3), timestamp_ms=0)
    records = p[HEADER_SIZE:]
    G, L, Z = Compression.GZIP, Compression.LZ4, Compression.ZSTD

    def one(*recs: bytes, count: int | None = None) -> bytes:
        body = b"".join(recs)
        body += b"\x00" * max(0, 7 * len(recs) - len(body))  # so that the count check passes
        return reframe(p, body=body, records_count=len(recs) if count is None else count)

    ok_key_value = b"\x00" + varint(0) + varint(0) + varint(1) + b"k" + varint(1) + b"v"
    gz = gzip.compress(records)
    lz = lz4.frame.compress(records, content_checksum=True)
    lz_plain = lz4.frame.compress(records, store_size=False)
    zs = zstandard.compress(records)
    bomb = bytes(65 << 20)
    linked_body, first, rest = linked_records()
    one_record = reframe(p, body=linked_body, records_count=1)

    def gz_raw(deflated: bytes) -> bytes:
        return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + deflated + b"\x00" * 8

    dictionary = b"hello world, " * 20
    c = zlib.compressobj(6, zlib.DEFLATED, -15, zdict=dictionary)
    far_back = c.compress(b"hello world, " * 5) + c.flush()
    return [
        reframe(p, records_count=4),
        reframe(p, records_count=1000),
        reframe(p, records_count=2),
        reframe(p, body=records[:-1] + b"\x02"),
        reframe(p, body=records + b"\x00"),
        one(b"\x01" + b"\x00" * 10),  # length -1
        one(b"\xff" * 5 + b"\x00" * 5),  # length varint longer than 5 bytes
        one(b"\xff\xff\xff\xff\x7f" + b"\x00" * 5),  # does not fit 32 bits
        one(record(b"\x00" + b"\xff" * 9 + b"\x02" + b"\x00" * 5)),  # timestampDelta over 64 bits
        one(record(b"\x00" + b"\xff" * 11)),  # timestampDelta longer than 10 bytes
        one(record(b"\x00\x00\x00" + varint(50) + b"abc")),  # key runs past the record
        one(record(b"\x00\x00\x00" + varint(-1) + varint(9) + b"v")),  # value runs past the record
        one(record(ok_key_value + varint(-1))),  # header count -1
        one(record(ok_key_value + varint(1) + varint(-1) + b"\x00")),  # header key length -1
        one(record(ok_key_value + varint(1) + varint(1) + b"h" + varint(5) + b"ab")),  # header value short
        one(record(ok_key_value + varint(0) + b"\x07")),  # a byte after the headers
        one(record(b"")),  # no attributes
        one(record(b"\x00\x80")),  # timestampDelta runs past the record
        # Decompression.
        reframe(p, attributes=G, body=b"not gzip"),
        reframe(p, attributes=G, body=gz[:-3]),
        reframe(p, attributes=G, body=gz[:-8] + bytes([gz[-8] ^ 1]) + gz[-7:]),  # data check
        reframe(p, attributes=G, body=gz[:-1] + bytes([gz[-1] ^ 1])),  # length check
        reframe(p, attributes=G, body=gz[:2] + b"\x07" + gz[3:]),  # method
        reframe(p, attributes=G, body=gz[:3] + b"\xe0" + gz[4:]),  # flags
        reframe(p, attributes=G, body=gz[:12] + bytes([gz[12] ^ 0x55]) + gz[13:]),  # the deflate data
        reframe(p, attributes=G, body=gz + b"\x00"),
        reframe(p, attributes=G, body=gz_raw(b"\x07")),  # invalid block type
        reframe(p, attributes=G, body=gz_raw(b"\x01\x05\x00\x00\x00")),  # stored lengths
        reframe(p, attributes=G, body=gz_raw(far_back)),  # a distance into a dictionary it does not have
        reframe(p, attributes=G, body=gz + b"\x1f\x8b\x08\x00"),
        reframe(p, attributes=G, body=b""),
        reframe(p, attributes=G, body=gzip.compress(bomb, compresslevel=1)),
        reframe(p, attributes=L, body=b"not lz4 at all"),
        reframe(p, attributes=L, body=lz[:-3]),
        reframe(p, attributes=L, body=lz[:5]),
        reframe(p, attributes=L, body=lz[:-1] + bytes([lz[-1] ^ 1])),  # content checksum
        reframe(p, attributes=L, body=lz + b"\x00"),
        reframe(p, attributes=L, body=lz + b"\x00" * 7),
        # Hand-made blocks: a match before the block in independent blocks; before the frame in
        # linked ones; a match of offset 0 (liblz4 writes zeros).
        reframe(
            one_record,
            attributes=L,
            body=lz4_frame([first, match_then_literals(10, 20, rest[20:])], linked=False),
        ),
        reframe(
            one_record,
            attributes=L,
            body=lz4_frame([first, match_then_literals(len(linked_body) + 1, 20, rest[20:])], linked=True),
        ),
        reframe(
            one_record,
            attributes=L,
            body=lz4_frame([first, match_then_literals(0, 20, rest[20:])], linked=True),
        ),
        # A block size of 0 is the end mark: a frame of nothing, then a truncated one.
        reframe(one_record, attributes=L, body=lz4_frame([b""], linked=False)),
        # A byte after the last literals of a block.
        reframe(one_record, attributes=L, body=lz4_frame([first + b"\x00"], linked=False)),
        reframe(p, attributes=L, body=lz_plain[:4] + bytes([lz_plain[4] | 0x02]) + lz_plain[5:]),
        reframe(p, attributes=L, body=lz4_frame_with(records, flg=0x48 | 0x80)),  # version 2
        reframe(p, attributes=L, body=lz4_frame_with(records, flg=0x68 | 0x02)),  # reserved bit
        reframe(p, attributes=L, body=lz4_frame_with(records, bd=0x30)),  # block size id 3
        reframe(p, attributes=L, body=lz4_frame_with(records, bd=0x41)),  # reserved BD bits
        reframe(p, attributes=L, body=lz4_frame_with(records, content_size=len(records) + 1)),
        reframe(p, attributes=L, body=struct.pack("<II", 0x184D2A50, 100) + b"short"),
        reframe(p, attributes=L, body=lz4.frame.compress(bomb)),
        reframe(p, attributes=Z, body=b"not zstd at all"),
        reframe(p, attributes=Z, body=zs[:-3]),
        reframe(p, attributes=Z, body=zs + b"\x00"),
        reframe(p, attributes=Z, body=zs + b"\x28\xb5"),
        reframe(p, attributes=Z, body=zs[:-6] + bytes([zs[-6] ^ 0xFF]) + zs[-5:]),
        reframe(p, attributes=Z, body=b""),
        reframe(p, attributes=Z, body=zstandard.ZstdCompressor(write_content_size=False).compress(bomb)),
        reframe(p, attributes=Compression.SNAPPY, body=records),
        reframe(p, attributes=5, body=records),
        reframe(p, attributes=7 | 0x20, body=records),  # a control batch of unknown codec
    ]


def fuzz_batches(seed: int, n: int) -> list[bytes]:
    """``n`` batches with a valid CRC and randomly damaged records, plain and compressed (most
    bytes of a compressed body are block data, so the LZ4 decoder's checks get exercised)."""
    rnd = random.Random(seed)
    sources = [build_batch(ta._plain(i, 2 + i % 9), timestamp_ms=i) for i in range(6)] + [
        build_batch(
            [SimpleRecord(value=(b"%04d" % i) * rnd.randint(1, 60)) for i in range(30)], timestamp_ms=1
        )
    ]

    def lz4_body(records: bytes) -> bytes:
        return lz4.frame.compress(
            records,
            store_size=rnd.random() < 0.5,
            block_linked=rnd.random() < 0.5,
            content_checksum=rnd.random() < 0.2,
            block_size=lz4.frame.BLOCKSIZE_MAX64KB,
        )

    codecs: list[tuple[int, Callable[[bytes], bytes]]] = [
        (Compression.NONE, lambda r: r),
        (Compression.GZIP, lambda r: gzip.compress(r, mtime=0)),
        (Compression.LZ4, lz4_body),
        (Compression.LZ4, lz4_body),
        (Compression.LZ4, lz4_body),
        (Compression.ZSTD, zstandard.compress),
    ]
    out = []
    for _ in range(n):
        src = rnd.choice(sources)
        codec, compress = rnd.choice(codecs)
        body = bytearray(compress(src[HEADER_SIZE:]))
        kind = rnd.randrange(5)
        if kind == 0 and body:
            for _ in range(rnd.randint(1, 3)):
                body[rnd.randrange(len(body))] ^= rnd.randint(1, 255)
        elif kind == 1 and body:
            del body[rnd.randrange(len(body)) :]
        elif kind == 2:
            body.insert(rnd.randint(0, len(body)), rnd.randrange(256))
        elif kind == 3 and body:
            at = rnd.randrange(len(body))
            body[at : at + rnd.randint(1, 8)] = rnd.randbytes(rnd.randint(0, 8))
        else:
            body[rnd.randrange(len(body) + 1) :] += rnd.randbytes(rnd.randint(1, 20))
        count = int(struct.unpack_from(">i", src, 57)[0]) + (rnd.choice([-1, 0, 0, 0, 1]) if kind == 4 else 0)
        out.append(reframe(src, attributes=codec, body=bytes(body), records_count=max(count, 0)))
    return out


def write_fuzz_log(log_dir: Path, seed: int, n: int) -> Path:
    """One segment per fuzzed batch, so that each fails (or not) on its own."""
    write_segments(log_dir / PARTITION_DIR, [[b] for b in fuzz_batches(seed, n)])
    return log_dir


def write_corrupt_log(log_dir: Path) -> Path:
    """Segments of two good batches and one that does not decode (each unit fails on its own)."""
    log_dir.mkdir(parents=True)
    write_meta_properties(log_dir, MetaProperties(cluster_id="MkU3OEVBNTcwNTJENDM2Qg", node_id=9))
    good = build_batch(ta._plain(3, 4), timestamp_ms=0)
    write_segments(log_dir / PARTITION_DIR, [[good, good, bad] for bad in corrupt_batches()])
    return log_dir


def write_codec_log(log_dir: Path) -> Path:
    log_dir.mkdir(parents=True)
    write_meta_properties(log_dir, MetaProperties(cluster_id="MkU3OEVBNTcwNTJENDM2Qg", node_id=NODE))
    log = MetadataLog(log_dir / PARTITION_DIR, segment_bytes=30_000)
    log.append_as_leader(ta._leader_change(1, 1), 1)
    for batch in compressed_batches():
        log.append_as_leader(batch, 1)
    log.flush()
    log.close()
    return log_dir


def copy_of(src: Path, dst: Path, mutate: Callable[[Path], None]) -> Path:
    shutil.copytree(src, dst)
    mutate(dst)
    return dst


def segments(log_dir: Path) -> list[Path]:
    return sorted((log_dir / PARTITION_DIR).glob("*.log"))


def batch_positions(path: Path) -> list[tuple[int, Any]]:
    return list(iter_batch_headers(path.read_bytes()))


def truncate_last(to: int) -> Callable[[Path], None]:
    def mutate(d: Path) -> None:
        last = segments(d)[-1]
        data = last.read_bytes()
        pos, _ = batch_positions(last)[-1]
        last.write_bytes(data[: pos + to])

    return mutate


def append_zeros(d: Path) -> None:
    last = segments(d)[-1]
    last.write_bytes(last.read_bytes() + bytes(100))


def flip_in(which: int, batch: int, at: int) -> Callable[[Path], None]:
    def mutate(d: Path) -> None:
        seg = segments(d)[which]
        pos, _ = batch_positions(seg)[batch]
        ta.flip_byte(seg, pos + at)

    return mutate


def flip_snapshot(d: Path) -> None:
    snap = next((d / PARTITION_DIR).glob("*.checkpoint"))
    ta.flip_byte(snap, snap.stat().st_size - 5)


def drop_segment(i: int) -> Callable[[Path], None]:
    return lambda d: os.unlink(segments(d)[i])


def cut_first(n: int) -> Callable[[Path], None]:
    def mutate(d: Path) -> None:
        first = segments(d)[0]
        first.write_bytes(first.read_bytes()[:-n])

    return mutate


def shift_base_offset(d: Path) -> None:
    seg = segments(d)[1]
    pos, header = batch_positions(seg)[1]
    data = bytearray(seg.read_bytes())
    struct.pack_into(">q", data, pos, header.base_offset + 3)  # not under the CRC
    seg.write_bytes(bytes(data))


def short_header_in_first(d: Path) -> None:
    first = segments(d)[0]
    data = first.read_bytes()
    pos, _ = batch_positions(first)[-1]
    first.write_bytes(data[: pos + 30])


def bad_length_in_last(d: Path) -> None:
    last = segments(d)[-1]
    pos, _ = batch_positions(last)[0]
    data = bytearray(last.read_bytes())
    struct.pack_into(">i", data, pos + 8, 20)
    last.write_bytes(bytes(data))


def epochs_down(root: Path) -> Path:
    part = root / PARTITION_DIR
    part.mkdir(parents=True)
    one = build_batch([SimpleRecord(value=encode_record(make_record(T.NO_OP)))])
    data = b"".join(assign_offsets_and_epoch(one, i, e) for i, e in enumerate([2, 1, 2]))
    (part / f"{0:020d}.log").write_bytes(data)
    return root


META_PROPERTIES: dict[str, bytes] = {
    "valid": b"#\n#Tue Oct 22 10:00:00 UTC 2024\nnode.id=7\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n",
    "directory-id": b"node.id=8\ndirectory.id="
    + uuid_to_base64(uuid.UUID(int=12345)).encode()
    + b"\nversion=1\ncluster.id=c\n",
    "crlf-bom": "\ufeff# x\r\nnode.id = 11\r\nversion : 1\r\ncluster.id c\r\n".encode(),
    "continued": b"node.id=1\\\n   2\nversion=1\ncluster.id=c\n! comment\n",
    "escaped-key": b"node\\.id=4\nversion=1\ncluster.id=c\n",
    "unicode-digits": "node.id= \u0661\u0662 \nversion=1\ncluster.id=c\n".encode(),
    "underscores": b"node.id=1_0\nversion=1\ncluster.id=c\n",
    "unicode-spaces": "node.id=\u200a5\u3000\nversion=\u00a01\u2009\ncluster.id=c\n".encode(),
    "form-feed": b"node.id=5\x0cversion=1\x0ccluster.id=c",
    "no-version": b"node.id=7\ncluster.id=c\n",
    "version-0": b"node.id=7\nversion=0\ncluster.id=c\n",
    "version-2": b"node.id=7\nversion=2\ncluster.id=c\n",
    "version-quotes": b"node.id=7\nversion=it's\ncluster.id=c\n",
    "version-blank": b"node.id=7\nversion=   \ncluster.id=c\n",
    "no-cluster": b"node.id=7\nversion=1\ncluster.id=  \n",
    "no-node": b"version=1\ncluster.id=c\n",
    "node-word": b"node.id=seven\nversion=1\ncluster.id=c\n",
    "node-double-underscore": b"node.id=1__0\nversion=1\ncluster.id=c\n",
    "node-negative": b"node.id=-3\nversion=1\ncluster.id=c\n",
    "node-tab": b"node.id=\t4\tx\nversion=1\ncluster.id=c\n",
    "dir-short": b"node.id=7\nversion=1\ncluster.id=c\ndirectory.id=AAAA\n",
    "dir-not-canonical": b"node.id=7\nversion=1\ncluster.id=c\ndirectory.id=AAAAAAAAAAAAAAAAAAAAAB\n",
    "dir-plus": b"node.id=7\nversion=1\ncluster.id=c\ndirectory.id=AAAAAAAAAAAAAAAAAAAA+A\n",
    "dir-pad": b"node.id=7\nversion=1\ncluster.id=c\ndirectory.id=AAAAAAAAAAAAAAAAAAAA==\n",
    "dir-pad-odd": b"node.id=7\nversion=1\ncluster.id=c\ndirectory.id=AAAAAAAAAAAAAAAAAAAAA=\n",
    "dir-space": b"node.id=7\nversion=1\ncluster.id=c\ndirectory.id=AAAAAAAAAA AAAAAAAAAAA\n",
    "dir-unicode": "node.id=7\nversion=1\ncluster.id=c\ndirectory.id=AAAAAAAAAAAAAAAAAAAA\u00e9_\n".encode(),
    "bad-escape": b"node.id=\\u12\nversion=1\ncluster.id=c\n",
    "bad-escape-no-key": b"=\\uZZZZ\tx\nversion=1\n",
    "bad-utf8": b"node.id=1\n\xff\n",
    "bad-utf8-end": b"version=1\n\xe2\x82",
    "bad-utf8-cont": b"version=1\n\xf0\x90\x80(\n",
}


def write_meta_variants(root: Path) -> dict[str, Path]:
    out = {}
    for name, text in META_PROPERTIES.items():
        d = root / name
        (d / PARTITION_DIR).mkdir(parents=True)
        (d / PARTITION_DIR / f"{0:020d}.log").write_bytes(b"")
        (d / "meta.properties").write_bytes(text)
        out[name] = d
    d = root / "meta-dir"
    (d / PARTITION_DIR).mkdir(parents=True)
    (d / "meta.properties").mkdir()
    out["meta-dir"] = d
    return out


FILTER_PAIRS: list[tuple[RowFilter, RowFilter]] = [
    (ALL_ROWS, ALL_ROWS),
    (ALL_ROWS.offset_at_least(3), ALL_ROWS.offset_below(17)),
    (ALL_ROWS.offset_at_least(3).offset_at_least(8), ALL_ROWS.offset_below(17).offset_below(30)),
    (ALL_ROWS.offset_in([1, 5, 9, 22]), ALL_ROWS.offset_in([5, 9, 23]).offset_at_least(6)),
    (ALL_ROWS.offset_in([]), ALL_ROWS),
    (ALL_ROWS.record_type_in(["A", "B"]), ALL_ROWS.record_type_in(["B", "C"])),
    (ALL_ROWS.record_type_in([]), ALL_ROWS.offset_below(4)),
    (ALL_ROWS.record_type_present(), ALL_ROWS.offset_in([0, 24]).offset_below(24)),
    (ALL_ROWS.offset_at_least(10), ALL_ROWS.offset_below(10)),
]


def build_scenarios(root: Path) -> dict[str, Scenario]:
    meta = ta.write_log(root / "meta")
    data = ta.write_data_log(root / "data")
    codecs = write_codec_log(root / "codecs")
    corrupt = write_corrupt_log(root / "corrupt")
    fuzz = write_fuzz_log(root / "fuzz", seed=1, n=400)
    part = meta / PARTITION_DIR
    segs = segments(meta)
    snap = next(part.glob("*.checkpoint"))
    shutil.copy(snap, meta / "bootstrap.checkpoint")
    (root / "link").symlink_to(meta, target_is_directory=True)
    (root / "empty" / PARTITION_DIR).mkdir(parents=True)
    (root / "nopart" / "sub").mkdir(parents=True)

    def read(path: Path | str, **kw: Any) -> Scenario:
        return Scenario("read", str(path), **kw)

    sc: dict[str, Scenario] = {
        "meta": read(meta),
        "meta-no-snapshots": read(meta, snapshots=False, batch_rows=5),
        "meta-split": read(meta, max_bytes=300, batch_rows=7),
        "meta-split-1": read(meta, max_bytes=1, batch_rows=1),
        # Units of exactly one first batch: a new unit starts once max_bytes are reached.
        "meta-split-exact": read(meta, max_bytes=batch_positions(segs[0])[1][0], batch_rows=2),
        "meta-range": read(meta, rf=ALL_ROWS.offset_at_least(60).offset_below(90), max_bytes=400),
        "meta-offsets": read(meta, rf=ALL_ROWS.offset_in([5, 77, 78, 10_000])),
        "meta-offsets-none": read(meta, rf=ALL_ROWS.offset_in([1]).offset_at_least(2)),
        "meta-snapshot-start": read(meta, rf=ALL_ROWS.offset_at_least(19)),
        "meta-snapshot-past": read(meta, rf=ALL_ROWS.offset_at_least(20)),
        "meta-end": read(meta, rf=ALL_ROWS.offset_below(33), batch_rows=3),
        "meta-types": read(meta, rf=ALL_ROWS.record_type_in(["TOPIC_RECORD", "CLIENT_QUOTA_RECORD"])),
        "meta-present": read(meta, rf=ALL_ROWS.record_type_present(), batch_rows=1),
        "meta-types-none": read(meta, rf=ALL_ROWS.record_type_in([])),
        "meta-types-range": read(
            meta, rf=ALL_ROWS.record_type_in(["NO_OP_RECORD"]).offset_at_least(40), max_bytes=200
        ),
        "partition-dir": read(part),
        "segment-alone": read(segs[1], snapshots=False),
        "last-segment-alone": read(segs[-1], snapshots=False),
        "snapshot-alone": read(snap, snapshots=False),
        "bootstrap": read(meta / "bootstrap.checkpoint"),
        "symlink-dotdot": read(f"{root}/link/../link/{PARTITION_DIR}/"),
        "empty-partition": read(root / "empty"),
        "not-a-log-file": read(meta / "meta.properties"),
        "missing-path": read(meta / "nope"),
        "no-partition": read(root / "nopart"),
        "max-bytes-zero": read(meta, max_bytes=0),
        "data": read(data),
        "data-split": read(data, max_bytes=500, batch_rows=5),
        "codecs": read(codecs, batch_rows=50),
        "codecs-split": read(codecs, max_bytes=1, batch_rows=1),
        "codecs-types": read(codecs, rf=ALL_ROWS.record_type_present()),
        "corrupt": read(corrupt),
        "corrupt-split": read(corrupt, max_bytes=1),
        "fuzz": read(fuzz),
        "torn-tail": read(copy_of(meta, root / "torn", truncate_last(40))),
        "torn-tail-past-end": read(copy_of(meta, root / "torn70", truncate_last(70))),
        "torn-tail-split": read(root / "torn70", max_bytes=150, batch_rows=2),
        "zeros-after-tail": read(copy_of(meta, root / "zeros", append_zeros)),
        "crc-middle": read(copy_of(meta, root / "crc", flip_in(1, 1, 70))),
        "crc-middle-split": read(root / "crc", max_bytes=200, rf=ALL_ROWS.offset_at_least(3)),
        # The filter's end offset stops the read at the batch that reaches it: a corrupt batch
        # after that one is never looked at.
        "stop-before-corruption": read(
            copy_of(data, root / "stop", flip_in(0, 3, 70)), rf=ALL_ROWS.offset_below(8)
        ),
        "valid-batch-after": read(copy_of(meta, root / "after", flip_in(-1, 0, 70))),
        "bad-magic-split": read(copy_of(meta, root / "magic", flip_in(2, 1, 16)), max_bytes=1),
        "bad-length-last": read(copy_of(meta, root / "length", bad_length_in_last)),
        "snapshot-crc": read(copy_of(meta, root / "snapcrc", flip_snapshot)),
        "snapshot-crc-not-read": read(root / "snapcrc", snapshots=False),
        "missing-segment": read(copy_of(meta, root / "gap", drop_segment(2))),
        "missing-segment-filtered": read(root / "gap", rf=ALL_ROWS.offset_below(5)),
        "partial-non-last": read(copy_of(meta, root / "partial", cut_first(10))),
        "short-header-non-last": read(copy_of(meta, root / "short", short_header_in_first)),
        "base-offset-gap": read(copy_of(meta, root / "shift", shift_base_offset)),
        "epoch-down": read(epochs_down(root / "epochs")),
    }
    for i, rf in enumerate(ta.FILTERS):
        for rows in (5, 4096):
            sc[f"data-filter-{i}-{rows}"] = read(data, rf=rf, batch_rows=rows)
            sc[f"meta-filter-{i}-{rows}"] = read(meta, rf=rf, batch_rows=rows, max_bytes=600)
    for name, d in write_meta_variants(root / "meta-variants").items():
        sc[f"meta-properties-{name}"] = Scenario("locate", str(d))
    for name, path in {
        "meta": meta,
        "partition": part,
        "segment": segs[0],
        "snapshot": snap,
        "bootstrap": meta / "bootstrap.checkpoint",
        "missing": meta / "nope",
    }.items():
        sc[f"locate-{name}"] = Scenario("locate", str(path))
    # A file deleted after the read was planned (snapshot cleanup, retention).
    for name, delete in (("file-gone", 0), ("segment-gone", 3)):
        gone = copy_of(meta, root / name, lambda d: None)
        shutil.copytree(gone, root / f"{name}.pristine")
        sc[name] = Scenario("gone", str(gone), delete=delete)
    for i, (a, b) in enumerate(FILTER_PAIRS):
        sc[f"row-filter-{i}"] = Scenario("filter", rf=a, rf2=b)
    return sc


SCENARIO_NAMES = [
    "meta",
    "meta-no-snapshots",
    "meta-split",
    "meta-split-1",
    "meta-split-exact",
    "meta-range",
    "meta-offsets",
    "meta-offsets-none",
    "meta-snapshot-start",
    "meta-snapshot-past",
    "meta-end",
    "meta-types",
    "meta-present",
    "meta-types-none",
    "meta-types-range",
    "partition-dir",
    "segment-alone",
    "last-segment-alone",
    "snapshot-alone",
    "bootstrap",
    "symlink-dotdot",
    "empty-partition",
    "not-a-log-file",
    "missing-path",
    "no-partition",
    "max-bytes-zero",
    "data",
    "data-split",
    "codecs",
    "codecs-split",
    "codecs-types",
    "corrupt",
    "corrupt-split",
    "fuzz",
    "torn-tail",
    "torn-tail-past-end",
    "torn-tail-split",
    "zeros-after-tail",
    "crc-middle",
    "crc-middle-split",
    "stop-before-corruption",
    "valid-batch-after",
    "bad-magic-split",
    "bad-length-last",
    "snapshot-crc",
    "snapshot-crc-not-read",
    "missing-segment",
    "missing-segment-filtered",
    "partial-non-last",
    "short-header-non-last",
    "base-offset-gap",
    "epoch-down",
    *[
        f"{log}-filter-{i}-{rows}"
        for i in range(len(ta.FILTERS))
        for rows in (5, 4096)
        for log in ("data", "meta")
    ],
    *[f"meta-properties-{name}" for name in [*META_PROPERTIES, "meta-dir"]],
    *[f"locate-{name}" for name in ("meta", "partition", "segment", "snapshot", "bootstrap", "missing")],
    *[f"row-filter-{i}" for i in range(len(FILTER_PAIRS))],
    "file-gone",
    "segment-gone",
]


# ------------------------------------------------------------------------------------------------
# The Python side: the same transcript from kraft.spark.arrow_log


def error_of(e: LogReadError) -> dict[str, Any]:
    return {"error": str(e), "file": e.file, "position": e.position, "offset": e.offset}


def rows_of(batch: Any) -> list[dict[str, Any]]:
    table = pa.Table.from_batches([batch])
    i = table.schema.get_field_index("timestamp")
    table = table.set_column(i, "timestamp", table.column("timestamp").cast(pa.int64()))
    out = []
    for row in table.to_pylist():
        for col in ("key", "value"):
            row[col] = None if row[col] is None else base64.b64encode(row[col]).decode()
        out.append(row)
    return out


def python_transcript(sc: Scenario) -> list[dict[str, Any]]:
    if sc.kind == "locate":
        try:
            f = locate(sc.path)
        except StorageError as e:
            return [{"storage_error": str(e)}]
        return [
            {
                "segments": [list(s) for s in f.segments],
                "snapshots": [list(s) for s in f.snapshots],
                "last_segment": f.last_segment,
                "node": f.node,
                "single_file": f.single_file,
            }
        ]
    if sc.kind == "filter":
        rf = sc.rf.intersect(sc.rf2)
        may = []
        for lo in range(-2, 25, 3):
            for hi in range(-1, 28, 4):
                may += [rf.may_contain(lo, hi), rf.covers(lo, hi)]
            may.append(rf.may_contain(lo, None))
        return [
            {
                "start": rf.start,
                "end": rf.end,
                "filters_offsets": rf.filters_offsets,
                "filters_record_types": rf.filters_record_types,
                "admits": [rf.admits_offset(o) for o in range(-2, 25)],
                "may_contain": may,
                "types": [rf.admits_record_type(n) for n in (None, "A", "B", "C")],
            }
        ]
    if sc.kind == "gone":  # the Java run deleted the file: put it back, then do the same
        shutil.copytree(Path(sc.path + ".pristine"), sc.path, dirs_exist_ok=True)
    try:
        units = plan_units(
            sc.path, include_snapshots=sc.snapshots, max_bytes_per_unit=sc.max_bytes, row_filter=sc.rf
        )
    except LogReadError as e:
        return [{"plan_error": error_of(e)}]
    except (StorageError, ValueError) as e:  # the Java planner: IllegalArgumentException for both
        return [{"plan_error": {"storage_error": str(e)}}]
    if sc.kind == "gone":
        os.unlink(units[sc.delete].path)
    out: list[dict[str, Any]] = []
    for u in units:
        out.append(
            {
                "unit": {
                    "path": u.path,
                    "kind": u.kind,
                    "start": u.start,
                    "end": u.end,
                    "first_offset": u.first_offset,
                    "end_offset": u.end_offset,
                    "min_epoch": u.min_epoch,
                    "file_size": u.file_size,
                    "last_segment": u.last_segment,
                    "node": u.node,
                    "snapshot_offset": u.snapshot_offset,
                }
            }
        )
        try:
            for batch in read_unit(u, sc.rf, batch_rows=sc.batch_rows):
                out.append({"batch": batch.num_rows})
                out += rows_of(batch)
        except LogReadError as e:
            out.append(error_of(e))
            continue
        out.append({"end": True})
    return out


def java_transcripts(text: str) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = []
    for line in text.splitlines():
        item = json.loads(line)
        if set(item) == {"scenario"}:
            assert item["scenario"] == len(out)
            out.append([])
            continue
        if "timestamp_ms" in item:
            item["timestamp"] = item.pop("timestamp_ms") * 1000
            item = {k: item[k] for k in ta.RECORD_SCHEMA.names}
        out[-1].append(item)
    return out


PAYLOAD_COLUMNS = ("control_type", "record_type", "record_version", "payload")


@pytest.fixture(scope="module")
def transcripts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Any, Any]]:
    work = tmp_path_factory.mktemp("jvm-reader")
    probe = compile_probe(work)
    scenarios = build_scenarios(work / "logs")
    assert sorted(scenarios) == sorted(SCENARIO_NAMES)
    names = list(scenarios)
    commands = work / "scenarios.tsv"
    commands.write_text("".join(scenarios[n].command() + "\n" for n in names), encoding="utf-8")
    java = java_transcripts(probe.run("batch", str(commands)))
    assert len(java) == len(names)
    real = payloads_are_real()
    out = {}
    for name, got in zip(names, java):
        want = python_transcript(scenarios[name])
        if not real:
            for row in got + want:
                for col in PAYLOAD_COLUMNS:
                    row.pop(col, None)
        out[name] = (got, want)
    return out


@pytest.mark.parametrize("name", SCENARIO_NAMES)
def test_the_jvm_reader_gives_what_arrow_log_gives(
    transcripts: dict[str, tuple[Any, Any]], name: str
) -> None:
    got, want = transcripts[name]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"line {i} of {name} differs:\n java:   {g}\n python: {w}"
    assert len(got) == len(want), f"{name}: java gave {len(got)} lines, python {len(want)}"


def test_the_scenarios_cover_what_they_are_meant_to(transcripts: dict[str, tuple[Any, Any]]) -> None:
    """The comparisons above are not vacuous: the logs give rows, and the errors are the ones meant."""

    def lines(name: str) -> list[dict[str, Any]]:
        return transcripts[name][1]

    def errors(name: str) -> list[str]:
        return [x["error"] for x in lines(name) if "error" in x]

    def rows(name: str) -> list[dict[str, Any]]:
        return [x for x in lines(name) if "batch_base_offset" in x]

    assert len(rows("meta")) > 150 and any(r["from_snapshot"] for r in rows("meta"))
    assert len(rows("data")) > 80 and len(rows("codecs")) > 300
    assert len(rows("meta-split-1")) == len(rows("meta"))
    assert {r["record_type"] for r in rows("meta-types")} == {"TOPIC_RECORD", "CLIENT_QUOTA_RECORD"}
    corrupt = errors("corrupt")
    # Every bad batch fails but the LZ4 match of offset 0, which liblz4 decodes (as zeros).
    assert len(corrupt) == len(corrupt_batches()) - 1
    assert all("corrupt records in the batch" in e for e in corrupt)
    values = {r["value"] for r in rows("corrupt")} | {r["value"] for r in rows("codecs")}
    assert base64.b64encode(b"0123456789" + bytes(20) + b"ABCD").decode() in values
    assert base64.b64encode(b"0123456789" * 3 + b"ABCD").decode() in values
    for words in (
        "claims",
        "does not fit 64 bits",
        "negative key length",
        "incorrect data check",
        "ERROR_decompressionFailed",
        "ERROR_contentChecksum_invalid",
        "zstd frame is truncated",
        "decompress to more than",
        "snappy",
        "unknown compression codec 7",
        "Unknown frame descriptor",
        "ERROR_frameSize_wrong",
        "header flags",
        "invalid block type",
        "invalid stored block lengths",
        "invalid distance too far back",
    ):
        assert any(words in e for e in corrupt), words
    assert all("(position 0)" in e for e in errors("corrupt-split"))  # unit-relative, as Python's
    fuzzed = [x for x in lines("fuzz") if "end" in x or "error" in x]
    assert 50 < len(errors("fuzz")) < len(fuzzed) == 400
    assert not errors("torn-tail") and not errors("zeros-after-tail") and rows("torn-tail")
    assert any("CRC mismatch; only the last segment" in e for e in errors("crc-middle"))
    assert any("a valid batch follows" in e for e in errors("valid-batch-after"))
    assert any("never torn" in e for e in errors("snapshot-crc"))
    assert any("missing data" in e for e in errors("missing-segment"))
    assert any("has magic" in e for e in errors("bad-magic-split"))
    assert any("short batch header" in e for e in errors("short-header-non-last"))
    assert any("expected" in e for e in errors("base-offset-gap"))
    assert any("is below the previous" in e for e in errors("epoch-down"))
    assert "storage_error" in lines("missing-path")[0]["plan_error"]
    assert any("the file is gone" in e for e in errors("file-gone"))
    assert any("the file is gone" in e for e in errors("segment-gone"))
    storage = [lines(f"meta-properties-{n}")[0] for n in [*META_PROPERTIES, "meta-dir"]]
    assert sum("storage_error" in s for s in storage) >= 20
    assert sum(s.get("node") is not None for s in storage) >= 8
