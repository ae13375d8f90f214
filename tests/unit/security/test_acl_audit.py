"""Denial lines: Kafka's audit shape, and a rate limit so that a client retrying in a loop cannot
flood the log."""

from __future__ import annotations

import logging

import pytest

from kraft.common.principal import KafkaPrincipal
from kraft.security.acls import AclOperation, ResourceType
from kraft.security.audit import DenialLog, denial_line
from kraft.security.authorizer import Authorizer, AuthorizerConfig


def test_the_line_has_kafkas_shape() -> None:
    decision = Authorizer.build(AuthorizerConfig(), ()).decide(
        KafkaPrincipal("User", "bob"), "10.0.0.7", AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, "tx"
    )
    line = denial_line(
        KafkaPrincipal("User", "bob"),
        "10.0.0.7",
        AclOperation.WRITE,
        ResourceType.TRANSACTIONAL_ID,
        "tx",
        "Produce",
        decision,
    )
    assert line == (
        "Principal = User:bob is Denied operation = WRITE from host = 10.0.0.7 on resource = "
        "TransactionalId:LITERAL:tx for request = Produce with resourceRefCount = 1 based on rule DefaultDeny"
    )


def test_at_most_max_lines_per_window_then_one_summary(caplog: pytest.LogCaptureFixture) -> None:
    audit = DenialLog(max_lines=3, window_ms=1000)
    with caplog.at_level(logging.INFO, logger="kraft.authorizer"):
        for i in range(1000):
            audit.deny(now_ms=i % 1000, line=f"denial {i}")  # all inside the first window
        audit.deny(now_ms=1000, line="next window")
    assert caplog.messages == [
        "denial 0",
        "denial 1",
        "denial 2",
        "997 more authorization denial(s) were not logged in the last 1000 ms",
        "next window",
    ]
    assert audit.total == 1001
