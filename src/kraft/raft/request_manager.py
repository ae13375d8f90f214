"""Per-destination request pacing: at most one request in flight to each destination.

READY -> AWAITING_RESPONSE (correlation id, deadline) -> READY on a good response or a timeout,
BACKING_OFF (until ``retry_backoff_ms`` later) after a failed one. ``reset`` forgets everything;
the core calls it on every role transition so that responses to old requests are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class _Connection:
    correlation_id: int | None = None
    request_deadline_ms: int = 0
    backoff_until_ms: int = 0


class RequestManager:
    def __init__(self, *, request_timeout_ms: int, retry_backoff_ms: int) -> None:
        self._request_timeout_ms = request_timeout_ms
        self._retry_backoff_ms = retry_backoff_ms
        self._connections: dict[int, _Connection] = {}

    def is_ready(self, destination: int, now_ms: int) -> bool:
        conn = self._connections.get(destination)
        if conn is None:
            return True
        if conn.correlation_id is not None:
            if now_ms >= conn.request_deadline_ms:
                # Timed out: forget it (a late response will not match) and allow a retry.
                conn.correlation_id = None
                return True
            return False
        return now_ms >= conn.backoff_until_ms

    def is_awaiting(self, destination: int, now_ms: int) -> bool:
        conn = self._connections.get(destination)
        return conn is not None and conn.correlation_id is not None and now_ms < conn.request_deadline_ms

    def has_any_inflight(self, now_ms: int) -> bool:
        # ``is_awaiting`` of every destination, without a call per destination (polled every poll).
        for conn in self._connections.values():
            if conn.correlation_id is not None and now_ms < conn.request_deadline_ms:
                return True
        return False

    def on_request_sent(self, destination: int, correlation_id: int, now_ms: int) -> None:
        self._connections[destination] = _Connection(correlation_id, now_ms + self._request_timeout_ms, 0)

    def is_response_expected(self, source: int, correlation_id: int) -> bool:
        conn = self._connections.get(source)
        return conn is not None and conn.correlation_id == correlation_id

    def on_response(self, source: int, *, success: bool, now_ms: int) -> None:
        conn = self._connection(source)
        conn.correlation_id = None
        conn.backoff_until_ms = now_ms if success else now_ms + self._retry_backoff_ms

    def backoff(self, destination: int, now_ms: int) -> None:
        conn = self._connection(destination)
        conn.correlation_id = None
        conn.backoff_until_ms = now_ms + self._retry_backoff_ms

    def next_event_ms(self, now_ms: int) -> int | None:
        """Earliest time a destination becomes ready again (for ``wake_at_ms``)."""
        earliest: int | None = None
        for conn in self._connections.values():
            t = conn.request_deadline_ms if conn.correlation_id is not None else conn.backoff_until_ms
            # Only times to come: a request that timed out in the past (nobody asked is_ready since)
            # is ready now, and must not hide the next backoff to end.
            if t > now_ms and (earliest is None or t < earliest):
                earliest = t
        return earliest

    def _connection(self, destination: int) -> _Connection:
        # ``setdefault(destination, _Connection())`` without building a _Connection every time.
        conn = self._connections.get(destination)
        if conn is None:
            conn = self._connections[destination] = _Connection()
        return conn

    def reset(self) -> None:
        self._connections.clear()
