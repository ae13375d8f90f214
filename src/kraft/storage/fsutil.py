"""File-system helpers shared by the storage modules: durable atomic replace and directory fsync.

Rule: a file that other code reads by name is replaced only through ``atomic_write`` (temp file,
fsync, ``os.replace``, fsync of the parent directory), so a crash leaves either the old or the new
content, never a mix. A failure removes the temp file and leaves the old file untouched.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Make creations, renames and deletions of entries in ``directory`` durable."""
    _fsync_path(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))


def fsync_file(path: str | os.PathLike[str]) -> None:
    """Make a file's content durable (one written earlier without a sync)."""
    _fsync_path(path, os.O_RDONLY)


def _fsync_path(path: str | os.PathLike[str], flags: int) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes | bytearray | memoryview) -> None:
    """``os.write`` until every byte is written (a regular-file write may be short)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def atomic_write(
    path: str | os.PathLike[str], data: bytes, *, tmp_suffix: str = ".tmp", durable: bool = True
) -> None:
    """Durably replace ``path`` by ``data``; ``durable=False``: the same replace without its two
    fsyncs (of the file and of the directory), which the caller then owes (``fsync_file``,
    ``fsync_dir``) before relying on the content surviving a power loss.

    Raises:
        OSError: the write, fsync or rename failed; ``path`` is unchanged and the temp file is gone.
    """
    target = Path(path)
    tmp = target.with_name(target.name + tmp_suffix)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    # After the rename the new content is the file's; the directory fsync makes the rename itself
    # survive a power loss.
    if durable:
        fsync_dir(target.parent)


def pwrite_all(fd: int, data: bytes | bytearray | memoryview, position: int) -> None:
    """``os.pwrite`` until every byte is written at ``position``."""
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, position)
        view = view[n:]
        position += n
