"""MetadataLog against the shared ``ReplicatedLog`` contract, and MemoryLog beside it as a cross-check."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from log_contract import CONTRACT_CHECKS, ContractCheck, LogFactory

from kraft.raft.log import MemoryLog, ReplicatedLog
from kraft.storage.metadata_log import MetadataLog


def _file_factory(tmp_path: Path, segment_bytes: int) -> LogFactory:
    counter = itertools.count()

    def new() -> ReplicatedLog:
        return MetadataLog(
            tmp_path / f"log{next(counter)}" / "__cluster_metadata-0", segment_bytes=segment_bytes
        )

    def crash_and_reopen(log: ReplicatedLog) -> ReplicatedLog:
        assert isinstance(log, MetadataLog)
        log.crash()
        reopened = MetadataLog(log.directory, segment_bytes=segment_bytes)
        return reopened

    return LogFactory(new=new, crash_and_reopen=crash_and_reopen)


@pytest.mark.parametrize("check", CONTRACT_CHECKS, ids=lambda c: c.__name__)
def test_metadata_log_meets_the_contract(check: ContractCheck, tmp_path: Path) -> None:
    check(_file_factory(tmp_path, segment_bytes=1 << 20))


@pytest.mark.parametrize("check", CONTRACT_CHECKS, ids=lambda c: c.__name__)
def test_metadata_log_with_tiny_segments_meets_the_contract(check: ContractCheck, tmp_path: Path) -> None:
    # About one batch per segment: every multi-batch operation crosses segment boundaries.
    check(_file_factory(tmp_path, segment_bytes=100))


def _memory_crash(log: ReplicatedLog) -> ReplicatedLog:
    assert isinstance(log, MemoryLog)
    log.crash()
    return log


@pytest.mark.parametrize("check", CONTRACT_CHECKS, ids=lambda c: c.__name__)
def test_memory_log_meets_the_contract(check: ContractCheck) -> None:
    check(LogFactory(new=MemoryLog, crash_and_reopen=_memory_crash))
