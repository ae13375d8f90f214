"""Commit statistics for ``kraft test-raft-server`` and the quorum benchmark.

``Throttler`` paces appends to a target rate the way Kafka's TestRaftServer does (the n-th record is
due at start + n / rate; no catching up faster than that after a stall). ``WriteStats`` records, per
committed record, its commit latency (append call to commit notification, on the leader's clock)
and size, and summarises both a reporting window and the whole run: records/s, bytes/s and the
latency p50/p99/p99.9/max. Percentiles are exact (sorted samples), which is affordable at the rates
a Python quorum commits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


def percentile(sorted_values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile of already sorted values (0 for none)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(pct / 100.0 * len(sorted_values)))
    return float(sorted_values[min(rank, len(sorted_values)) - 1])


@dataclass(frozen=True, slots=True)
class Summary:
    records: int
    bytes: int
    duration_s: float
    records_per_s: float
    bytes_per_s: float
    latency_p50_ms: float
    latency_p99_ms: float
    latency_p999_ms: float
    latency_max_ms: float

    def to_json(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "bytes": self.bytes,
            "duration_s": round(self.duration_s, 3),
            "records_per_s": round(self.records_per_s, 1),
            "mb_per_s": round(self.bytes_per_s / 1e6, 3),
            "latency_ms": {
                "p50": round(self.latency_p50_ms, 2),
                "p99": round(self.latency_p99_ms, 2),
                "p999": round(self.latency_p999_ms, 2),
                "max": round(self.latency_max_ms, 2),
            },
        }

    def text(self) -> str:
        return (
            f"{self.records} records in {self.duration_s:.1f} s: {self.records_per_s:.1f} records/s, "
            f"{self.bytes_per_s / 1e6:.3f} MB/s; commit latency p50 {self.latency_p50_ms:.1f} ms, "
            f"p99 {self.latency_p99_ms:.1f} ms, p99.9 {self.latency_p999_ms:.1f} ms, "
            f"max {self.latency_max_ms:.1f} ms"
        )


def summarise(latencies_ms: Sequence[float], total_bytes: int, duration_s: float) -> Summary:
    ordered = sorted(latencies_ms)
    duration = max(duration_s, 1e-9)
    return Summary(
        records=len(ordered),
        bytes=total_bytes,
        duration_s=duration_s,
        records_per_s=len(ordered) / duration,
        bytes_per_s=total_bytes / duration,
        latency_p50_ms=percentile(ordered, 50),
        latency_p99_ms=percentile(ordered, 99),
        latency_p999_ms=percentile(ordered, 99.9),
        latency_max_ms=ordered[-1] if ordered else 0.0,
    )


@dataclass(slots=True)
class WriteStats:
    """Accumulates committed records; ``take_window`` returns and resets the current window."""

    started_s: float
    window_started_s: float = 0.0
    _all_latencies: list[float] = field(default_factory=list)
    _all_bytes: int = 0
    _window_latencies: list[float] = field(default_factory=list)
    _window_bytes: int = 0

    def __post_init__(self) -> None:
        self.window_started_s = self.started_s

    def record(self, latency_ms: float, size: int) -> None:
        self._all_latencies.append(latency_ms)
        self._all_bytes += size
        self._window_latencies.append(latency_ms)
        self._window_bytes += size

    @property
    def committed(self) -> int:
        return len(self._all_latencies)

    def take_window(self, now_s: float) -> Summary:
        summary = summarise(self._window_latencies, self._window_bytes, now_s - self.window_started_s)
        self._window_latencies = []
        self._window_bytes = 0
        self.window_started_s = now_s
        return summary

    def total(self, now_s: float) -> Summary:
        return summarise(self._all_latencies, self._all_bytes, now_s - self.started_s)

    def total_over(self, duration_s: float) -> Summary:
        """Everything recorded, with rates over ``duration_s`` (e.g. the time spent leading)."""
        return summarise(self._all_latencies, self._all_bytes, duration_s)


class Throttler:
    """Paces records to ``rate`` per second from ``reset`` time (Kafka's ThroughputThrottler)."""

    def __init__(self, rate: float, now_s: float) -> None:
        if rate <= 0:
            raise ValueError(f"rate must be positive, got {rate}")
        self.rate = rate
        self._start_s = now_s
        self._sent = 0

    def reset(self, now_s: float) -> None:
        self._start_s = now_s
        self._sent = 0

    def due(self, now_s: float) -> int:
        """How many records may be sent now to stay on schedule (marks them as sent)."""
        target = int((now_s - self._start_s) * self.rate)
        n = max(0, target - self._sent)
        self._sent += n
        return n

    def next_due_s(self) -> float:
        return self._start_s + (self._sent + 1) / self.rate
