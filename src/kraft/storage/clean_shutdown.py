"""The clean-shutdown marker of a broker's log directories (KIP-966, spec 2.2).

A broker that stops cleanly writes ``.kafka_cleanshutdown`` = ``{"version":0,"brokerEpoch":N}``
into each of its log directories (Kafka's name and format). The next start reads the markers and
deletes them at once, so a crash after that start counts as unclean again; the epoch read is sent
as PreviousBrokerEpoch in BrokerRegistration, which is how the controller tells a clean restart
(ELR membership kept) from an unclean one (the broker leaves every ISR and ELR).

Reading is strict: the epoch counts only when every directory holds a readable marker with the
same epoch; a missing, torn or disagreeing marker means -1 (unclean). Erring towards "unclean"
only costs ELR membership; erring the other way could elect a replica that lost data.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from kraft.storage.fsutil import atomic_write, fsync_dir

log = logging.getLogger("kraft.storage.clean_shutdown")

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"


def write_clean_shutdown(log_dirs: Sequence[str | os.PathLike[str]], broker_epoch: int) -> None:
    """Durably write the marker into every log directory (the last thing a clean stop does)."""
    data = json.dumps({"version": 0, "brokerEpoch": broker_epoch}, separators=(",", ":")).encode()
    for directory in log_dirs:
        atomic_write(Path(directory) / CLEAN_SHUTDOWN_FILE, data)


def _read_one(path: Path) -> int | None:
    try:
        content = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        log.warning("ignoring unreadable clean-shutdown marker %s: %s", path, e)
        return None
    epoch = content.get("brokerEpoch") if isinstance(content, dict) else None
    if not isinstance(epoch, int) or isinstance(epoch, bool) or content.get("version") != 0:
        log.warning("ignoring clean-shutdown marker %s of unknown form: %r", path, content)
        return None
    return epoch


def has_clean_shutdown_marker(log_dir: str | os.PathLike[str]) -> bool:
    """Whether ``log_dir`` holds a readable marker (read, not taken): Kafka's ``LogManager`` then
    opens that directory's logs without recovery (``hadCleanShutdown``). The broker opens its logs
    before it takes the markers."""
    return _read_one(Path(log_dir) / CLEAN_SHUTDOWN_FILE) is not None


def take_previous_broker_epoch(log_dirs: Sequence[str | os.PathLike[str]]) -> int:
    """The broker epoch of the last clean shutdown, or -1; the markers are deleted durably."""
    epochs = [_read_one(Path(directory) / CLEAN_SHUTDOWN_FILE) for directory in log_dirs]
    for directory in log_dirs:
        path = Path(directory) / CLEAN_SHUTDOWN_FILE
        existed = path.exists()
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        if existed:
            fsync_dir(directory)
    if not epochs or any(e is None for e in epochs) or len(set(epochs)) != 1:
        return -1
    epoch = epochs[0]
    return -1 if epoch is None else epoch
