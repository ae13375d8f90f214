"""The clean-shutdown marker: written into every log dir, read strictly, consumed at start."""

from __future__ import annotations

from pathlib import Path

from kraft.storage.clean_shutdown import CLEAN_SHUTDOWN_FILE, take_previous_broker_epoch, write_clean_shutdown


def dirs(tmp_path: Path, n: int = 2) -> list[Path]:
    out = [tmp_path / f"d{i}" for i in range(n)]
    for d in out:
        d.mkdir()
    return out


def test_a_clean_stop_is_read_once_then_the_next_start_is_unclean(tmp_path: Path) -> None:
    log_dirs = dirs(tmp_path)
    write_clean_shutdown(log_dirs, 1234)
    assert (log_dirs[0] / CLEAN_SHUTDOWN_FILE).read_text() == '{"version":0,"brokerEpoch":1234}'
    assert take_previous_broker_epoch(log_dirs) == 1234
    assert not any((d / CLEAN_SHUTDOWN_FILE).exists() for d in log_dirs)
    assert take_previous_broker_epoch(log_dirs) == -1


def test_a_missing_torn_or_disagreeing_marker_means_unclean(tmp_path: Path) -> None:
    log_dirs = dirs(tmp_path)
    write_clean_shutdown(log_dirs[:1], 7)
    assert take_previous_broker_epoch(log_dirs) == -1
    write_clean_shutdown(log_dirs, 7)
    (log_dirs[1] / CLEAN_SHUTDOWN_FILE).write_text('{"version":0,"brokerEp')
    assert take_previous_broker_epoch(log_dirs) == -1
    write_clean_shutdown(log_dirs[:1], 7)
    write_clean_shutdown(log_dirs[1:], 8)
    assert take_previous_broker_epoch(log_dirs) == -1
    (log_dirs[0] / CLEAN_SHUTDOWN_FILE).write_text('{"version":1,"brokerEpoch":7}')
    (log_dirs[1] / CLEAN_SHUTDOWN_FILE).write_text('{"version":1,"brokerEpoch":7}')
    assert take_previous_broker_epoch(log_dirs) == -1
    assert not any((d / CLEAN_SHUTDOWN_FILE).exists() for d in log_dirs)
