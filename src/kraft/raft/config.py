"""Quorum configuration as the core consumes it (already parsed and validated by the shell)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kraft.common.errors import ConfigError
from kraft.raft.types import Endpoint

# Fixed constants of Kafka's raft implementation (spec section 5).
CHECK_QUORUM_TIMEOUT_FACTOR = 1.5
OBSERVER_SESSION_TIMEOUT_MS = 300_000
MAX_PENDING_BATCHES = 10
LEGACY_ELECTION_BACKOFF_BASE_MS = 100  # 3.9 candidate backoff base (pre-vote disabled)


@dataclass(frozen=True, slots=True, kw_only=True)
class QuorumConfig:
    """Static voters and timers (``controller.quorum.*``)."""

    voters: Mapping[int, tuple[Endpoint, ...]]
    bootstrap_servers: tuple[Endpoint, ...] = ()
    election_timeout_ms: int = 1000
    fetch_timeout_ms: int = 2000
    election_backoff_max_ms: int = 1000
    append_linger_ms: int = 25
    request_timeout_ms: int = 2000
    retry_backoff_ms: int = 20
    fetch_max_wait_ms: int = 500
    max_batch_size_bytes: int = 8 * 1024 * 1024
    max_fetch_bytes: int = 8 * 1024 * 1024
    fetch_snapshot_max_bytes: int = 8 * 1024 * 1024
    pre_vote_enabled: bool = True
    check_quorum_enabled: bool = True

    def __post_init__(self) -> None:
        for name in (
            "election_timeout_ms",
            "fetch_timeout_ms",
            "election_backoff_max_ms",
            "append_linger_ms",
            "request_timeout_ms",
            "retry_backoff_ms",
            "fetch_max_wait_ms",
        ):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, got {getattr(self, name)}")
        for name in ("max_batch_size_bytes", "max_fetch_bytes", "fetch_snapshot_max_bytes"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"{name} must be > 0, got {getattr(self, name)}")
        for voter_id in self.voters:
            if voter_id < 0:
                raise ConfigError(f"voter ids must be >= 0, got {voter_id}")

    @property
    def voter_ids(self) -> frozenset[int]:
        return frozenset(self.voters)

    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    @property
    def check_quorum_timeout_ms(self) -> int:
        return int(self.fetch_timeout_ms * CHECK_QUORUM_TIMEOUT_FACTOR)
