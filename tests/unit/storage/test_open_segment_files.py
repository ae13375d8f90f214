"""OpenSegmentFiles: the logs of a broker share a bound on their open segment files; a segment
closed to stay under it is reopened when it is next read, written or flushed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from partition_log_contract import TOPIC, TOPIC_ID, append, contents

from kraft.common.errors import KraftError
from kraft.storage.log_manager import LogManager
from kraft.storage.partition_log import PartitionLog
from kraft.storage.segment_log import OpenSegmentFiles, SegmentLog


def _open_log_files(directory: Path) -> int:
    """Descriptors of this process open on a ``.log`` file under ``directory``."""
    fd_dir = Path("/proc/self/fd")
    count = 0
    for entry in os.listdir(fd_dir):
        try:
            target = os.readlink(fd_dir / entry)
        except OSError:
            continue  # closed meanwhile (the listing's own descriptor)
        if target.startswith(str(directory)) and target.endswith(".log"):
            count += 1
    return count


needs_proc = pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc/self/fd")


@needs_proc
def test_logs_sharing_a_limit_keep_that_many_files_open_and_read_back_everything(tmp_path: Path) -> None:
    manager = LogManager([tmp_path], max_open_segment_files=3)
    files = manager.open_files
    assert files is not None
    logs = [manager.get_or_create(TOPIC, p, TOPIC_ID) for p in range(10)]
    for round_ in range(3):
        for p, log in enumerate(logs):
            append(log, f"{p}-{round_}".encode())
            assert _open_log_files(tmp_path) <= 3
    for p, log in enumerate(logs):
        assert [value for _, _, value in contents(log)] == [f"{p}-{r}".encode() for r in range(3)]
        assert _open_log_files(tmp_path) <= 3
    assert files.open_count == 3
    assert files.evicted > 0 and files.reopened > 0
    manager.close()
    assert _open_log_files(tmp_path) == 0
    reopened = LogManager([tmp_path], max_open_segment_files=3)
    for p in range(10):
        log = reopened.get(TOPIC, p)
        assert log is not None and log.log_end_offset == 3
    reopened.close()


def test_a_flush_after_the_file_was_closed_makes_the_appends_durable(tmp_path: Path) -> None:
    files = OpenSegmentFiles(1)
    first = PartitionLog(tmp_path, TOPIC, 0, TOPIC_ID, open_files=files)
    second = PartitionLog(tmp_path, TOPIC, 1, TOPIC_ID, open_files=files)
    append(first, b"kept")  # not flushed: in the page cache only
    append(second, b"other")  # opening and writing the second closed the first's file
    assert first.unflushed_messages == 1
    evicted = files.evicted
    first.flush()  # fdatasync through a reopened descriptor: the file's data, whoever wrote it
    assert files.evicted > evicted and first.unflushed_messages == 0
    store: SegmentLog = first._segments  # type: ignore[attr-defined]
    assert store.last_flushed_offset() == 1
    first.close()
    second.close()
    again = PartitionLog(tmp_path, TOPIC, 0, TOPIC_ID, open_files=files)
    assert [value for _, _, value in contents(again)] == [b"kept"]
    again.close()


def test_a_recently_used_segment_gets_a_second_chance(tmp_path: Path) -> None:
    files = OpenSegmentFiles(3)
    a, b, c = (PartitionLog(tmp_path, TOPIC, p, TOPIC_ID, open_files=files) for p in range(3))
    # A fourth: the hand clears the marks of all three (each just opened) and closes the oldest.
    d = PartitionLog(tmp_path, TOPIC, 3, TOPIC_ID, open_files=files)
    assert [_fd_of(x) >= 0 for x in (a, b, c, d)] == [False, True, True, True]
    append(b, b"b")  # b used since the hand passed it, c not
    e = PartitionLog(tmp_path, TOPIC, 4, TOPIC_ID, open_files=files)
    assert [_fd_of(x) >= 0 for x in (b, c, d, e)] == [True, False, True, True]
    assert files.evicted == 2 and files.reopened == 0
    append(a, b"a")  # a reopened to be written (and another closed)
    assert [value for _, _, value in contents(a)] == [b"a"]
    assert files.reopened == 1 and files.evicted == 3 and files.open_count == 3
    for log in (a, b, c, d, e):
        log.close()
    assert files.open_count == 0


def test_closing_logs_for_good_keeps_the_queue_bounded(tmp_path: Path) -> None:
    files = OpenSegmentFiles(1_000_000)
    for i in range(3_000):
        log = SegmentLog(tmp_path / f"p{i}", open_files=files, sync_new=False)
        log.close()
    assert files.open_count == 0
    assert len(files._clock) <= 1024 + 1  # stale entries swept once they outnumber the open ones


def test_a_limit_must_be_positive() -> None:
    with pytest.raises(KraftError, match="must be positive"):
        OpenSegmentFiles(0)


def _fd_of(log: PartitionLog) -> int:
    store: SegmentLog = log._segments  # type: ignore[attr-defined]
    return store._segments[-1]._fd  # type: ignore[attr-defined]
