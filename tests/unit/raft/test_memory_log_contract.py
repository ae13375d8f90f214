"""The shared ReplicatedLog contract, run against MemoryLog."""

from __future__ import annotations

import pytest
from log_contract import CONTRACT_CHECKS, ContractCheck, LogFactory

from kraft.raft.log import MemoryLog, ReplicatedLog


def _crash_and_reopen(log: ReplicatedLog) -> ReplicatedLog:
    assert isinstance(log, MemoryLog)
    log.crash()
    return log


@pytest.mark.parametrize("check", CONTRACT_CHECKS, ids=lambda c: c.__name__)
def test_memory_log_contract(check: ContractCheck) -> None:
    check(LogFactory(new=MemoryLog, crash_and_reopen=_crash_and_reopen))
