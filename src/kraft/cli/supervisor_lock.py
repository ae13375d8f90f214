"""A foreground ``kraft cluster up`` takes its nodes down with it, however it ends.

The supervisor holds an exclusive ``flock`` on ``DATA_DIR/supervisor.lock`` while it runs; each
node it starts (and each node ``kraft cluster start-node`` starts while it runs) gets
``--supervisor-lock PATH`` and waits in a thread for a shared lock on the same file. The kernel
drops the supervisor's lock when its process ends by any means (Ctrl-C, kill -9, a closed
terminal), the node's wait returns, and the node stops gracefully as on SIGTERM. A detached cluster
(``--detach``) holds no lock, so its nodes run until ``kraft cluster down``.

POSIX only (``fcntl``): elsewhere nothing is held and nodes do not watch.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import IO

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger("kraft.supervisor")

LOCK_FILE = "supervisor.lock"


class SupervisorLockHeld(Exception):
    """Another process (another foreground ``kraft cluster up``) holds the lock."""


def hold(path: Path) -> IO[bytes] | None:
    """Takes the exclusive lock; keep the returned file open for as long as the nodes should run.
    None where flock is not available."""
    if fcntl is None:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    f = open(path, "ab")  # noqa: SIM115 - held open on purpose
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        raise SupervisorLockHeld(f"{path} is locked by another process") from None
    return f


def is_held(path: Path) -> bool:
    """True while a supervisor holds the lock at ``path``."""
    if fcntl is None or not path.exists():
        return False
    with open(path, "rb") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        return False


def stop_when_released(
    path: Path, *, delay_s: float = 0.0, sig: int = signal.SIGTERM
) -> threading.Thread | None:
    """In a node: a daemon thread that sends ``sig`` to this process ``delay_s`` after nobody holds
    the lock (at once if the file is gone: its supervisor cleaned up or never ran). Controllers
    wait a little so that the brokers' controlled shutdown still finds them."""
    if fcntl is None:
        return None

    def wait() -> None:
        try:
            with open(path, "rb") as f:
                fcntl.flock(f.fileno(), fcntl.LOCK_SH)  # blocks while the supervisor runs
        except FileNotFoundError:
            pass
        log.info("the supervising `kraft cluster up` is gone (%s released): stopping", path)
        time.sleep(delay_s)
        with contextlib.suppress(ProcessLookupError):
            os.kill(os.getpid(), sig)

    thread = threading.Thread(target=wait, name="kraft-supervisor-watch", daemon=True)
    thread.start()
    return thread
