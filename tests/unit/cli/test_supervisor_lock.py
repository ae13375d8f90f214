"""The lock a foreground `kraft cluster up` holds and its nodes watch."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest

from kraft.cli import supervisor_lock


def test_held_while_open_and_a_second_supervisor_is_refused(tmp_path: Path) -> None:
    path = tmp_path / supervisor_lock.LOCK_FILE
    assert not supervisor_lock.is_held(path)
    lock = supervisor_lock.hold(path)
    assert lock is not None
    try:
        assert supervisor_lock.is_held(path)
        with pytest.raises(supervisor_lock.SupervisorLockHeld):
            supervisor_lock.hold(path)
    finally:
        lock.close()
    assert not supervisor_lock.is_held(path)


def test_a_node_is_signalled_once_the_supervisor_lets_go(tmp_path: Path) -> None:
    path = tmp_path / supervisor_lock.LOCK_FILE
    got = threading.Event()
    previous = signal.signal(signal.SIGUSR1, lambda *_: got.set())
    lock = supervisor_lock.hold(path)
    assert lock is not None
    try:
        watcher = supervisor_lock.stop_when_released(path, sig=signal.SIGUSR1)
        assert watcher is not None
        assert not got.wait(0.3)  # the supervisor still runs
        lock.close()
        watcher.join(5)
        assert got.wait(5)
    finally:
        lock.close()
        signal.signal(signal.SIGUSR1, previous)


def test_a_missing_lock_file_means_no_supervisor(tmp_path: Path) -> None:
    got = threading.Event()
    previous = signal.signal(signal.SIGUSR1, lambda *_: got.set())
    try:
        watcher = supervisor_lock.stop_when_released(tmp_path / "gone.lock", sig=signal.SIGUSR1)
        assert watcher is not None
        watcher.join(5)
        assert got.wait(5)
    finally:
        signal.signal(signal.SIGUSR1, previous)
