"""Open time of a data partition's log with and without its index files and producer snapshots.

Writes a log of N one-record batches (idempotent producers, 100-byte values, 4 MiB segments),
closes it cleanly, then times ``PartitionLog`` opens:

* clean: after a clean shutdown (indexes and the snapshot at the log end trusted: no scan);
* recovery point at the end: an unclean stop whose recovery point is the log end (the last
  segment is scanned, the rest open from their indexes; producer state from the last snapshot);
* full scan: recovery point 0 (every segment scanned, indexes rebuilt), snapshots kept;
* no snapshots: clean, but the ``.snapshot`` files deleted (the producer state replays the log);
* neither: recovery point 0 and no snapshots (what kraft did before the index files).

    PYTHONPATH=src python benchmarks/partition_log_open.py [records]
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

from kraft.records.batch import SimpleRecord, build_batch
from kraft.storage.partition_log import PartitionLog

TOPIC_ID = uuid.UUID(int=1, version=4)
SEGMENT_BYTES = 4 * 1024 * 1024


def build(log_dir: Path, records: int) -> int:
    log = PartitionLog(log_dir, "bench", 0, TOPIC_ID, segment_bytes=SEGMENT_BYTES)
    sequences = [0] * 8
    value = b"v" * 100
    for i in range(records):
        producer = i % 8
        batch = build_batch(
            [SimpleRecord(value=value, timestamp=1_000 + i)],
            timestamp_ms=1_000 + i,
            producer_id=100 + producer,
            producer_epoch=0,
            base_sequence=sequences[producer],
        )
        sequences[producer] += 1
        log.append_as_leader(batch, 1, now_ms=10_000_000, log_append_time=False)
    log.flush()
    end = log.log_end_offset
    log.close()
    return end


def timed_open(log_dir: Path, **kwargs: object) -> tuple[float, PartitionLog]:
    start = time.perf_counter()
    log = PartitionLog(log_dir, "bench", 0, None, segment_bytes=SEGMENT_BYTES, **kwargs)  # type: ignore[arg-type]
    return time.perf_counter() - start, log


def main() -> None:
    records = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    root = Path(tempfile.mkdtemp(prefix="kraft-open-"))
    try:
        end = build(root, records)
        directory = root / "bench-0"
        segments = len(list(directory.glob("*.log")))
        size = sum(p.stat().st_size for p in directory.glob("*.log"))
        print(f"{records} records, {segments} segments, {size / 1e6:.1f} MB")
        cases: list[tuple[str, dict[str, object], bool]] = [
            ("clean shutdown (indexes + snapshot)", {"clean_shutdown": True}, False),
            ("recovery point = log end", {"recovery_point": end}, False),
            ("full scan (recovery point 0)", {"recovery_point": 0}, False),
            ("clean, no snapshots", {"clean_shutdown": True}, True),
            ("full scan, no snapshots", {"recovery_point": 0}, True),
        ]
        for name, kwargs, drop_snapshots in cases:
            if drop_snapshots:
                for path in directory.glob("*.snapshot"):
                    path.unlink()
            best = float("inf")
            for _ in range(3):
                elapsed, log = timed_open(root, **kwargs)
                assert log.log_end_offset == end and len(log.producers) == 8
                log.close()  # writes a snapshot at the end again
                if drop_snapshots:
                    for path in directory.glob("*.snapshot"):
                        path.unlink()
                best = min(best, elapsed)
            print(f"{name:40s} {best * 1000:9.1f} ms")
    finally:
        shutil.rmtree(root)


if __name__ == "__main__":
    main()
