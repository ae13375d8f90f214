"""The process's open-file limit, raised at start as the JVM raises Kafka's.

A broker holds a descriptor per log segment (its data files) and per connection: 10,000 partitions
need more than 10,000. Linux commonly starts processes with a soft ``RLIMIT_NOFILE`` of 1,024 under
a far higher hard limit; HotSpot raises the soft limit to the hard one at start (``MaxFDLimit``, on
by default), so a Kafka broker runs with the hard limit without anyone asking. ``kraft
server-start`` does the same. Raising the hard limit itself stays the operator's (``ulimit -Hn``,
systemd's ``LimitNOFILE``), as for Kafka.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

# A hard limit of "unlimited" cannot be the soft one for open files on Linux (it must not exceed
# fs.nr_open, 1,048,576 by default): the soft limit goes there instead.
_UNLIMITED_TARGET = 1 << 20


def raise_open_file_limit() -> tuple[int, int] | None:
    """Raise the soft open-file limit to the hard one; returns (before, after) when it changed."""
    try:
        import resource
    except ImportError:  # not a Unix
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = _UNLIMITED_TARGET if hard == resource.RLIM_INFINITY else hard
    if soft != resource.RLIM_INFINITY and soft >= target:
        return None
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    except (ValueError, OSError) as e:
        log.warning("could not raise the open-file limit from %d to %d: %s", soft, target, e)
        return None
    log.info(
        "raised the open-file limit from %d to %d (the hard limit), as the JVM does for Kafka", soft, target
    )
    return soft, target


def default_max_open_segment_files() -> int:
    """``log.max.open.segment.files`` when it is -1: the open-file limit (soft, as raised at start)
    less what the rest of the process needs (connections, index files written at a roll or close,
    the metadata log, checkpoints): a quarter of it, at least 1,024; at least 64 in all."""
    try:
        import resource
    except ImportError:  # not a Unix: no limit to stay under
        return 1 << 20
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = _UNLIMITED_TARGET
    return max(64, soft - max(1024, soft // 4))
