"""One log line per window for bad connections, not one per connection.

A server under attack (or beside a misconfigured client that reconnects in a loop) must keep its
log readable: 5,100 fuzzed connections used to write 3,824 WARNING lines. The first bad connection
with a given detail in a window is logged in full, at once (a misconfiguration, or each distinct
kind of bad request, shows straight away), up to ``DETAILED_PER_WINDOW`` of them; the rest are
counted by reason and peer host and summed up in one line when the window (``interval_s``, 10 s by
default) closes.

Sans-IO: the caller passes the time and logs the lines returned; nothing here reads a clock.
Invariant: at most ``DETAILED_PER_WINDOW`` detailed lines plus one summary line per window, whatever
the number of bad connections.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

DEFAULT_INTERVAL_S = 10.0
# Distinct details logged in full per window; a repeat, or anything past these, is only counted.
DETAILED_PER_WINDOW = 10
# Peers named per reason in a summary line; the rest are counted as "others".
_PEERS_PER_REASON = 5


def peer_host(peer: str) -> str:
    """``1.2.3.4:5678`` -> ``1.2.3.4``; ``[::1]:5678`` or ``::1:5678`` -> ``::1``."""
    host, sep, port = peer.rpartition(":")
    if not sep or not port.isdigit():
        return peer
    return host[1:-1] if host.startswith("[") else host


@dataclass(slots=True)
class BadConnectionLog:
    interval_s: float = DEFAULT_INTERVAL_S
    window_start: float | None = None
    counts: collections.Counter[tuple[str, str]] = field(default_factory=collections.Counter)
    examples: dict[str, str] = field(default_factory=dict)
    total: int = 0
    detailed: set[str] = field(default_factory=set)  # details logged in full in this window

    def record(self, now_s: float, reason: str, peer: str, detail: str) -> list[str]:
        """A connection closed for ``reason`` (a short category); returns the lines to log now."""
        lines = self.flush(now_s)
        if self.window_start is None:
            self.window_start = now_s
            self.total = 0
        if detail not in self.detailed and len(self.detailed) < DETAILED_PER_WINDOW:
            self.detailed.add(detail)
            lines.append(f"closing connection from {peer}: {reason}: {detail}")
            self.total += 1
            return lines
        self.counts[(reason, peer_host(peer))] += 1
        self.examples.setdefault(reason, detail)
        self.total += 1
        return lines

    def flush(self, now_s: float, *, force: bool = False) -> list[str]:
        """The summary line, if the window is over (or ``force``); opens a new quiet period."""
        if self.window_start is None or (not force and now_s - self.window_start < self.interval_s):
            return []
        lines = []
        if self.counts:
            by_reason: dict[str, list[tuple[str, int]]] = collections.defaultdict(list)
            for (reason, host), n in sorted(self.counts.items()):
                by_reason[reason].append((host, n))
            parts = []
            for reason, hosts in sorted(by_reason.items()):
                hosts.sort(key=lambda hn: (-hn[1], hn[0]))
                named = ", ".join(f"{h} x{n}" for h, n in hosts[:_PEERS_PER_REASON])
                others = sum(n for _, n in hosts[_PEERS_PER_REASON:])
                if others:
                    named += f", others x{others}"
                total = sum(n for _, n in hosts)
                parts.append(f"{reason} x{total} ({named}; e.g. {self.examples[reason]})")
            lines.append(
                f"closed {sum(self.counts.values())} more bad connection(s) in the last "
                f"{now_s - self.window_start:.0f} s: " + "; ".join(parts)
            )
            # A new window starts now (its first distinct details are logged in full again).
            self.window_start = now_s
        else:
            self.window_start = None
        self.counts.clear()
        self.examples.clear()
        self.detailed.clear()
        return lines
