"""Connection limits, as Kafka's ``ConnectionQuotas``: ``max.connections`` (across the node's
listeners) and ``max.connections.per.ip`` (with ``max.connections.per.ip.overrides``).

A connection over a limit is closed at accept, before a byte is read. Kafka never refuses the
inter-broker listener for ``max.connections`` (it would cut the cluster's own traffic), and we do
the same for the listeners named ``protected`` (the controller listeners and the inter-broker one);
the per-IP limit applies everywhere. Sans-IO bookkeeping; invariant: ``total`` and each per-host
count equal the connections acquired and not yet released.
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

UNLIMITED = 2**31 - 1  # Kafka's default for both limits (Int.MaxValue)


@dataclass(slots=True)
class ConnectionLimiter:
    max_connections: int = UNLIMITED
    max_per_ip: int = UNLIMITED
    per_ip_overrides: Mapping[str, int] = field(default_factory=dict)
    protected: frozenset[str] = frozenset()
    total: int = 0
    per_host: collections.Counter[str] = field(default_factory=collections.Counter)

    @classmethod
    def of(
        cls,
        *,
        max_connections: int = UNLIMITED,
        max_per_ip: int = UNLIMITED,
        per_ip_overrides: Mapping[str, int] | None = None,
        protected: Iterable[str] = (),
    ) -> ConnectionLimiter:
        return cls(max_connections, max_per_ip, dict(per_ip_overrides or {}), frozenset(protected))

    def try_acquire(self, listener: str, host: str) -> str | None:
        """Count a new connection; None if allowed, else why it must be closed (nothing counted)."""
        limit = self.per_ip_overrides.get(host, self.max_per_ip)
        if self.per_host[host] >= limit:
            return f"too many connections from {host} (max.connections.per.ip={limit})"
        if listener not in self.protected and self.total >= self.max_connections:
            return f"too many connections (max.connections={self.max_connections})"
        self.total += 1
        self.per_host[host] += 1
        return None

    def release(self, host: str) -> None:
        self.total -= 1
        self.per_host[host] -= 1
        if self.per_host[host] <= 0:
            del self.per_host[host]
