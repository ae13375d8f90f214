"""Denied requests in the log, one INFO line each in Kafka's authorizer shape, rate-limited.

Kafka's ``StandardAuthorizerData.logAuditMessage`` writes, for a request that asked for a resource
and was refused::

    Principal = User:alice is Denied operation = READ from host = 10.0.0.7 on resource =
    Topic:LITERAL:payments for request = Fetch with resourceRefCount = 1 based on rule DefaultDeny

kraft writes the same line (logger ``kraft.authorizer``), but a client retrying a refused request in
a loop must not flood the log: at most ``max_lines`` lines per ``window_ms`` window of the node's
clock; the denials beyond that are counted and summed up in one line when the next window opens.

Sans-IO: time comes in as ``now_ms``; the only effect is ``logging``.
"""

from __future__ import annotations

import logging
from typing import Final

from kraft.common.principal import KafkaPrincipal
from kraft.security.acls import AclOperation, ResourceType, resource_type_display
from kraft.security.authorizer import Decision

log = logging.getLogger("kraft.authorizer")

DEFAULT_MAX_LINES: Final = 100
DEFAULT_WINDOW_MS: Final = 10_000


def denial_line(
    principal: KafkaPrincipal,
    host: str,
    operation: AclOperation,
    resource_type: ResourceType,
    resource_name: str,
    api_name: str,
    decision: Decision,
) -> str:
    """Kafka's audit line for a denial (the pattern type of the asked-for resource is LITERAL)."""
    return (
        f"Principal = {principal} is Denied operation = {operation.name} from host = {host or 'unknown'} "
        f"on resource = {resource_type_display(resource_type)}:LITERAL:{resource_name} for request = "
        f"{api_name} with resourceRefCount = 1 based on rule {decision.describe_rule()}"
    )


class DenialLog:
    """Writes denial lines, at most ``max_lines`` per ``window_ms`` (see the module docstring)."""

    def __init__(self, *, max_lines: int = DEFAULT_MAX_LINES, window_ms: int = DEFAULT_WINDOW_MS) -> None:
        self.max_lines = max_lines
        self.window_ms = window_ms
        self._window_start_ms: int | None = None
        self._written = 0
        self._suppressed = 0
        self.total = 0  # every denial seen (a metric for tests and operators)

    def deny(self, now_ms: int, line: str) -> None:
        self.total += 1
        if self._window_start_ms is None or now_ms >= self._window_start_ms + self.window_ms:
            if self._suppressed:
                log.info(
                    "%d more authorization denial(s) were not logged in the last %d ms",
                    self._suppressed,
                    self.window_ms,
                )
            self._window_start_ms = now_ms
            self._written = 0
            self._suppressed = 0
        if self._written < self.max_lines:
            self._written += 1
            log.info("%s", line)
        else:
            self._suppressed += 1
