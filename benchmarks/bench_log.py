"""MetadataLog throughput against the bare system calls on the same disk.

(a) durable appends: ``append_as_leader`` of a 16 KiB batch + ``flush()`` per batch, versus a loop
    of ``os.write`` + ``os.fdatasync`` of 16 KiB in the same directory (target: >= 0.8 of bare);
(b) sequential read of the whole log through ``read()``, versus reading the segment files.

Run: ``PYTHONPATH=src python benchmarks/bench_log.py [--dir DIR] [--count N]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from kraft.records.batch import SimpleRecord, build_batch
from kraft.storage.log_dir import metadata_partition_dir
from kraft.storage.metadata_log import MetadataLog

BATCH_BYTES = 16 * 1024


def _batch() -> bytes:
    # One record whose value fills the batch to ~16 KiB.
    probe = build_batch([SimpleRecord(value=b"")])
    # Two more bytes of varint length once the value is over 63 bytes, one more past 8191.
    return build_batch([SimpleRecord(value=b"x" * (BATCH_BYTES - len(probe) - 4))])


def bench_bare_append(directory: Path, count: int, payload: bytes) -> float:
    path = directory / "bare.bin"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        start = time.perf_counter()
        for _ in range(count):
            os.write(fd, payload)
            os.fdatasync(fd)
        return time.perf_counter() - start
    finally:
        os.close(fd)
        os.unlink(path)


def bench_log_append(directory: Path, count: int, batch: bytes) -> tuple[float, MetadataLog]:
    log = MetadataLog(metadata_partition_dir(directory))
    log.append_as_leader(batch, epoch=1)  # the first append also creates the epoch checkpoint
    log.flush()
    start = time.perf_counter()
    for _ in range(count):
        log.append_as_leader(batch, epoch=1)
        log.flush()
    return time.perf_counter() - start, log


def bench_log_read(log: MetadataLog, max_bytes: int) -> tuple[float, int]:
    start = time.perf_counter()
    offset, total = log.start_offset(), 0
    end = log.end_offset()
    while offset < end:
        data = log.read(offset, max_bytes)
        total += len(data)
        # Each 16 KiB batch holds one record: the next offset is one past the batches read.
        offset += len(data) // len(_BATCH)
    return time.perf_counter() - start, total


def bench_bare_read(log: MetadataLog, chunk: int) -> tuple[float, int]:
    start = time.perf_counter()
    total = 0
    for path in log.segment_paths():
        with open(path, "rb", buffering=0) as f:
            while True:
                data = f.read(chunk)
                if not data:
                    break
                total += len(data)
    return time.perf_counter() - start, total


_BATCH = _batch()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--dir", help="directory on the disk to measure (default: a temp dir)")
    parser.add_argument("--count", type=int, default=2000, help="batches per run (default 2000)")
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--read-chunk", type=int, default=1 << 20, help="read size in bytes (default 1 MiB)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="bench-log-", dir=args.dir))
    try:
        assert len(_BATCH) == BATCH_BYTES, len(_BATCH)
        # The disk is shared and noisy: alternate the two loops and compare medians.
        bare_rates, log_rates = [], []
        log = None
        for _ in range(args.rounds):
            bare_rates.append(args.count / bench_bare_append(base, args.count, _BATCH))
            if log is not None:
                log.close()
                shutil.rmtree(metadata_partition_dir(base))
            log_s, log = bench_log_append(base, args.count, _BATCH)
            log_rates.append(args.count / log_s)
        assert log is not None
        bare_rate, log_rate = statistics.median(bare_rates), statistics.median(log_rates)
        print(f"durable append, {BATCH_BYTES} B batches, fsync per batch")
        print(f"  ({args.count} batches x {args.rounds} alternating rounds, medians; in {base}):")
        for name, rate in (("bare os.write+fdatasync", bare_rate), ("MetadataLog append+flush", log_rate)):
            print(f"  {name:<24}: {rate:10.0f} batches/s  {rate * BATCH_BYTES / 1e6:8.1f} MB/s")
        print(f"  ratio                   : {log_rate / bare_rate:10.2f}  (target >= 0.8)")
        ratios = " ".join(f"{lr / br:.2f}" for br, lr in zip(bare_rates, log_rates))
        print(f"  per-round ratios        : {ratios}")
        log.flush()
        # Warm the page cache, then alternate the two readers and compare medians.
        bench_bare_read(log, args.read_chunk)
        log_reads, raw_reads = [], []
        for _ in range(args.rounds):
            read_s, read_total = bench_log_read(log, args.read_chunk)
            raw_s, raw_total = bench_bare_read(log, args.read_chunk)
            assert read_total == raw_total, (read_total, raw_total)
            log_reads.append(read_total / read_s / 1e6)
            raw_reads.append(raw_total / raw_s / 1e6)
        raw_mbs, log_mbs = statistics.median(raw_reads), statistics.median(log_reads)
        print(f"sequential read of {raw_total / 1e6:.1f} MB (page cache), {args.read_chunk} B per call,")
        print(f"  {args.rounds} alternating rounds, medians:")
        print(f"  bare file read          : {raw_mbs:10.1f} MB/s")
        print(f"  MetadataLog.read        : {log_mbs:10.1f} MB/s")
        print(f"  ratio                   : {log_mbs / raw_mbs:10.2f}")
        log.close()
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
