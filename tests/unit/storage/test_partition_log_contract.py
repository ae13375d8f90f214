"""PartitionLog and MemoryPartitionLog against one contract, and against each other.

The contract (partition_log_contract.py) pins the behaviour; the differential test below drives both
twins through the same random operations (appends of every kind, truncations, retention, flushes,
crashes) and requires identical observable state after each, down to segment boundaries and bytes:
the simulator's memory twin must not drift from the file log.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from partition_log_contract import (
    CONTRACT_CHECKS,
    TOPIC,
    TOPIC_ID,
    ContractCheck,
    PartitionLogFactory,
    produce,
)

from kraft.common.errors import KraftError
from kraft.records.batch import iter_batch_headers
from kraft.storage.base_partition_log import MAX_TIMESTAMP, BasePartitionLog
from kraft.storage.memory_partition_log import MemoryPartitionLog
from kraft.storage.partition_log import PartitionLog


def file_factory(tmp_path: Path) -> PartitionLogFactory:
    counter = itertools.count()
    settings: dict[Path, dict[str, Any]] = {}

    def new(**kwargs: Any) -> BasePartitionLog:
        log = PartitionLog(tmp_path / f"logs{next(counter)}", TOPIC, 0, TOPIC_ID, **kwargs)
        settings[log.directory] = kwargs
        return log

    def crash_and_reopen(log: BasePartitionLog) -> BasePartitionLog:
        assert isinstance(log, PartitionLog)
        high_watermark, start = log.high_watermark, log.log_start_offset
        log.crash()
        return PartitionLog(
            log.directory.parent,
            TOPIC,
            0,
            TOPIC_ID,
            high_watermark=high_watermark,
            log_start_offset=start,
            **settings[log.directory],
        )

    return PartitionLogFactory(new=new, crash_and_reopen=crash_and_reopen)


def memory_factory() -> PartitionLogFactory:
    def crash_and_reopen(log: BasePartitionLog) -> BasePartitionLog:
        assert isinstance(log, MemoryPartitionLog)
        log.crash()
        return log

    return PartitionLogFactory(
        new=lambda **kwargs: MemoryPartitionLog(TOPIC, 0, TOPIC_ID, **kwargs),
        crash_and_reopen=crash_and_reopen,
    )


@pytest.mark.parametrize("check", CONTRACT_CHECKS, ids=lambda c: c.__name__)
def test_partition_log_meets_the_contract(check: ContractCheck, tmp_path: Path) -> None:
    check(file_factory(tmp_path))


@pytest.mark.parametrize("check", CONTRACT_CHECKS, ids=lambda c: c.__name__)
def test_memory_partition_log_meets_the_contract(check: ContractCheck) -> None:
    check(memory_factory())


# ---------------------------------------------------------------------------------------------- twins


def _state(log: BasePartitionLog, probe_timestamp: int) -> tuple[object, ...]:
    data = log.read(log.log_start_offset, 1 << 30, max_offset=log.log_end_offset)
    producers = sorted(
        (pid, e.producer_epoch, tuple(e.batches), e.last_timestamp) for pid, e in log.producers.items()
    )
    return (
        log.log_start_offset,
        log.log_end_offset,
        log.high_watermark,
        log.recovery_point,
        log.segment_base_offsets(),
        log.epoch_entries,
        log.size_in_bytes,
        data,
        producers,
        log.offset_for_timestamp(probe_timestamp, max_offset=log.log_end_offset),
        log.offset_for_timestamp(MAX_TIMESTAMP, max_offset=log.log_end_offset),
        [log.end_offset_for_epoch(e) for e in range(-1, 8)],
    )


class _Twins:
    """The same operation on both logs; the outcome (result or exception type) must agree."""

    def __init__(self, tmp_path: Path, rng: random.Random) -> None:
        self.rng = rng
        self.settings: dict[str, Any] = {
            "segment_bytes": rng.choice([200, 400, 1 << 20]),
            "segment_ms": 5_000,
        }
        self.tmp_path = tmp_path
        self.file: BasePartitionLog = PartitionLog(tmp_path, TOPIC, 0, TOPIC_ID, **self.settings)
        self.memory: BasePartitionLog = MemoryPartitionLog(TOPIC, 0, TOPIC_ID, **self.settings)

    def both(self, name: str, *args: Any, **kwargs: Any) -> object:
        outcomes = []
        for log in (self.file, self.memory):
            try:
                outcomes.append(getattr(log, name)(*args, **kwargs))
            except KraftError as e:
                outcomes.append(type(e))
        assert outcomes[0] == outcomes[1], (name, args, kwargs, outcomes)
        return outcomes[0]

    def crash(self) -> None:
        assert isinstance(self.file, PartitionLog) and isinstance(self.memory, MemoryPartitionLog)
        high_watermark, start = self.file.high_watermark, self.file.log_start_offset
        self.file.crash()
        self.file = PartitionLog(
            self.tmp_path,
            TOPIC,
            0,
            TOPIC_ID,
            high_watermark=high_watermark,
            log_start_offset=start,
            **self.settings,
        )
        self.memory.crash()


@pytest.mark.parametrize("seed", range(24))
def test_the_twins_agree_on_random_operations(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    twins = _Twins(tmp_path, rng)
    epoch = 1
    now_ms = 10_000
    sequences = {1: 0, 2: 0}
    for _ in range(70):
        now_ms += rng.randrange(0, 3_000)
        log = twins.memory
        op = rng.choices(
            [
                "append",
                "idempotent",
                "truncate",
                "flush",
                "hw",
                "retention",
                "start",
                "crash",
                "roll",
                "epoch",
            ],
            weights=[30, 12, 5, 6, 10, 6, 3, 4, 3, 3],
        )[0]
        if op == "append":
            values = [rng.randbytes(rng.randrange(1, 60)) for _ in range(rng.randrange(1, 4))]
            timestamps = [now_ms - rng.randrange(0, 20_000) for _ in values]
            twins.both(
                "append_as_leader",
                produce(*values, timestamps=timestamps),
                epoch,
                now_ms=now_ms,
                log_append_time=rng.random() < 0.2,
            )
        elif op == "idempotent":
            pid = rng.choice([1, 2])
            seq = sequences[pid] if rng.random() < 0.8 else rng.randrange(0, 10)
            count = rng.randrange(1, 3)
            outcome = twins.both(
                "append_as_leader",
                produce(*[b"p"] * count, producer_id=pid, producer_epoch=0, base_sequence=seq),
                epoch,
                now_ms=now_ms,
                log_append_time=False,
            )
            if not isinstance(outcome, type) and seq == sequences[pid]:
                sequences[pid] += count
        elif op == "truncate":
            target = rng.randrange(log.log_start_offset, log.log_end_offset + 1)
            twins.both("truncate_to", target)
            sequences = {pid: (e.last_seq + 1 if e.batches else 0) for pid, e in log.producers.items()} | {
                pid: 0 for pid in (1, 2) if pid not in log.producers
            }
        elif op == "flush":
            twins.both("flush", now_ms=now_ms)
        elif op == "hw":
            if rng.random() < 0.8:
                twins.both("update_high_watermark", rng.randrange(0, log.log_end_offset + 2))
            else:
                twins.both("set_high_watermark_after_truncation", rng.randrange(0, log.log_end_offset + 2))
        elif op == "retention":
            twins.both(
                "delete_old_segments",
                now_ms,
                rng.choice([-1, 0, 5_000, 15_000]),
                rng.choice([-1, 0, 300, 1_000]),
            )
        elif op == "start":
            twins.both("maybe_increment_log_start_offset", rng.randrange(0, log.high_watermark + 2))
        elif op == "crash":
            twins.crash()
            sequences = {
                pid: (e.last_seq + 1 if e.batches else 0) for pid, e in twins.memory.producers.items()
            }
            sequences = {1: sequences.get(1, 0), 2: sequences.get(2, 0)}
        elif op == "roll":
            twins.both("maybe_roll", now_ms)
        elif op == "epoch":
            epoch += 1
            twins.both("assign_epoch_start", epoch, log.log_end_offset)
        probe = now_ms - rng.randrange(0, 25_000)
        assert _state(twins.file, probe) == _state(twins.memory, probe), (seed, op)


def test_the_twins_start_empty_at_a_given_log_start_offset(tmp_path: Path) -> None:
    for log in (
        PartitionLog(tmp_path, TOPIC, 0, TOPIC_ID, log_start_offset=30),
        MemoryPartitionLog(TOPIC, 0, TOPIC_ID, log_start_offset=30),
    ):
        assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (30, 30, 30)
        info = log.append_as_leader(produce(b"a"), 0, now_ms=0, log_append_time=False)
        assert info.first_offset == 30
        assert [h.base_offset for _, h in iter_batch_headers(log.read(30, 100, max_offset=31))] == [30]
