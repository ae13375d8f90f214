"""Codec throughput: encode + decode of a Fetch v17 response carrying 1 MiB of record batches.

Run ``python benchmarks/bench_codec.py`` (with ``PYTHONPATH=src``). Prints MB/s for our codec and,
measured in the same run on the same message, for kafka-python 3.0.12, with the ratio. Two shapes:
one partition with all the batches, and 64 partitions sharing them (more struct overhead).
Reported, not a gate.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1] / "src"))  # after PYTHONPATH (a compiled build)

from kraft.protocol.api import decode_response, encode_response
from kraft.protocol.messages import fetch
from kraft.records.batch import SimpleRecord, build_batch

TARGET_BYTES = 1 << 20
VERSION = 17


def _batches(total: int) -> list[bytes]:
    out: list[bytes] = []
    size = 0
    offset = 0
    while size < total:
        records = [SimpleRecord(key=b"k%d" % i, value=bytes(200)) for i in range(20)]
        batch = build_batch(
            records, base_offset=offset, partition_leader_epoch=3, timestamp_ms=1_700_000_000_000
        )
        out.append(batch)
        size += len(batch)
        offset += len(records)
    return out


def _response(batches: list[bytes], partitions: int) -> Any:
    cls = fetch.RESPONSE.cls
    topic_cls = cls.FetchableTopicResponse
    part_cls = topic_cls.PartitionData
    per_part = [b"".join(batches[i::partitions]) for i in range(partitions)]
    parts = [
        part_cls(
            partition_index=i,
            high_watermark=10_000,
            last_stable_offset=10_000,
            log_start_offset=0,
            current_leader=part_cls.LeaderIdAndEpoch(leader_id=1, leader_epoch=3),
            records=records,
        )
        for i, records in enumerate(per_part)
    ]
    topic = topic_cls(topic_id=uuid.UUID(int=0x1234), partitions=parts)
    return cls(responses=[topic])


def _time(fn: Callable[[], object], min_seconds: float = 1.0) -> float:
    """Best seconds per call over repeated rounds."""
    fn()
    best = float("inf")
    deadline = time.perf_counter() + min_seconds
    rounds = 0
    while rounds < 5 or time.perf_counter() < deadline:
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
        rounds += 1
    return best


def _bench(partitions: int) -> None:
    batches = _batches(TARGET_BYTES)
    body = _response(batches, partitions)
    payload = encode_response(fetch.API, VERSION, 1, body)
    assert decode_response(payload, fetch.API, VERSION) == (1, body)
    record_bytes = sum(len(b) for b in batches)

    def ours() -> None:
        data = encode_response(fetch.API, VERSION, 1, body)
        decode_response(data, fetch.API, VERSION)

    ours_s = _time(ours)
    line = f"{partitions:>3} partition(s), {record_bytes / 1e6:.2f} MB of batches, {len(payload)} bytes: "
    line += f"kraft {record_bytes / ours_s / 1e6:8.1f} MB/s ({ours_s * 1e3:.3f} ms)"

    try:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "unit" / "protocol"))
        from kafka.protocol.consumer import FetchResponse
        from kafka_python_bridge import to_kp
    except ImportError as e:  # kafka-python is a test dependency
        print(line + f"  (kafka-python unavailable: {e})")
        return
    kp_msg = to_kp(fetch.RESPONSE, body, FetchResponse, VERSION)
    kp_msg.with_header(correlation_id=1)
    kp_bytes = bytes(kp_msg.encode(header=True))
    assert kp_bytes == payload, "kafka-python must produce the same bytes for the comparison to be fair"

    def theirs() -> None:
        data = kp_msg.encode(header=True)
        FetchResponse.decode(data, version=VERSION, header=True)

    kp_s = _time(theirs)
    line += f" | kafka-python {record_bytes / kp_s / 1e6:8.1f} MB/s ({kp_s * 1e3:.3f} ms)"
    line += f" | kraft/kafka-python speed ratio {kp_s / ours_s:.2f}x"
    print(line)


def main() -> int:
    print(f"Fetch v{VERSION} response, encode + decode (header included), best of >= 1 s per case")
    for partitions in (1, 64):
        _bench(partitions)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
