"""Recovery of a partition log after kill -9: time to open 1 GiB of unflushed log.

Writes ``--gib`` GiB of batches (``--batch-records`` records of ``--value-bytes`` each, from 8
idempotent producers) into one partition log with Kafka's default ``segment.bytes`` (1 GiB), then
opens it as a broker does after a kill -9 that left everything unflushed: no clean-shutdown marker,
recovery point 0, no producer snapshot (the one ``close`` writes is deleted), stale indexes. Every
batch is then re-validated (header, CRC-32C, offsets, epochs), the indexes rebuilt and the producer
state replayed. The page cache keeps the bytes (a process kill does not drop it), as here.

Printed beside two baselines from the same run over the same files: reading them (1 MiB reads)
and reading them plus CRC-32C over every byte (the floor of any validation).

    python benchmarks/bench_recovery.py [--gib 1] [--batch-records 16] [--value-bytes 1024]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parent.parent / "src"))  # after PYTHONPATH (a compiled build)

from crc32c import crc32c

from kraft.records.batch import SimpleRecord, build_batch
from kraft.storage.partition_log import PartitionLog

TOPIC_ID = uuid.UUID(int=7, version=4)
SEGMENT_BYTES = 1 << 30
PRODUCERS = 8


def build(root: Path, target_bytes: int, batch_records: int, value_bytes: int) -> tuple[int, int]:
    """The log: returns (log end offset, batches)."""
    log = PartitionLog(root, "bench", 0, TOPIC_ID, segment_bytes=SEGMENT_BYTES)
    value = b"v" * value_bytes
    sequences = [0] * PRODUCERS
    batches = written = 0
    while written < target_bytes:
        producer = batches % PRODUCERS
        ts = 1_000 + batches
        batch = build_batch(
            [SimpleRecord(value=value, timestamp=ts) for _ in range(batch_records)],
            timestamp_ms=ts,
            producer_id=100 + producer,
            producer_epoch=0,
            base_sequence=sequences[producer],
        )
        sequences[producer] += batch_records
        log.append_as_leader(batch, 1, now_ms=10_000_000, log_append_time=False)
        written += len(batch)
        batches += 1
    end = log.log_end_offset
    log.close()
    return end, batches


def read_all(files: list[Path], *, crc: bool) -> float:
    started = time.perf_counter()
    for path in files:
        with path.open("rb", buffering=0) as f:
            while chunk := f.read(1 << 20):
                if crc:
                    crc32c(chunk)
    return time.perf_counter() - started


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gib", type=float, default=1.0)
    ap.add_argument("--batch-records", type=int, default=16)
    ap.add_argument("--value-bytes", type=int, default=1024)
    ap.add_argument("--rounds", type=int, default=2, help="opens timed (best kept)")
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="kraft-recovery-"))
    try:
        t0 = time.perf_counter()
        end, batches = build(root, int(args.gib * (1 << 30)), args.batch_records, args.value_bytes)
        directory = root / "bench-0"
        segments = sorted(directory.glob("*.log"))
        size = sum(p.stat().st_size for p in segments)
        print(
            f"log: {size / (1 << 30):.2f} GiB, {batches:,} batches of {args.batch_records} x "
            f"{args.value_bytes} B, {end:,} records, {len(segments)} segment(s) "
            f"(written in {time.perf_counter() - t0:.0f} s)"
        )
        read_s = min(read_all(segments, crc=False) for _ in range(2))
        crc_s = min(read_all(segments, crc=True) for _ in range(2))
        best = float("inf")
        for _ in range(args.rounds):
            for path in directory.glob("*.snapshot"):
                path.unlink()  # a kill -9 leaves none behind the last roll
            started = time.perf_counter()
            log = PartitionLog(root, "bench", 0, None, segment_bytes=SEGMENT_BYTES, recovery_point=0)
            elapsed = time.perf_counter() - started
            assert log.log_end_offset == end and len(log.producers) == PRODUCERS
            log.close()
            best = min(best, elapsed)
        gib = size / (1 << 30)
        rows = [
            ("open after kill -9 (recovery point 0, no snapshot)", best),
            ("baseline: read the files", read_s),
            ("baseline: read + CRC-32C", crc_s),
        ]
        for name, seconds in rows:
            print(f"{name:51s} {seconds:6.2f} s  ({gib / seconds:.2f} GiB/s)")
        print(f"ratio open / read {best / read_s:.1f}x, open / (read + CRC) {best / crc_s:.1f}x")
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
