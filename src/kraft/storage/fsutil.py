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
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
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


def atomic_write(path: str | os.PathLike[str], data: bytes, *, tmp_suffix: str = ".tmp") -> None:
    """Durably replace ``path`` by ``data``.

    Raises:
        OSError: the write, fsync or rename failed; ``path`` is unchanged and the temp file is gone.
    """
    target = Path(path)
    tmp = target.with_name(target.name + tmp_suffix)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            write_all(fd, data)
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
    fsync_dir(target.parent)


def pwrite_all(fd: int, data: bytes | bytearray | memoryview, position: int) -> None:
    """``os.pwrite`` until every byte is written at ``position``."""
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, position)
        view = view[n:]
        position += n
